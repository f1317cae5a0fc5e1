// strip_prefetch.cuh — the prototype of gpu-strip's L2 prefetch (docs/performance.md v0.6), generated from
// cuda/strip.cu of that time with the prefetch distance `pf` as a run-time argument, for the sweep:
// 7680×4320 / 16384², µs: pf 0 43.6 / 298; 1 40.7 / 271; 2 41.5 / 274; 3 42.7 / 303; 4 45.6 / 326.
// No effect at 2048×1024 (8.8–9.0 µs at every pf). cuda/strip.cu now prefetches one row, before the loads.
#include "../../cuda/row16.cuh"

#define SPF_THREADS 128
__device__ __forceinline__ void prefetch_row(const u8* rgb, int width, int y, int x0) {
    const u8* p = rgb + ((size_t)y * width + x0) * 3;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}


// One step down the strip: row y+1 (its bytes already loaded into `next`) becomes grey row b, and output
// row y is written. Before converting, the loads of row y+2 are issued (unless the band ends), so that
// their latency overlaps this step's arithmetic: software pipelining, one row deep.
__device__ __forceinline__ void pf_step(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                           int border, int y, int y_end, int x0, const int a[GROUP + 2],
                                           const int m[GROUP + 2], int b[GROUP + 2], Raw16& next, int pf, int pf_last) {
    Raw16 cur = next;
    if (y + 2 + pf <= pf_last) prefetch_row(rgb, width, y + 2 + pf, x0);
    if (y + 1 < y_end) next = load_raw16(rgb, width, height, border, y + 2, x0);
    grey_from_raw16(cur, width, border, x0, b);
    sobel_row16<true>(a, m, b, out + (size_t)y * width, x0, width);
}

// The general form (width not a multiple of 16): the same march, byte loads, no prefetch.
__device__ __forceinline__ void pf_step_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width,
                                                   int height, int border, int y, int x0, const int a[GROUP + 2],
                                                   const int m[GROUP + 2], int b[GROUP + 2]) {
    grey_row18<false>(rgb, width, height, border, y + 1, x0, b);
    sobel_row16<false>(a, m, b, out + (size_t)y * width, x0, width);
}

// Thread t owns group t mod groups (16 pixels wide) of band t / groups (`rows` rows high): threads are
// numbered across whole rows of groups, so no thread idles however the width divides by the block size.
template <bool ALIGNED>
__device__ __forceinline__ void strip_pf(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                      int border, int rows, int pf) {
    int groups = (width + GROUP - 1) / GROUP;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    int x0 = (int)(t % groups) * GROUP, y = (int)(t / groups) * rows;
    if (y >= height) return;
    int y_end = min(y + rows, height);
    int r0[GROUP + 2], r1[GROUP + 2], r2[GROUP + 2];
    if (ALIGNED) {
        // All three first rows' loads are in flight before any is converted: one memory round trip.
        int pf_last = min(y_end, height - 1);
        for (int k = y + 2; k <= min(y + 1 + pf, pf_last); ++k) prefetch_row(rgb, width, k, x0);
        Raw16 above = load_raw16(rgb, width, height, border, y - 1, x0);
        Raw16 here = load_raw16(rgb, width, height, border, y, x0);
        Raw16 next = load_raw16(rgb, width, height, border, y + 1, x0);
        grey_from_raw16(above, width, border, x0, r0);
        grey_from_raw16(here, width, border, x0, r1);
        // Unrolled by three so that the rows' roles rotate by renaming registers instead of copying.
        for (; y + 3 <= y_end; y += 3) {
            pf_step(rgb, out, width, height, border, y, y_end, x0, r0, r1, r2, next, pf, pf_last);
            pf_step(rgb, out, width, height, border, y + 1, y_end, x0, r1, r2, r0, next, pf, pf_last);
            pf_step(rgb, out, width, height, border, y + 2, y_end, x0, r2, r0, r1, next, pf, pf_last);
        }
        if (y < y_end) pf_step(rgb, out, width, height, border, y, y_end, x0, r0, r1, r2, next, pf, pf_last);
        if (y + 1 < y_end) pf_step(rgb, out, width, height, border, y + 1, y_end, x0, r1, r2, r0, next, pf, pf_last);
    } else {
        grey_row18<false>(rgb, width, height, border, y - 1, x0, r0);
        grey_row18<false>(rgb, width, height, border, y, x0, r1);
        for (; y + 3 <= y_end; y += 3) {
            pf_step_general(rgb, out, width, height, border, y, x0, r0, r1, r2);
            pf_step_general(rgb, out, width, height, border, y + 1, x0, r1, r2, r0);
            pf_step_general(rgb, out, width, height, border, y + 2, x0, r2, r0, r1);
        }
        if (y < y_end) pf_step_general(rgb, out, width, height, border, y, x0, r0, r1, r2);
        if (y + 1 < y_end) pf_step_general(rgb, out, width, height, border, y + 1, x0, r1, r2, r0);
    }
}

extern "C" __global__ void __launch_bounds__(SPF_THREADS)
    spf(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows, int pf) {
    strip_pf<true>(rgb, out, width, height, border, rows, pf);
}
