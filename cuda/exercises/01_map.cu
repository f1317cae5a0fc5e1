// 01_map.cu — exercise 1: MAP + STENCIL, one thread per pixel.
//
// Run:    cuda_sobel imgs_in/2048x1024.png --kernel-file cuda/exercises/01_map.cu --sweep
// Goal:   each thread computes the edge byte of its own pixel: the grey values of its 3×3 neighbourhood
//         (sobel.cuh's grey_at(rgb, x, y, width, height, border) reads one, border rules included), then
//         Gx, Gy (sobel_x, sobel_y on an int g[3][3]) and magnitude_of(Gx, Gy).
// As given, it writes the pixel's grey value: it compiles, runs, and fails the check. Fill in the TODO.
// Worked solution: cuda/fused.cu, 0.033 ms at 2048×1024 on the H200 (docs/exercises.md).
#include "sobel.cuh"

extern "C" __global__ void sobel_map(const u8* rgb, u8* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    // TODO: fill g[dy][dx] with grey_at(rgb, x + dx - 1, y + dy - 1, width, height, border) for dx, dy in 0..3,
    // then write magnitude_of(sobel_x(g), sobel_y(g)).
    out[(size_t)y * width + x] = (u8)grey_at(rgb, x, y, width, height, border);
}
