// fused_map.cu — pattern: MAP FUSION, as the report's fused CUDA version.
//
// The report fused its three gradient-side kernels (Gx, Gy, magnitude) into one: each thread computes
// both gradients of its pixel and the magnitude at once, so Gx and Gy never go to device memory. The grey
// conversion stays a separate map (`grey_kernel` in map.cu), so one intermediate (grey) remains.
// Fusion saves memory traffic and launches, not arithmetic: the same operations run per pixel.
//
// Launch shape: 2D grid of 16×16 blocks with bounds checks, like map.cu.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
#include "sobel.cuh"

extern "C" __global__ void gradient_magnitude_kernel(const u8* grey, u8* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int g[3][3];
#pragma unroll
    for (int dy = 0; dy < 3; ++dy)
#pragma unroll
        for (int dx = 0; dx < 3; ++dx) g[dy][dx] = grey_pixel(grey, x + dx - 1, y + dy - 1, width, height, border);
    out[(size_t)y * width + x] = magnitude_of(sobel_x(g), sobel_y(g));
}
