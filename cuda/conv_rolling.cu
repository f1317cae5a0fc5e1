// conv_rolling.cu — pattern: a ROLLING WINDOW down a column (ours; gpu-strip's idea for any filter).
//
// Each thread owns one column x and marches down ROLL_ROWS output rows of it. Every input row it passes is read once
// — the 2r + 1 pixels x − r … x + r, which the warp's neighbouring threads share in L1 — and added at once into
// every output row it belongs to: input row y' is row i = y' − y + r of the window of output row y, for the 2r + 1
// outputs y = y' − r … y' + r. The thread keeps those 2r + 1 partial sums in registers (s[k] is output row
// y' − r + k) and, after each input row, the oldest one, s[0], is complete: it is written, and the ring moves up
// by one. So each input pixel is loaded 2r + 1 times (once per column that needs it) instead of (2r + 1)² times,
// without shared memory or barriers; the strip re-reads only its 2r halo rows. The taps are compiled in
// (CONV_TAPS): zero taps vanish, as in conv_predefined.cu; a gradient kernel keeps a second ring for Kᵀ.
//
// Launch shape: 2D grid of 128×1 blocks, each thread ROLL_ROWS rows of one column, grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh).
#include "sobel.cuh"
#include "conv.cuh"

#define ROLL_W 128
#ifndef ROLL_ROWS
#define ROLL_ROWS 32
#endif

extern "C" __global__ void __launch_bounds__(ROLL_W)
    conv_rolling(const u8* __restrict__ in, u8* __restrict__ out, int width, int height, int border) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    int x = blockIdx.x * ROLL_W + threadIdx.x, y0 = blockIdx.y * ROLL_ROWS;
    if (x >= width) return;
    size_t plane = (size_t)width * height * blockIdx.z;
    const u8* p = in + plane;
    bool inside = x >= CONV_R && x < width - CONV_R;
    int end = min(y0 + ROLL_ROWS, height);
    acc_t s[CONV_D], t[CONV_D];
#pragma unroll
    for (int k = 0; k < CONV_D; ++k) s[k] = 0, t[k] = 0;
    for (int yi = y0 - CONV_R; yi < end + CONV_R; ++yi) {
        int sy = resolve(yi, height, border);
        int v[CONV_D];
#pragma unroll
        for (int j = 0; j < CONV_D; ++j) {
            int sx = inside ? x + j - CONV_R : resolve(x + j - CONV_R, width, border);
            v[j] = sy < 0 || sx < 0 ? 0 : p[(size_t)sy * width + sx];
        }
        // Input row yi is window row 2r − k of output row yi − r + k.
#pragma unroll
        for (int k = 0; k < CONV_D; ++k)
#pragma unroll
            for (int j = 0; j < CONV_D; ++j) {
                s[k] += (acc_t)compiled_tap(2 * CONV_R - k, j, false) * v[j];
                if (CONV_GRADIENT) t[k] += (acc_t)compiled_tap(2 * CONV_R - k, j, true) * v[j];
            }
        int yo = yi - CONV_R;  // s[0] has had all its rows
        if (yo >= y0) out[plane + (size_t)yo * width + x] = conv_finish(s[0], t[0]);
#pragma unroll
        for (int k = 0; k + 1 < CONV_D; ++k) s[k] = s[k + 1], t[k] = t[k + 1];
        s[CONV_D - 1] = 0, t[CONV_D - 1] = 0;
    }
}
