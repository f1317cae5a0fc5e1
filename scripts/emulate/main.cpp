// conv_strip.cu on the CPU: conv_strip IN OUT WIDTH HEIGHT PLANES BORDER ROWS COLUMNS, IN and OUT raw planes one after
// another. Launches the grid src/gpu/patterns/conv_strip.rs launches (the kernel file's `layout_of(…).threads()` a
// plane in blocks of 128), a warp after another (shim.h), and fails if anything is read outside the input or written
// past the output.
#include <cstdio>
#include <vector>
int main(int argc, char** argv) {
    if (argc < 9) { fprintf(stderr, "args\n"); return 2; }
    int w = atoi(argv[3]), h = atoi(argv[4]), planes = atoi(argv[5]), border = atoi(argv[6]), rows = atoi(argv[7]), cols = atoi(argv[8]);
    size_t n = (size_t)w * h * planes;
    // The input exactly (every read is checked against it: shim.h); 64 bytes past the output to catch a write there.
    std::vector<unsigned char> in(n), out(n + 64, 0xAB);
    FILE* fi = fopen(argv[1], "rb"); if (fread(in.data(), 1, n, fi) != n) return 3; fclose(fi);
    emu_read_from = in.data(), emu_read_to = in.data() + n;  // shim.h: every read inside the input planes
    (void)cols;  // the build's STRIP_G
    unsigned long long threads = layout_of(w, h, rows).threads();
    unsigned blocks = (threads + 127) / 128;
    blockDim = {128, 1, 1};
    for (unsigned z = 0; z < (unsigned)planes; ++z)
        for (unsigned b = 0; b < blocks; ++b)
            for (unsigned warp = 0; warp < 4; ++warp)
                emu_run_warp([&](unsigned lane) {
                    blockIdx = {b, 0, z}, threadIdx = {32 * warp + lane, 0, 0};
                    conv_strip(in.data(), out.data(), w, h, border, rows);
                });
    FILE* fo = fopen(argv[2], "wb"); fwrite(out.data(), 1, n, fo); fclose(fo);
    for (size_t i = n; i < n + 64; ++i) if (out[i] != 0xAB) { fprintf(stderr, "wrote past the end\n"); return 4; }
    return 0;
}
