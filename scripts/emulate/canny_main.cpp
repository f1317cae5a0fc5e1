// canny.cu on the CPU: canny_main IN OUT WIDTH HEIGHT LOW HIGH, IN a grey image (WIDTH·HEIGHT bytes), OUT its Canny
// edges (a byte a pixel, 0 or 255), aperture 3, thresholds LOW and HIGH as the host passes them (Canny::thresholds,
// squared for L2). The words are what a gradient kernel writes for Canny (OUTPUT_SECTORS): the 3×3 Sobel with the
// border replicated, then sobel.cuh's sector_of. Launches the three kernels as core/src/gpu/patterns/canny.rs does,
// on 32×8 blocks (a block after another, each block's threads as CPU threads: shim.h's EMU_BLOCK; the link's and
// the edges' threads race on the parents as the GPU's do). Built with -fsanitize=address by canny_check.py, so a read
// or write outside a buffer ends the run; the states and parents start as garbage, as device memory does.
#include <vector>
int main(int argc, char** argv) {
    if (argc < 7) { fprintf(stderr, "usage: canny_main IN OUT WIDTH HEIGHT LOW HIGH\n"); return 2; }
    const int w = atoi(argv[3]), h = atoi(argv[4]), low = atoi(argv[5]), high = atoi(argv[6]);
    const size_t pixels = (size_t)w * h;
    std::vector<unsigned char> grey(pixels);
    FILE* fi = fopen(argv[1], "rb");
    if (!fi || fread(grey.data(), 1, pixels, fi) != pixels) return 3;
    fclose(fi);
    auto at = [&](int x, int y) {
        return (int)grey[(size_t)std::min(std::max(y, 0), h - 1) * w + std::min(std::max(x, 0), w - 1)];
    };
    std::vector<sector_t> words(pixels);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int gx = at(x + 1, y - 1) - at(x - 1, y - 1) + 2 * (at(x + 1, y) - at(x - 1, y)) + at(x + 1, y + 1) - at(x - 1, y + 1);
            int gy = at(x - 1, y + 1) - at(x - 1, y - 1) + 2 * (at(x, y + 1) - at(x, y - 1)) + at(x + 1, y + 1) - at(x + 1, y - 1);
            words[(size_t)y * w + x] = sector_of(gx, gy);
        }
    const unsigned across = (w + 1) / 2, down = (h + 1) / 2;
    const size_t nodes = (size_t)across * down;
    std::vector<unsigned char> state(nodes, 0xA5), out(pixels, 0x5A);
    std::vector<int> parent(nodes + 1, 0x3FFFFFFF);  // a read of one never written indexes far outside
    gridDim = {(across + 31) / 32, (down + 7) / 8, 1};
    blockDim = {32, 8, 1};
    auto launch = [&](auto kernel) {
        for (unsigned by = 0; by < gridDim.y; ++by)
            for (unsigned bx = 0; bx < gridDim.x; ++bx)
                emu_run_block(256, [&, bx, by] { blockIdx = {bx, by, 0}; kernel(); });
    };
    launch([&] { canny_suppress(words.data(), state.data(), parent.data(), w, h, low, high); });
    launch([&] { canny_link(state.data(), parent.data(), w, h); });
    gridDim.x = (across + 32 * EDGE_BLOCKS - 1) / (32 * EDGE_BLOCKS);  // the edges: a thread EDGE_BLOCKS blocks of a row
    launch([&] { canny_edges(state.data(), parent.data(), out.data(), w, h); });
    FILE* fo = fopen(argv[2], "wb");
    fwrite(out.data(), 1, pixels, fo);
    fclose(fo);
    return 0;
}
