// 04_rolling_window.cu — exercise 4: WORK GRANULARITY, a rolling window down a column.
//
// Run:    cuda_sobel imgs_in/2048x1024.png --kernel-file cuda/exercises/04_rolling_window.cu --block 128x1 --sweep
// Goal:   each thread owns one column x and a band of ROWS rows. Walking down, it keeps the grey values of
//         three rows of its 3-wide neighbourhood in registers (above, here, below): each step converts one
//         new row to grey and reuses the other two, so each grey value is computed about once per thread
//         instead of 9 times, with no shared memory and no barrier.
// The grid has one thread per pixel; a thread's band starts at y0 = (its row index) · ROWS, and threads
// whose band starts past the image return at once.
// As given, the window never moves (the TODO): every row of a band uses the first row's neighbourhood.
// TODO:   at the end of each step, shift the window up (above ← here, here ← below) and load the new
//         `below` row for y + 2.
// Worked solution: cuda/strip.cu (16 columns a thread, 16-byte loads, two rows of look-ahead).
// The worked solution takes 0.0084 ms at 2048×1024 on the H200; time yours, try other ROWS and blocks.
#include "sobel.cuh"

#define ROWS 8

__device__ __forceinline__ void load_row(const u8* rgb, int x, int y, int width, int height, int border, int r[3]) {
    for (int dx = 0; dx < 3; ++dx) r[dx] = grey_at(rgb, x + dx - 1, y, width, height, border);
}

extern "C" __global__ void sobel_rolling(const u8* rgb, u8* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
    if (x >= width || y0 >= height) return;
    int g[3][3];
    load_row(rgb, x, y0 - 1, width, height, border, g[0]);
    load_row(rgb, x, y0, width, height, border, g[1]);
    load_row(rgb, x, y0 + 1, width, height, border, g[2]);
    for (int y = y0; y < min(y0 + ROWS, height); ++y) {
        out[(size_t)y * width + x] = magnitude_of(sobel_x(g), sobel_y(g));
        // TODO: roll the window down one row.
    }
}
