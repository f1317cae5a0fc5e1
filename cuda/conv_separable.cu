// conv_separable.cu — pattern: SEPARATION, a rank-one kernel as a row pass then a column pass.
//
// A kernel K = column ⊗ row (K[i][j] = column[i]·row[j]: box, Gaussian, Sobel, the Scharr family) needs 2(2r + 1)
// multiply-adds per pixel instead of (2r + 1)², by summing along each row first and then down the columns of those
// sums. Two ways to hold the row sums:
//  - conv_rows + conv_columns: two launches through a full-size temporary image in global memory (the filter-size
//    study's "separation", which it found the worst strategy: the extra image costs more than the taps save);
//  - conv_separable_fused: one launch; a block computes the row sums of its tile plus r rows above and below into
//    shared memory, then the column sums from there. Nothing goes through global memory but the image and the
//    result.
// For a gradient kernel Gy's kernel is Kᵀ = row ⊗ column, so the row pass keeps two sums a pixel: the row taps'
// (for Gx) and the column taps' (for Gy). The factors live in constant memory (c_column, c_row, set by the host).
//
// Launch shape: 2D grid of 32×8 blocks (exactly SEP_W × SEP_H threads for the fused kernel), grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh).
#include "sobel.cuh"
#include "conv.cuh"

#define SEP_W 32
#define SEP_H 8
#define SUMS (1 + CONV_GRADIENT)

__constant__ int c_column[CONV_D];
__constant__ int c_row[CONV_D];

// The row sums at (x, row y of the plane p, already resolved): sum[0] with the row taps, sum[1] with the column taps.
__device__ __forceinline__ void row_sums(const u8* p, int x, int sy, int width, int border, acc_t sum[SUMS]) {
    sum[0] = 0;
    if (SUMS > 1) sum[SUMS - 1] = 0;
    if (sy < 0) return;  // a row of the zero border
    const u8* row = p + (size_t)sy * width;
    bool inside = x >= CONV_R && x < width - CONV_R;
#pragma unroll
    for (int j = 0; j < CONV_D; ++j) {
        int sx = inside ? x + j - CONV_R : resolve(x + j - CONV_R, width, border);
        acc_t v = sx < 0 ? 0 : row[sx];
        sum[0] += (acc_t)c_row[j] * v;
        if (SUMS > 1) sum[SUMS - 1] += (acc_t)c_column[j] * v;
    }
}

extern "C" __global__ void conv_rows(const u8* __restrict__ in, acc_t* __restrict__ tmp, int width, int height,
                                     int border) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t plane = (size_t)width * height * blockIdx.z, all = (size_t)width * height * gridDim.z;
    acc_t sum[SUMS];
    row_sums(in + plane, x, y, width, border, sum);
    tmp[plane + (size_t)y * width + x] = sum[0];
    if (SUMS > 1) tmp[all + plane + (size_t)y * width + x] = sum[SUMS - 1];
}

extern "C" __global__ void conv_columns(const acc_t* __restrict__ tmp, u8* __restrict__ out, int width, int height,
                                        int border) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t plane = (size_t)width * height * blockIdx.z, all = (size_t)width * height * gridDim.z;
    bool inside = y >= CONV_R && y < height - CONV_R;
    acc_t s = 0, t = 0;
#pragma unroll
    for (int i = 0; i < CONV_D; ++i) {
        int sy = inside ? y + i - CONV_R : resolve(y + i - CONV_R, height, border);
        if (sy < 0) continue;
        size_t k = plane + (size_t)sy * width + x;
        s += (acc_t)c_column[i] * tmp[k];
        if (SUMS > 1) t += (acc_t)c_row[i] * tmp[all + k];
    }
    out[plane + (size_t)y * width + x] = conv_finish(s, t);
}

extern "C" __global__ void __launch_bounds__(SEP_W * SEP_H)
    conv_separable_fused(const u8* __restrict__ in, u8* __restrict__ out, int width, int height, int border) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    __shared__ acc_t sums[SUMS][SEP_H + 2 * CONV_R][SEP_W];
    size_t plane = (size_t)width * height * blockIdx.z;
    int bx = blockIdx.x * SEP_W, by = blockIdx.y * SEP_H;
    // Row sums of the tile's columns for its rows and r rows above and below, threads striding over them.
    for (int k = threadIdx.y * SEP_W + threadIdx.x; k < (SEP_H + 2 * CONV_R) * SEP_W; k += SEP_W * SEP_H) {
        int tx = k % SEP_W, ty = k / SEP_W, x = bx + tx;
        acc_t sum[SUMS];
        row_sums(in + plane, min(x, width - 1), resolve(by + ty - CONV_R, height, border), width, border, sum);
        sums[0][ty][tx] = sum[0];
        if (SUMS > 1) sums[SUMS - 1][ty][tx] = sum[SUMS - 1];
    }
    __syncthreads();
    int x = bx + threadIdx.x, y = by + threadIdx.y;
    if (x >= width || y >= height) return;
    acc_t s = 0, t = 0;
#pragma unroll
    for (int i = 0; i < CONV_D; ++i) {
        s += (acc_t)c_column[i] * sums[0][threadIdx.y + i][threadIdx.x];
        if (SUMS > 1) t += (acc_t)c_row[i] * sums[SUMS - 1][threadIdx.y + i][threadIdx.x];
    }
    out[plane + (size_t)y * width + x] = conv_finish(s, t);
}
