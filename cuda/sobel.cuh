// sobel.cuh — the pipeline's exact arithmetic in CUDA C, shared by every kernel file.
//
// Equivalence contract: these functions are `src/sobel.rs` restated; every kernel built on them must
// produce the bytes `cpu-scalar` produces, for every image and border mode (the tests check this).
//  - grey      = (30·R + 59·G + 11·B + 50) / 100, unsigned integer arithmetic (rounded half up)
//  - Gx, Gy    = 3×3 Sobel kernels, exact int arithmetic
//  - magnitude = min(255, round(sqrt(Gx² + Gy²))): sqrtf is correctly rounded (NVRTC's default
//                --prec-sqrt=true, which the host passes explicitly), so it is exact below 2^24.
//  - offsets into images are 64-bit (size_t): width·height·3 passes 2^31 at about 26 000 × 26 000.
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

typedef unsigned char u8;

__device__ __forceinline__ u8 grey_of(u8 r, u8 g, u8 b) {
    return (u8)((30u * r + 59u * g + 11u * b + 50u) / 100u);
}

// min(255, round(sqrt(s))), exactly: r = floor(sqrt(s)), then round up iff s > r² + r.
__device__ __forceinline__ u8 magnitude_of(int gx, int gy) {
    unsigned s = min((unsigned)(gx * gx + gy * gy), SATURATED_SQUARE);
    unsigned r = (unsigned)sqrtf((float)s);
    return (u8)(r + (s > r * r + r ? 1u : 0u));
}

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

// The Sobel taps of a 3×3 grey neighbourhood g[row][col], centre g[1][1].
__device__ __forceinline__ int sobel_x(const int g[3][3]) {
    return (g[0][2] - g[0][0]) + 2 * (g[1][2] - g[1][0]) + (g[2][2] - g[2][0]);
}
__device__ __forceinline__ int sobel_y(const int g[3][3]) {
    return (g[2][0] + 2 * g[2][1] + g[2][2]) - (g[0][0] + 2 * g[0][1] + g[0][2]);
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
