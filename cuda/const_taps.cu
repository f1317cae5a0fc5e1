// const_taps.cu — pattern: STENCIL WITH COEFFICIENTS IN CONSTANT MEMORY (the "before" of "predefined").
//
// The filter-optimisation article's "predefined" optimisation hard-codes a filter's coefficients so
// the compiler skips the zero taps and turns ×1/×2 into adds. Every other kernel here is already
// predefined (sobel.cuh spells the taps out). This one is the generic alternative it improves on: the
// two 3×3 kernels live in __constant__ memory, which the host could change at run time, so the compiler
// cannot fold them, and each pixel does all 18 multiply-adds, zeros included. Otherwise it is fused.cu.
//
// Launch shape: 2D grid of 32×8 blocks, one thread per pixel.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
#include "sobel.cuh"

__constant__ int KX[9] = {-TAP_EDGE, 0, TAP_EDGE, -TAP_CENTRE, 0, TAP_CENTRE, -TAP_EDGE, 0, TAP_EDGE};
__constant__ int KY[9] = {-TAP_EDGE, -TAP_CENTRE, -TAP_EDGE, 0, 0, 0, TAP_EDGE, TAP_CENTRE, TAP_EDGE};

extern "C" __global__ void sobel_const_taps(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                            int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int gx = 0, gy = 0;
    for (int k = 0; k < 9; ++k) {
        int g = grey_at(rgb, x + k % 3 - 1, y + k / 3 - 1, width, height, border);
        gx += KX[k] * g;
        gy += KY[k] * g;
    }
    out[(size_t)y * width + x] = magnitude_of(gx, gy);
}
