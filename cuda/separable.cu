// separable.cu — pattern: SEPARABLE FILTER IN TWO PASSES (as cv::cuda::createSobelFilter does).
//
// Every stencil here is an outer product: Gx = smooth (down) ⊗ deriv (along), Gy = deriv (down) ⊗ smooth
// (along), 2r + 1 taps each (r the radius; Sobel 3×3: [1 2 1] and [−1 0 1]). So a row pass computes, per
// pixel, the horizontal smoothing h = Σ smooth[j]·g[x + j − r] and derivative e = Σ deriv[j]·g[x + j − r] of
// the grey row, and a column pass combines 2r + 1 rows of those: Gx = Σ smooth[i]·e[y + i − r] and
// Gy = Σ deriv[i]·h[y + i − r]. 4·(2r + 1) taps a pixel instead of 2·(2r + 1)², and each grey value converted
// once — at the price of an intermediate (two shorts a pixel: h ≤ 64·255, |e| ≤ 10·255 for 7×7) through device
// memory. Measured on the H200 the trade wins: separable beats fused.cu, whose repeated grey conversions cost
// more than that traffic (`bench/results/variants.md`, "Computation alone").
// The border rule applies per axis (row pass: columns; column pass: rows), which equals the 2D rule for
// all three modes because each resolves x and y independently, and zero rows give zero h and e.
//
// Launch shape: both passes 2D grids of 32×8 blocks, one thread per pixel.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
#include "sobel.cuh"

extern "C" __global__ void sobel_rows_pass(const u8* __restrict__ rgb, short2* __restrict__ he, int width, int height,
                                           int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int h = 0, e = 0;
#pragma unroll
    for (int j = 0; j < TAPS; ++j) {
        int g = grey_at(rgb, x + j - RADIUS, y, width, height, border);
        h += smooth_tap(j) * g;
        e += deriv_tap(j) * g;
    }
    he[(size_t)y * width + x] = make_short2((short)h, (short)e);
}

extern "C" __global__ void sobel_columns_pass(const short2* __restrict__ he, out_t* __restrict__ out, int width,
                                              int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int gx = 0, gy = 0;
#pragma unroll
    for (int i = 0; i < TAPS; ++i) {
        int sy = resolve(y + i - RADIUS, height, border);
        short2 v = sy < 0 ? make_short2(0, 0) : he[(size_t)sy * width + x];
        gx += smooth_tap(i) * v.y;
        gy += deriv_tap(i) * v.x;
    }
    store(out, (size_t)y * width + x, (size_t)width * height, gx, gy);
}
