// strip.cu and vec16.cu on the CPU: strip_main KERNEL IN OUT WIDTH HEIGHT BORDER ROWS [SHIFT], KERNEL strip or
// vec16, IN the RGB bytes (row after row), OUT the output planes (Gx's then Gy's for the gradients), SHIFT (default
// 0) how many bytes past a 16-byte boundary the input starts (another library's array may start anywhere). Launches
// the grid the host launches — strip: src/gpu/patterns/strip.rs's 1D grid of 128-thread blocks over ⌈w / 16⌉ ·
// ⌈h / ROWS⌉ (band, group) pairs; vec16: src/gpu/patterns/vec16.rs's 32×4 blocks over groups of 16 pixels and rows
// — strip's blocks a block at a time, its threads together (EMU_BLOCK), vec16's one thread after another, the aligned form when the width is a multiple of 16 and the input starts on a 16-byte
// boundary, and fails if anything is read (through __ldg) outside the input or written past the output. Built with
// one kernel file (strip.cu defines STRIP_THREADS, vec16.cu does not); KERNEL must name it.
#include <cstdio>
#include <cstring>
#include <vector>
int main(int argc, char** argv) {
    if (argc < 8) { fprintf(stderr, "usage: strip_main strip|vec16 IN OUT WIDTH HEIGHT BORDER ROWS\n"); return 2; }
#ifdef STRIP_THREADS
    const char* built = "strip";
#else
    const char* built = "vec16";
#endif
    if (strcmp(argv[1], built) != 0) { fprintf(stderr, "built with %s.cu, not %s\n", built, argv[1]); return 2; }
    int w = atoi(argv[4]), h = atoi(argv[5]), border = atoi(argv[6]), rows = atoi(argv[7]);
    size_t shift = argc > 8 ? (size_t)atoi(argv[8]) % 16 : 0;
    size_t pixels = (size_t)w * h, planes = OUTPUT == OUTPUT_GRADIENTS ? 2 : 1;
    size_t in_bytes = 3 * pixels, out_bytes = planes * pixels * sizeof(out_t);
    // The input exactly (every read is checked against it), `shift` bytes past a 16-byte boundary; the output with a
    // 64-byte canary after it.
    std::vector<uint4> in_words((shift + in_bytes) / 16 + 1);
    std::vector<unsigned char> out(out_bytes + 64, 0xAB);
    u8* rgb = reinterpret_cast<u8*>(in_words.data()) + shift;
    FILE* fi = fopen(argv[2], "rb");
    if (!fi || fread(rgb, 1, in_bytes, fi) != in_bytes) return 3;
    fclose(fi);
    emu_read_from = rgb, emu_read_to = rgb + in_bytes;  // shim.h: every __ldg inside the RGB bytes
    out_t* o = reinterpret_cast<out_t*>(out.data());
    bool aligned = w % GROUP == 0 && shift == 0;
    unsigned long long groups = (w + GROUP - 1) / GROUP;
    gridDim = {1, 1, 1};
#ifdef STRIP_THREADS
    {
        unsigned long long threads = groups * ((h + rows - 1) / rows);
        unsigned blocks = (unsigned)((threads + STRIP_THREADS - 1) / STRIP_THREADS);
        // The general form's edge groups march shorter bands (strip.cu's EDGE_ROWS), up to 3 a row, a warp of them in
        // each of the first blocks: as the host counts them.
        if (!aligned) {
            unsigned long long edge_rows = rows < EDGE_ROWS ? rows : EDGE_ROWS;
            unsigned long long warps = ((groups < 3 ? groups : 3) * ((h + edge_rows - 1) / edge_rows) + 31) / 32;
            blocks = (unsigned)((threads + 32 * warps + STRIP_THREADS - 1) / STRIP_THREADS);
            if (blocks < warps) blocks = (unsigned)warps;
        }
        // A block's threads together (shim.h's EMU_BLOCK): the aligned form's warps vote, and store their rows
        // through shared memory together.
        blockDim = {STRIP_THREADS, 1, 1};
        for (unsigned b = 0; b < blocks; ++b)
            emu_run_block(STRIP_THREADS, [&, b] {
                blockIdx = {b, 0, 0};
                if (aligned) sobel_strip_aligned(rgb, o, w, h, border, rows);
                else sobel_strip_general(rgb, o, w, h, border, rows);
            });
    }
#else
    {
        blockDim = {32, 4, 1};
        unsigned bx = (unsigned)((groups + 31) / 32), by = (unsigned)((h + 3) / 4);
        for (unsigned y = 0; y < by; ++y)
            for (unsigned x = 0; x < bx; ++x)
                for (unsigned ty = 0; ty < 4; ++ty)
                    for (unsigned tx = 0; tx < 32; ++tx) {
                        blockIdx = {x, y, 0}, threadIdx = {tx, ty, 0};
                        if (aligned) sobel_vec16_aligned(rgb, o, w, h, border);
                        else sobel_vec16_general(rgb, o, w, h, border);
                    }
    }
#endif
    FILE* fo = fopen(argv[3], "wb");
    fwrite(out.data(), 1, out_bytes, fo);
    fclose(fo);
    for (size_t i = out_bytes; i < out_bytes + 64; ++i)
        if (out[i] != 0xAB) { fprintf(stderr, "wrote past the end\n"); return 4; }
    return 0;
}
