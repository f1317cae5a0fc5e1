// 02_coalesced.cu — exercise 2: COALESCING, the same map with the threads laid out well.
//
// Run:    cuda_sobel imgs_in/2048x1024.png --kernel-file cuda/exercises/02_coalesced.cu --sweep
// Goal:   a warp is 32 consecutive threadIdx.x. Their loads are combined into few memory transactions only
//         when they touch neighbouring bytes — consecutive x of one row. This kernel maps threadIdx.x to y
//         instead, so a warp reads 32 different rows, and it mixes up which grid axis covers which image
//         axis, so it also misses pixels of any image that is not square: it fails the check.
// TODO:   map (blockIdx.x, threadIdx.x) to x and (blockIdx.y, threadIdx.y) to y. Then time it against the
//         transposed mapping with a square image (--block 32x8), to see what coalescing is worth.
// Worked solution: cuda/fused.cu (its mapping), 0.033 ms at 2048×1024 on the H200.
#include "sobel.cuh"

extern "C" __global__ void sobel_coalesced(const u8* rgb, u8* out, int width, int height, int border) {
    // TODO: these two lines are the bug.
    int y = blockIdx.x * blockDim.x + threadIdx.x;
    int x = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    out[(size_t)y * width + x] = sobel_pixel_from_rgb(rgb, x, y, width, height, border);
}
