// map.cu — pattern: MAP (one thread per output pixel), as the report's 1:1 CUDA version.
//
// Four kernels, four passes over memory, three full-size intermediates (grey, Gx, Gy), exactly the
// report's structure: grey conversion, horizontal gradient, vertical gradient, magnitude (or whichever
// output the build writes). Each thread computes one output element and nothing else — the simplest parallel
// mapping, and the baseline the fused variants are measured against. The gradient kernels are stencils (each
// output reads (2r + 1)² inputs, r the stencil's radius).
//
// Launch shape: a 2D grid of 16×16 blocks covering the image, with bounds checks, so any width and
// height work (the report launched <<<width, height>>>, which fails above 1024 rows).
//
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh); Gx and Gy are stored exactly, as
// 16-bit integers where the stencil's bound allows (|G| ≤ 12 240 up to 5×5) and 32-bit for 7×7 (163 200),
// not truncated to bytes as the report did.
#include "sobel.cuh"

#if GRADIENT_BOUND > 32767
typedef int grad_t;
#else
typedef short grad_t;
#endif

extern "C" __global__ void grey_kernel(const u8* rgb, u8* grey, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t i = (size_t)y * width + x;
    grey[i] = grey_of(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

// One gradient per thread; AXIS 0 is Gx, 1 is Gy (the report had two kernels, and so do we: two entry
// points over one body).
template <int AXIS>
__device__ __forceinline__ void gradient(const u8* grey, grad_t* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int gx, gy;
    gradients_at([&](int sx, int sy) { return grey_pixel(grey, sx, sy, width, height, border); }, x, y, gx, gy);
    out[(size_t)y * width + x] = (grad_t)(AXIS == 0 ? gx : gy);
}

extern "C" __global__ void sobel_x_kernel(const u8* grey, grad_t* gx, int width, int height, int border) {
    gradient<0>(grey, gx, width, height, border);
}

extern "C" __global__ void sobel_y_kernel(const u8* grey, grad_t* gy, int width, int height, int border) {
    gradient<1>(grey, gy, width, height, border);
}

extern "C" __global__ void magnitude_kernel(const grad_t* gx, const grad_t* gy, out_t* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t i = (size_t)y * width + x;
    store(out, i, (size_t)width * height, gx[i], gy[i]);
}
