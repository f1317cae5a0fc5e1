// 05_tile_any_radius.cu — exercise 5: TILING FOR ANY RADIUS, a shared-memory tile whose halo grows with the stencil.
//
// Run:    cuda_sobel imgs_in/2048x1024.png --ksize 7 --kernel-file cuda/exercises/05_tile_any_radius.cu --block 32x8 --sweep
//         (and --ksize 3, 5: the same file, compiled with another RADIUS)
// Goal:   exercise 3's tile for Sobel of every size. A (2r + 1)² stencil — ksize 3, 5, 7: r = RADIUS = 1, 2, 3,
//         set by --ksize through sobel.cuh — reads r pixels beyond each side of a block's 32×8 outputs, so the
//         tile must hold (32 + 2r) × (8 + 2r) grey values. The halo is then a larger share of the tile as r grows
//         (340 conversions for 256 outputs at r = 1, 532 at r = 3), but each grey value is still computed once a
//         block instead of (2r + 1)² times: the filter study's finding that "local memory pays more as the filter
//         grows" (`cuda_sobel bench --study filter-sizes`, docs/patterns.md "Where tiling starts to pay").
// As given, the halo is one pixel wide (exercise 3's answer), and a window cell beyond the tile reads the nearest
// cell inside it: right at --ksize 3, wrong on every tile's edge at 5 and 7.
// TODO:   make the halo as wide as the stencil's radius, so that every cell the window reads is in the tile.
//         Then time --ksize 3, 5 and 7 against gpu-tiled with `cuda_sobel bench --kernel-file …`.
// Worked solution: cuda/tiled.cu (gpu-tiled), 0.019 ms at 2048×1024 for ksize 3 on the H200 (docs/exercises.md).
#include "sobel.cuh"

#define TILE_W 32
#define TILE_H 8
#define HALO 1  // TODO: the stencil reaches RADIUS pixels out, not 1.
#define TILE_COLS (TILE_W + 2 * HALO)
#define TILE_ROWS (TILE_H + 2 * HALO)

extern "C" __global__ void sobel_tile_any_radius(const u8* rgb, u8* out, int width, int height, int border) {
    __shared__ u8 tile[TILE_ROWS][TILE_COLS];
    int bx = blockIdx.x * TILE_W, by = blockIdx.y * TILE_H;
    // The 256 threads walk the tile's cells in steps of 256; cell (cx, cy) is pixel (bx + cx − HALO, by + cy − HALO).
    for (int i = threadIdx.y * TILE_W + threadIdx.x; i < TILE_COLS * TILE_ROWS; i += TILE_W * TILE_H) {
        int cx = i % TILE_COLS, cy = i / TILE_COLS;
        tile[cy][cx] = (u8)grey_at(rgb, bx + cx - HALO, by + cy - HALO, width, height, border);
    }
    __syncthreads();
    int x = bx + threadIdx.x, y = by + threadIdx.y;
    if (x >= width || y >= height) return;
    // The window g[i][j] = grey of (x + j − RADIUS, y + i − RADIUS), TAPS = 2·RADIUS + 1 (sobel.cuh). A cell beyond
    // the tile is read from the nearest cell inside it (min/max keep every read inside the array).
    int g[TAPS][TAPS];
    for (int i = 0; i < TAPS; ++i)
        for (int j = 0; j < TAPS; ++j) {
            int cy = min(max((int)threadIdx.y + HALO + i - RADIUS, 0), TILE_ROWS - 1);
            int cx = min(max((int)threadIdx.x + HALO + j - RADIUS, 0), TILE_COLS - 1);
            g[i][j] = tile[cy][cx];
        }
    out[(size_t)y * width + x] = magnitude_of(sobel_x(g), sobel_y(g));
}
