// sobel.cuh — the pipeline's exact arithmetic in CUDA C, shared by every kernel file.
//
// Equivalence contract: these functions are `src/sobel.rs` restated; every kernel built on them must
// produce the bytes `cpu-scalar` produces, for every image, border mode, operator and arithmetic (the
// tests check this).
//  - grey      = (30·R + 59·G + 11·B + 50) / 100, unsigned integer arithmetic (rounded half up)
//  - Gx, Gy    = 3×3 Sobel (or Scharr) kernels, exact int arithmetic
//  - magnitude = min(255, round(sqrt(Gx² + Gy²))): sqrtf is correctly rounded (NVRTC's default
//                --prec-sqrt=true, which the host passes explicitly), so it is exact below 2^24.
//  - offsets into images are 64-bit (size_t): width·height·3 passes 2^31 at about 26 000 × 26 000.
//
// The operator and the arithmetic are fixed when the host compiles a file: it passes `-DSCHARR=1` and/or
// `-DCOMPAT_REPORT=1` and loads one module per combination (src/gpu/kernels.rs), so the default build's
// code is exactly what it would be without these options — no run-time branch in any hot loop.
//  - SCHARR=1: smoothing weights [3 10 3] instead of [1 2 1] (|G| ≤ 4080; the magnitude still saturates).
//  - COMPAT_REPORT=1: the report's C program, `Compat::Report` in src/sobel.rs: grey in doubles truncated,
//    gradients kept mod 256, magnitude truncated and wrapped. Each double operation is written as an
//    explicit round-to-nearest intrinsic, so no compiler option can fuse them into an FMA (x86-64 SSE2,
//    where the report ran, has none; one fused rounding changes some pixels by one).
//
// The host replaces each `#include "…cuh"` line with that header's text before NVRTC compiles a file
// (so the headers use include guards), and `nvcc -ptx cuda/fused.cu` works as well.
#ifndef CUDA_SOBEL_SOBEL_CUH
#define CUDA_SOBEL_SOBEL_CUH

// Border modes: the values of the Rust enum `Border` (checked by a test).
#define BORDER_REPLICATE 0
#define BORDER_ZERO 1
#define BORDER_REFLECT101 2

// Gx² + Gy² from which the rounded magnitude is 255 or more: 254² + 254 + 1.
#define SATURATED_SQUARE 64771u

#ifndef SCHARR
#define SCHARR 0
#endif
#ifndef COMPAT_REPORT
#define COMPAT_REPORT 0
#endif

// The operator's smoothing weights: Gx = [E C E]ᵀ·[−1 0 1], Gy = [−1 0 1]ᵀ·[E C E] (`Operator::weights`).
#if SCHARR
#define TAP_EDGE 3
#define TAP_CENTRE 10
#else
#define TAP_EDGE 1
#define TAP_CENTRE 2
#endif

typedef unsigned char u8;

#if COMPAT_REPORT
// The report: (byte)(0.30·R + 0.59·G + 0.11·B), left to right, each operation rounded on its own.
__device__ __forceinline__ u8 grey_of(u8 r, u8 g, u8 b) {
    double sum = __dadd_rn(__dadd_rn(__dmul_rn(0.30, (double)r), __dmul_rn(0.59, (double)g)), __dmul_rn(0.11, (double)b));
    return (u8)(int)sum;
}

// The report: h = (byte)abs(Gx), v = (byte)abs(Gy) (mod 256), then (byte)(int)sqrt(h² + v²). sqrt of
// an integer below 2^53 in doubles is correctly rounded, so the truncation is floor(√(h² + v²)) exactly.
__device__ __forceinline__ u8 magnitude_of(int gx, int gy) {
    int h = abs(gx) & 0xFF, v = abs(gy) & 0xFF;
    return (u8)(int)sqrt((double)(h * h + v * v));
}
#else
__device__ __forceinline__ u8 grey_of(u8 r, u8 g, u8 b) {
    return (u8)((30u * r + 59u * g + 11u * b + 50u) / 100u);
}

// min(255, round(sqrt(s))), exactly: r = floor(sqrt(s)), then round up iff s > r² + r.
__device__ __forceinline__ u8 magnitude_of(int gx, int gy) {
    unsigned s = min((unsigned)(gx * gx + gy * gy), SATURATED_SQUARE);
    unsigned r = (unsigned)sqrtf((float)s);
    return (u8)(r + (s > r * r + r ? 1u : 0u));
}
#endif

// The coordinate that position i (at most one step outside 0..n-1) reads, or -1 for the constant 0.
__device__ __forceinline__ int resolve(int i, int n, int border) {
    if (i >= 0 && i < n) return i;
    if (border == BORDER_ZERO) return -1;
    if (border == BORDER_REPLICATE) return i < 0 ? 0 : n - 1;
    if (n == 1) return 0;  // reflect101 of a one-pixel dimension repeats it
    return i < 0 ? -i : 2 * n - 2 - i;
}

// Grey value of the pixel at (x, y) of an RGB image, or of its border substitute.
__device__ __forceinline__ int grey_at(const u8* rgb, int x, int y, int width, int height, int border) {
    int sx = resolve(x, width, border), sy = resolve(y, height, border);
    if (sx < 0 || sy < 0) return 0;
    size_t i = ((size_t)sy * width + sx) * 3;
    return grey_of(rgb[i], rgb[i + 1], rgb[i + 2]);
}

// Value of the pixel at (x, y) of a grey image, or of its border substitute.
__device__ __forceinline__ int grey_pixel(const u8* grey, int x, int y, int width, int height, int border) {
    int sx = resolve(x, width, border), sy = resolve(y, height, border);
    if (sx < 0 || sy < 0) return 0;
    return grey[(size_t)sy * width + sx];
}

// The operator's taps on a 3×3 grey neighbourhood g[row][col], centre g[1][1] (zero taps skipped).
__device__ __forceinline__ int sobel_x(const int g[3][3]) {
    return TAP_EDGE * (g[0][2] - g[0][0]) + TAP_CENTRE * (g[1][2] - g[1][0]) + TAP_EDGE * (g[2][2] - g[2][0]);
}
__device__ __forceinline__ int sobel_y(const int g[3][3]) {
    return (TAP_EDGE * g[2][0] + TAP_CENTRE * g[2][1] + TAP_EDGE * g[2][2]) -
           (TAP_EDGE * g[0][0] + TAP_CENTRE * g[0][1] + TAP_EDGE * g[0][2]);
}

// The whole pipeline for one output pixel, straight from RGB: 9 grey conversions, 2 stencils, 1 magnitude.
__device__ __forceinline__ u8 sobel_pixel_from_rgb(const u8* rgb, int x, int y, int width, int height, int border) {
    int g[3][3];
#pragma unroll
    for (int dy = 0; dy < 3; ++dy)
#pragma unroll
        for (int dx = 0; dx < 3; ++dx) g[dy][dx] = grey_at(rgb, x + dx - 1, y + dy - 1, width, height, border);
    return magnitude_of(sobel_x(g), sobel_y(g));
}

#endif  // CUDA_SOBEL_SOBEL_CUH
