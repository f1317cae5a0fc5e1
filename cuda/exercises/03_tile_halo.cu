// 03_tile_halo.cu — exercise 3: TILING, a shared-memory tile with a one-pixel halo.
//
// Run:    cuda_sobel imgs_in/2048x1024.png --kernel-file cuda/exercises/03_tile_halo.cu --block 32x8 --sweep
// Goal:   in exercise 1 each grey value is computed by 9 threads. Here a block first converts its 32×8 pixels
//         AND the ring of pixels around them (the halo) to grey, once each, into shared memory; after a
//         barrier every thread reads its 3×3 neighbourhood from the tile.
// As given, only the block's own pixels are loaded; the halo stays 0, so pixels on a tile's edge are wrong.
// TODO:   load all (TILE_W + 2) × (TILE_H + 2) tile cells (hint: let the 256 threads walk the cells in
//         steps of 256), each from grey_at(rgb, bx + tx - 1, by + ty - 1, …). Launch with --block 32x8.
// Worked solution: cuda/tiled.cu, 0.019 ms at 2048×1024 on the H200.
#include "sobel.cuh"

#define TILE_W 32
#define TILE_H 8

extern "C" __global__ void sobel_tile(const u8* rgb, u8* out, int width, int height, int border) {
    __shared__ u8 tile[TILE_H + 2][TILE_W + 2];
    int bx = blockIdx.x * TILE_W, by = blockIdx.y * TILE_H;
    int tx = threadIdx.x, ty = threadIdx.y;
    // TODO: this loads the interior only; the halo (row 0, row TILE_H + 1, column 0, column TILE_W + 1) is 0.
    for (int i = ty * TILE_W + tx; i < (TILE_W + 2) * (TILE_H + 2); i += TILE_W * TILE_H) (&tile[0][0])[i] = 0;
    __syncthreads();
    tile[ty + 1][tx + 1] = (u8)grey_at(rgb, bx + tx, by + ty, width, height, border);
    __syncthreads();
    int x = bx + tx, y = by + ty;
    if (x >= width || y >= height) return;
    int g[3][3];
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx) g[dy][dx] = tile[ty + dy][tx + dx];
    out[(size_t)y * width + x] = magnitude_of(sobel_x(g), sobel_y(g));
}
