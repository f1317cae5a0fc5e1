// strip.cu's Canny build and canny.cu's hysteresis on the CPU: canny_main IN OUT WIDTH HEIGHT BORDER ROWS SHIFT LOW
// HIGH, IN the RGB bytes (row after row), OUT Canny's edges (a byte a pixel), SHIFT how many bytes past a 16-byte
// boundary the input starts, LOW and HIGH the thresholds as the kernels take them (`Thresholds::of`). Launches what
// the host launches (core/src/gpu/patterns/strip.rs and canny.rs): canny_strip_{aligned,general} over the 1D grid of
// 128-thread blocks (ROWS even), then canny_link and canny_edges over 32×8 blocks of 2×2 pixel blocks — each thread to
// completion in turn (one order the GPU may run them in: union-find's answer does not depend on it). Fails if
// anything is read (through __ldg) outside the input, if a state byte is left unwritten or a parent the hysteresis
// reads was never written, or if anything is written past the end of the outputs. Built from a file that includes
// both kernel files (canny_check.py writes it).
#include <cstdio>
#include <cstring>
#include <vector>
int main(int argc, char** argv) {
    if (argc < 10) {
        fprintf(stderr, "usage: canny_main IN OUT WIDTH HEIGHT BORDER ROWS SHIFT LOW HIGH\n");
        return 2;
    }
    int w = atoi(argv[3]), h = atoi(argv[4]), border = atoi(argv[5]), rows = atoi(argv[6]);
    size_t shift = (size_t)atoi(argv[7]) % 16;
    int low = atoi(argv[8]), high = atoi(argv[9]);
    if (rows % 2) { fprintf(stderr, "rows must be even\n"); return 2; }
    size_t pixels = (size_t)w * h, in_bytes = 3 * pixels;
    size_t blocks_across = (w + 1) / 2, nodes = blocks_across * ((h + 1) / 2);
    std::vector<uint4> in_words((shift + in_bytes) / 16 + 1);
    u8* rgb = reinterpret_cast<u8*>(in_words.data()) + shift;
    FILE* fi = fopen(argv[1], "rb");
    if (!fi || fread(rgb, 1, in_bytes, fi) != in_bytes) return 3;
    fclose(fi);
    emu_read_from = rgb, emu_read_to = rgb + in_bytes;
    // The state with a canary after it, every byte first 0xF0 (strong bits without candidates: no byte the kernel
    // writes); the parents first a value no node has, each also with a canary.
    const int UNWRITTEN = -7;
    std::vector<uint2> state_words((nodes + 64) / 8 + 1);
    u8* state = reinterpret_cast<u8*>(state_words.data());
    std::memset(state, 0xF0, nodes + 64);
    std::vector<int> parent(nodes + 1 + 16, UNWRITTEN);
    std::vector<u8> out(pixels + 64, 0xAB);
    bool aligned = w % GROUP == 0 && shift == 0;
    unsigned long long groups = (w + GROUP - 1) / GROUP;
    unsigned long long threads = groups * ((h + rows - 1) / rows);
    unsigned blocks = (unsigned)((threads + STRIP_THREADS - 1) / STRIP_THREADS);
    if (!aligned) {  // strip.rs's count of the edge groups' warps
        unsigned long long edge_rows = rows < EDGE_ROWS ? rows : EDGE_ROWS;
        unsigned long long warps = ((groups < 3 ? groups : 3) * ((h + edge_rows - 1) / edge_rows) + 31) / 32;
        blocks = (unsigned)((threads + 32 * warps + STRIP_THREADS - 1) / STRIP_THREADS);
        if (blocks < warps) blocks = (unsigned)warps;
    }
    gridDim = {blocks, 1, 1}, blockDim = {STRIP_THREADS, 1, 1};
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned t = 0; t < STRIP_THREADS; ++t) {
            blockIdx = {b, 0, 0}, threadIdx = {t, 0, 0};
            if (aligned) canny_strip_aligned(rgb, state, parent.data(), w, h, border, rows, low, high);
            else canny_strip_general(rgb, state, parent.data(), w, h, border, rows, low, high);
        }
    for (size_t i = 0; i < nodes; ++i)
        if ((state[i] >> 4) & ~state[i] & 15u) { fprintf(stderr, "state byte %zu not written\n", i); return 4; }
    for (size_t i = nodes; i < nodes + 64; ++i)
        if (state[i] != 0xF0) { fprintf(stderr, "state written past its end\n"); return 4; }
    for (size_t i = 0; i <= nodes; ++i)
        if ((i == 0 || (state[i - 1] & 15u)) && parent[i] == UNWRITTEN) {
            fprintf(stderr, "parent %zu not written\n", i);
            return 4;
        }
    for (size_t i = nodes + 1; i < parent.size(); ++i)
        if (parent[i] != UNWRITTEN) { fprintf(stderr, "parents written past their end\n"); return 4; }
    // canny.rs's launch shapes: 32×8 threads, a thread a 2×2 block (the link) or a run of EDGE_RUN of them (the edges).
    for (int pass = 0; pass < 2; ++pass) {
        size_t across = pass == 0 ? blocks_across : (blocks_across + EDGE_RUN - 1) / EDGE_RUN;
        unsigned bx = (unsigned)((across + 31) / 32), by = (unsigned)(((h + 1) / 2 + 7) / 8);
        gridDim = {bx, by, 1}, blockDim = {32, 8, 1};
        for (unsigned y = 0; y < by; ++y)
            for (unsigned x = 0; x < bx; ++x)
                for (unsigned ty = 0; ty < 8; ++ty)
                    for (unsigned tx = 0; tx < 32; ++tx) {
                        blockIdx = {x, y, 0}, threadIdx = {tx, ty, 0};
                        if (pass == 0) canny_link(state, parent.data(), w, h);
                        else canny_edges(state, parent.data(), out.data(), w, h);
                    }
    }
    FILE* fo = fopen(argv[2], "wb");
    fwrite(out.data(), 1, pixels, fo);
    fclose(fo);
    for (size_t i = pixels; i < pixels + 64; ++i)
        if (out[i] != 0xAB) { fprintf(stderr, "edges written past the end\n"); return 4; }
    return 0;
}
