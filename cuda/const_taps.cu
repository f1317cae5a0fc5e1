// const_taps.cu — pattern: STENCIL WITH COEFFICIENTS IN CONSTANT MEMORY (the "before" of "predefined").
//
// The filter-optimisation article's "predefined" optimisation hard-codes a filter's coefficients so
// the compiler skips the zero taps and turns ×1/×2 into adds. Every other kernel here is already
// predefined (sobel.cuh folds the stencil's taps into its loops). This one is the generic alternative it
// improves on: the stencil's two (2r + 1)² kernels live in __constant__ memory, which the host could change at
// run time, so the compiler cannot fold them, and each pixel does every multiply-add, zeros included
// (18 for 3×3, 98 for 7×7). Otherwise it is fused.cu.
//
// Launch shape: 2D grid of 32×8 blocks, one thread per pixel.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
#include "sobel.cuh"

// Gx's and Gy's 2-D taps, row-major: smooth[i]·deriv[j] and deriv[i]·smooth[j].
struct Kernels2d {
    int x[TAPS * TAPS], y[TAPS * TAPS];
};
__host__ __device__ constexpr Kernels2d kernels_2d() {
    int s[TAPS] = {TAPS_SMOOTH}, d[TAPS] = {TAPS_DERIV};
    Kernels2d k = {};
    for (int i = 0; i < TAPS; ++i)
        for (int j = 0; j < TAPS; ++j) k.x[i * TAPS + j] = s[i] * d[j], k.y[i * TAPS + j] = d[i] * s[j];
    return k;
}
__constant__ Kernels2d K2D = kernels_2d();

extern "C" __global__ void sobel_const_taps(const u8* __restrict__ rgb, out_t* __restrict__ out, int width, int height,
                                            int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int gx = 0, gy = 0;
#pragma unroll 1
    for (int k = 0; k < TAPS * TAPS; ++k) {
        int g = grey_at(rgb, x + k % TAPS - RADIUS, y + k / TAPS - RADIUS, width, height, border);
        gx += K2D.x[k] * g;
        gy += K2D.y[k] * g;
    }
    store(out, (size_t)y * width + x, (size_t)width * height, gx, gy);
}
