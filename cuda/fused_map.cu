// fused_map.cu — pattern: MAP FUSION, as the report's fused CUDA version.
//
// The report fused its three gradient-side kernels (Gx, Gy, magnitude) into one: each thread computes
// both gradients of its pixel and the output at once, so Gx and Gy never go to device memory. The grey
// conversion stays a separate map (`grey_kernel` in map.cu), so one intermediate (grey) remains.
// Fusion saves memory traffic and launches, not arithmetic: the same operations run per pixel.
//
// Launch shape: 2D grid of 16×16 blocks with bounds checks, like map.cu.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
#include "sobel.cuh"

extern "C" __global__ void gradient_magnitude_kernel(const u8* grey, out_t* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int gx, gy;
    gradients_at([&](int sx, int sy) { return grey_pixel(grey, sx, sy, width, height, border); }, x, y, gx, gy);
    store(out, (size_t)y * width + x, (size_t)width * height, gx, gy);
}
