// strip.cu — pattern: STENCIL WITH A ROLLING WINDOW (register blocking + column strips), the fast one.
//
// The seeds' "local memory" idea taken one step further: instead of staging a tile in shared memory,
// each thread owns a 16-pixel column strip and marches down `rows` rows, keeping three grey rows
// (above, here, below) in registers. Each step loads one new RGB row segment (three 16-byte loads),
// converts it to grey once, and writes 16 outputs with one 16-byte store. So every input byte is read
// from DRAM once (plus 2 halo rows per `rows`, and the 1-pixel neighbours, which hit the L1/L2
// caches), and every grey value is computed once — the kernel does what the roofline asks: read 3 bytes,
// write 1 byte per pixel. The loop is unrolled three times so that the rows' roles rotate by renaming
// registers instead of copying them. No shared memory, no barriers.
//
// Two rows of look-ahead hide the memory latency: the next row is already on its way into registers
// while this row is computed, and the row after it is asked into the L2 cache with a prefetch
// instruction (no register, no wait). Without the prefetch each step's loads wait for DRAM; with it,
// for L2 (measured: 16384² 302 → 269 µs; more rows ahead is slower, see STRIP_PREFETCH).
//
// Report section: goes beyond the report (its kernels read each input ~9 times through the caches).
// Launch shape: 1D grid of STRIP_THREADS-thread blocks over (band, group) pairs. The host picks `rows`
// so that all threads fit on the GPU at once (one wave, no tail) while filling it, but at least 4 rows a
// thread (measured best for small images: see `launch_strip` and docs/performance.md).
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh, row16.cuh); the host launches the
// ALIGNED form only when width % 16 == 0, the general form otherwise.
#include "row16.cuh"

#define STRIP_THREADS 128  // = launch.rs STRIP_THREADS

// How many rows beyond the next one each thread prefetches into L2. Measured on the H200 (this kernel,
// 7680×4320 / 16384², µs): 0 rows 43.6 / 298; 1 row 40.7 / 271; 2 rows 41.5 / 274; 3 rows 42.7 / 303;
// 4 rows 45.6 / 326: more look-ahead than the latency needs only crowds the L2 (docs/performance.md v0.6).
#ifndef STRIP_PREFETCH
#define STRIP_PREFETCH 1
#endif

// Ask the L2 cache for the 48 bytes of row y at group x0 (no register is written, nothing waits). One
// address per thread covers every 128-byte line of its warp's 1536-byte row segment.
__device__ __forceinline__ void prefetch_l2(const u8* __restrict__ rgb, int width, int y, int x0) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(rgb + ((size_t)y * width + x0) * 3));
}

// One step down the strip: row y+1 (its bytes already loaded into `next`) becomes grey row b, and output
// row y is written. Before converting, row y+2+STRIP_PREFETCH is asked into L2 and the loads of row y+2
// are issued (unless the band ends), so that their latency overlaps this step's arithmetic: software
// pipelining, two rows deep. The prefetch goes first: issued after the loads it cost 5 % (measured at
// 7680×4320: 42.7 → 40.5 µs, docs/performance.md v0.6).
__device__ __forceinline__ void strip_step(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                           int border, int y, int y_end, int x0, const int a[GROUP + 2],
                                           const int m[GROUP + 2], int b[GROUP + 2], Raw16& next) {
    Raw16 cur = next;
    if (y + 2 + STRIP_PREFETCH <= min(y_end, height - 1)) prefetch_l2(rgb, width, y + 2 + STRIP_PREFETCH, x0);
    if (y + 1 < y_end) next = load_raw16(rgb, width, height, border, y + 2, x0);
    grey_from_raw16(cur, width, border, x0, b);
    sobel_row16<true>(a, m, b, out + (size_t)y * width, x0, width);
}

// The general form (width not a multiple of 16): the same march, byte loads, no prefetch.
__device__ __forceinline__ void strip_step_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width,
                                                   int height, int border, int y, int x0, const int a[GROUP + 2],
                                                   const int m[GROUP + 2], int b[GROUP + 2]) {
    grey_row18<false>(rgb, width, height, border, y + 1, x0, b);
    sobel_row16<false>(a, m, b, out + (size_t)y * width, x0, width);
}

// Thread t owns group t mod groups (16 pixels wide) of band t / groups (`rows` rows high): threads are
// numbered across whole rows of groups, so no thread idles however the width divides by the block size.
template <bool ALIGNED>
__device__ __forceinline__ void strip(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                      int border, int rows) {
    int groups = (width + GROUP - 1) / GROUP;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    int x0 = (int)(t % groups) * GROUP, y = (int)(t / groups) * rows;
    if (y >= height) return;
    int y_end = min(y + rows, height);
    int r0[GROUP + 2], r1[GROUP + 2], r2[GROUP + 2];
    if (ALIGNED) {
        // All three first rows' loads (and the prefetches of the next ones) are in flight before any is
        // converted: one memory round trip.
        for (int k = y + 2; k <= min(y + 1 + STRIP_PREFETCH, min(y_end, height - 1)); ++k) prefetch_l2(rgb, width, k, x0);
        Raw16 above = load_raw16(rgb, width, height, border, y - 1, x0);
        Raw16 here = load_raw16(rgb, width, height, border, y, x0);
        Raw16 next = load_raw16(rgb, width, height, border, y + 1, x0);
        grey_from_raw16(above, width, border, x0, r0);
        grey_from_raw16(here, width, border, x0, r1);
        // Unrolled by three so that the rows' roles rotate by renaming registers instead of copying.
        for (; y + 3 <= y_end; y += 3) {
            strip_step(rgb, out, width, height, border, y, y_end, x0, r0, r1, r2, next);
            strip_step(rgb, out, width, height, border, y + 1, y_end, x0, r1, r2, r0, next);
            strip_step(rgb, out, width, height, border, y + 2, y_end, x0, r2, r0, r1, next);
        }
        if (y < y_end) strip_step(rgb, out, width, height, border, y, y_end, x0, r0, r1, r2, next);
        if (y + 1 < y_end) strip_step(rgb, out, width, height, border, y + 1, y_end, x0, r1, r2, r0, next);
    } else {
        grey_row18<false>(rgb, width, height, border, y - 1, x0, r0);
        grey_row18<false>(rgb, width, height, border, y, x0, r1);
        for (; y + 3 <= y_end; y += 3) {
            strip_step_general(rgb, out, width, height, border, y, x0, r0, r1, r2);
            strip_step_general(rgb, out, width, height, border, y + 1, x0, r1, r2, r0);
            strip_step_general(rgb, out, width, height, border, y + 2, x0, r2, r0, r1);
        }
        if (y < y_end) strip_step_general(rgb, out, width, height, border, y, x0, r0, r1, r2);
        if (y + 1 < y_end) strip_step_general(rgb, out, width, height, border, y + 1, x0, r1, r2, r0);
    }
}

extern "C" __global__ void __launch_bounds__(STRIP_THREADS)
    sobel_strip_aligned(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {
    strip<true>(rgb, out, width, height, border, rows);
}

extern "C" __global__ void __launch_bounds__(STRIP_THREADS)
    sobel_strip_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {
    strip<false>(rgb, out, width, height, border, rows);
}
