// canny.cuh — Canny's arithmetic after the gradients, written once for its two front ends: cuda/canny.cu's
// canny_suppress (a tile over the gradient planes any GPU variant writes) and cuda/strip.cu's Canny build (inside
// gpu-strip's rolling window, no gradient planes at all). Both write the same state bytes and parents, which
// canny.cu's hysteresis then reads.
//
// Equivalence contract: core/src/canny.rs restated — OpenCV's gradients (CV_16S: apertures 3 and 5 as they are,
// aperture 7 divided by 16 rounded half to even), its magnitude (|Gx| + |Gy|, or Gx² + Gy² with the thresholds
// squared), its sector test (sobel.cuh's direction4_of) and its tie-breaks; thresholds arrive as `Canny::thresholds`
// gives them (swapped, squared for L2, floored), clamped to int by the host, which changes no comparison (every
// magnitude is at most 2·12240² < 2^31).
#ifndef CUDA_SOBEL_CANNY_CUH
#define CUDA_SOBEL_CANNY_CUH
#include "sobel.cuh"

// The gradient OpenCV's Canny sees (`Canny::opencv_gradient`).
__device__ __forceinline__ int opencv_gradient(int g) {
#if RADIUS == 3
    int q = g >> 4, r = g & 15;  // floor division by 16 and its remainder, for negative g too
    return q + (r > 8 || (r == 8 && (q & 1)));
#elif GRADIENT_BOUND > 32767
    return max(-32768, min(32767, g));
#else
    return g;  // fits 16 bits already
#endif
}

__device__ __forceinline__ int canny_magnitude(int gx, int gy, bool l2) {
    return l2 ? gx * gx + gy * gy : abs(gx) + abs(gy);
}

// The sector of a pixel's edge (OpenCV's fixed-point test): 0 horizontal gradient, 1 and 3 the diagonals, 2
// vertical. Canny's gradients are at most 2^15 in size, so 32 unsigned bits hold the test (sobel.cuh).
__device__ __forceinline__ int canny_sector(int gx, int gy) { return direction4_of<unsigned>(gx, gy); }

// Which neighbours a pixel is compared with, across its edge: in sector 0 left and right, in sector 2 above and below,
// in sector 1 above-left and below-right, in sector 3 above-right and below-left. `above_dx` is the column offset of
// the one in the row above (sectors 1–3); the one below is its mirror.
__device__ __forceinline__ int above_dx(int sector) { return sector == 1 ? -1 : sector == 3 ? 1 : 0; }

// The tie-breaks: a peak is strictly greater than the neighbour before it (left, or above) and than both on a
// diagonal; it may equal the one after it (right, or below) in sectors 0 and 2.
// Bitwise, not short-circuit: no branch (canny.cu's suppression measured the branch-free form faster).
__device__ __forceinline__ bool beats(int m, int neighbour, bool may_tie) {
    return (m > neighbour) | (may_tie & (m == neighbour));
}

// THE STATE the hysteresis reads: a byte a 2×2 block of pixels (block n at n, row by row), bit 2r + c set when the
// block's pixel in row r, column c is a candidate, bit 4 + 2r + c when it is a strong one. And a parent a node: node
// n + 1 is block n, node 0 stands for "joined to a strong pixel"; a block holding a strong candidate points at node 0,
// one holding only weak ones at itself, and a block without candidates has no parent written (nothing reads it).
#define PIXEL_A 1  // row 0, column 0
#define PIXEL_B 2  // row 0, column 1
#define PIXEL_C 4  // row 1, column 0
#define PIXEL_D 8  // row 1, column 1
#define STRONG(bits) ((bits) << 4)

// A block's first parent, from its state byte (written only where it holds a candidate).
__device__ __forceinline__ int first_parent(unsigned bits, int node) { return (bits & STRONG(15u)) ? 0 : node; }

#endif  // CUDA_SOBEL_CANNY_CUH
