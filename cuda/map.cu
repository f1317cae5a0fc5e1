// map.cu — pattern: MAP (one thread per output pixel), as the report's 1:1 CUDA version.
//
// Four kernels, four passes over memory, three full-size intermediates (grey, Gx, Gy), exactly the
// report's structure: grey conversion, horizontal gradient, vertical gradient, magnitude. Each thread
// computes one output element and nothing else — the simplest parallel mapping, and the baseline the
// fused variants are measured against. The gradient kernels are stencils (each output reads 3×3 inputs).
//
// Launch shape: a 2D grid of 16×16 blocks covering the image, with bounds checks, so any width and
// height work (the report launched <<<width, height>>>, which fails above 1024 rows).
//
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh); Gx and Gy are stored exactly as
// 16-bit integers (|G| ≤ 1020), not truncated to bytes as the report did.
#include "sobel.cuh"

extern "C" __global__ void grey_kernel(const u8* rgb, u8* grey, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t i = (size_t)y * width + x;
    grey[i] = grey_of(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

// Loads the 3×3 grey neighbourhood of (x, y) through the border rule.
__device__ __forceinline__ void neighbourhood(const u8* grey, int x, int y, int width, int height, int border,
                                              int g[3][3]) {
#pragma unroll
    for (int dy = 0; dy < 3; ++dy)
#pragma unroll
        for (int dx = 0; dx < 3; ++dx) g[dy][dx] = grey_pixel(grey, x + dx - 1, y + dy - 1, width, height, border);
}

// One gradient per thread; AXIS 0 is Gx, 1 is Gy (the report had two kernels, and so do we: two entry
// points over one body).
template <int AXIS>
__device__ __forceinline__ void gradient(const u8* grey, short* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int g[3][3];
    neighbourhood(grey, x, y, width, height, border, g);
    out[(size_t)y * width + x] = (short)(AXIS == 0 ? sobel_x(g) : sobel_y(g));
}

extern "C" __global__ void sobel_x_kernel(const u8* grey, short* gx, int width, int height, int border) {
    gradient<0>(grey, gx, width, height, border);
}

extern "C" __global__ void sobel_y_kernel(const u8* grey, short* gy, int width, int height, int border) {
    gradient<1>(grey, gy, width, height, border);
}

extern "C" __global__ void magnitude_kernel(const short* gx, const short* gy, u8* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t i = (size_t)y * width + x;
    out[i] = magnitude_of(gx[i], gy[i]);
}
