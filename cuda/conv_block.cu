// conv_block.cu — pattern: MORE WORK PER THREAD with BLOCK READS (the box-blur study's 16 pixels per work-item).
//
// Each thread computes 16 neighbouring outputs of one row. For each of the window's 2r + 1 input rows it needs the
// 16 + 2r pixels from x0 − r to x0 + 15 + r: it reads them as three aligned 16-byte vectors (x0 − 16 … x0 + 31, one
// load instruction each instead of 16 + 2r byte loads; r ≤ 7 < 16) into registers, and every output of the 16
// takes its window from those registers: each loaded pixel serves up to 2r + 1 outputs without shared memory or a
// barrier. The 16 results leave as one 16-byte store. Rows whose width is not a multiple of 16, and the first and
// last 16 pixels of a row, take the same arithmetic with pixels read one by one through the border rule.
// The taps are compiled in (CONV_TAPS), as in conv_predefined.cu; a gradient kernel's two sums share the reads.
//
// Launch shape: 2D grid of 64×4 blocks, each thread 16 pixels of one row (a block covers 1024×4), grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh).
#include "sobel.cuh"
#include "conv.cuh"

#define BLOCK_PIXELS 16
#define WINDOW (BLOCK_PIXELS + 2 * CONV_R)

// Byte k (0..47) of three 16-byte vectors; k is a constant once the loops are unrolled, so this is a shift and a mask.
__device__ __forceinline__ int byte_of(const uint4 (&v)[3], int k) {
    const uint4 q = k < 16 ? v[0] : k < 32 ? v[1] : v[2];
    int w = (k >> 2) & 3;
    unsigned word = w == 0 ? q.x : w == 1 ? q.y : w == 2 ? q.z : q.w;
    return (word >> (8 * (k & 3))) & 0xFF;
}

extern "C" __global__ void conv_block(const u8* __restrict__ in, u8* __restrict__ out, int width, int height,
                                      int border) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * BLOCK_PIXELS, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x0 >= width || y >= height) return;
    size_t plane = (size_t)width * height * blockIdx.z;
    const u8* p = in + plane;
    // The vector loads need 16-byte alignment (width a multiple of 16) and x0 − 16 … x0 + 31 inside the row.
    bool vectors = width % BLOCK_PIXELS == 0 && x0 >= BLOCK_PIXELS && x0 + 2 * BLOCK_PIXELS <= width;
    acc_t s[BLOCK_PIXELS], t[BLOCK_PIXELS];
#pragma unroll
    for (int k = 0; k < BLOCK_PIXELS; ++k) s[k] = 0, t[k] = 0;
#pragma unroll
    for (int i = 0; i < CONV_D; ++i) {
        int sy = resolve(y + i - CONV_R, height, border);
        if (sy < 0) continue;  // a row of the zero border adds nothing
        const u8* row = p + (size_t)sy * width;
        // win[c] = pixel x0 − r + c, c in 0 .. 16 + 2r.
        int win[WINDOW];
        if (vectors) {
            const uint4 v[3] = {*(const uint4*)(row + x0 - BLOCK_PIXELS), *(const uint4*)(row + x0),
                                *(const uint4*)(row + x0 + BLOCK_PIXELS)};
#pragma unroll
            for (int c = 0; c < WINDOW; ++c) win[c] = byte_of(v, BLOCK_PIXELS - CONV_R + c);
        } else {
#pragma unroll
            for (int c = 0; c < WINDOW; ++c) {
                int sx = resolve(x0 - CONV_R + c, width, border);
                win[c] = sx < 0 ? 0 : row[sx];
            }
        }
#pragma unroll
        for (int k = 0; k < BLOCK_PIXELS; ++k)
#pragma unroll
            for (int j = 0; j < CONV_D; ++j) {
                s[k] += (acc_t)compiled_tap(i, j, false) * win[k + j];
                if (CONV_GRADIENT) t[k] += (acc_t)compiled_tap(i, j, true) * win[k + j];
            }
    }
    u8* o = out + plane + (size_t)y * width + x0;
    if (vectors) {
        unsigned w[4];
#pragma unroll
        for (int q = 0; q < 4; ++q)
            w[q] = conv_finish(s[4 * q], t[4 * q]) | conv_finish(s[4 * q + 1], t[4 * q + 1]) << 8 |
                   conv_finish(s[4 * q + 2], t[4 * q + 2]) << 16 | (unsigned)conv_finish(s[4 * q + 3], t[4 * q + 3]) << 24;
        *(uint4*)o = make_uint4(w[0], w[1], w[2], w[3]);
    } else {
#pragma unroll
        for (int k = 0; k < BLOCK_PIXELS; ++k)
            if (x0 + k < width) o[k] = conv_finish(s[k], t[k]);
    }
}
