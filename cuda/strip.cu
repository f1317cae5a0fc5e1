// strip.cu — pattern: STENCIL WITH A ROLLING WINDOW (register blocking + column strips), the fast one.
//
// The seeds' "local memory" idea taken one step further: instead of staging a tile in shared memory,
// each thread owns a 16-pixel column strip and marches along `rows` rows, keeping three grey rows
// (behind, here, ahead) in registers. Each step loads one new RGB row segment (three 16-byte loads),
// converts it to grey once, and writes 16 outputs with one 16-byte store. So every input byte is read
// from DRAM once (the 2 halo rows of each band and the 1-pixel neighbours hit the L1/L2 caches), and
// every grey value is computed once — the kernel does what the roofline asks: read 3 bytes, write 1 byte
// per pixel. The loop is unrolled three times so that the rows' roles rotate by renaming registers
// instead of copying them. No shared memory, no barriers.
//
// Two rows of look-ahead hide the memory latency: the next row is already on its way into registers
// while this row is computed, and the row after it is asked into the L2 cache with a prefetch
// instruction (no register, no wait). Without the prefetch each step's loads wait for DRAM; with it,
// for L2 (the measurement, and why more rows ahead is slower, is at STRIP_PREFETCH below).
//
// Alternate bands march in opposite directions (even bands down, odd bands up), so that the two bands
// meeting at a boundary read its rows at the same moment — both at their start or both at their end —
// and the second read hits the L2. Marching all one way, band b reads its top halo at its start and band
// b−1 reads the same rows at its end, long evicted: 6 % more DRAM reads at 7680×4320 (measured with ncu:
// 106.0 → 99.6 MB, the input's size; 41.5 → 39.9 µs, all else equal). Going up, the rows behind and
// ahead swap roles: Gy changes sign, Gy² and so the magnitude do not.
//
// Report section: goes beyond the report (its kernels read each input ~9 times through the caches).
// Launch shape: 1D grid of STRIP_THREADS-thread blocks over (band, group) pairs. The host picks `rows`
// so that all threads fit on the GPU at once (one wave, no tail) while filling it, but at least 4 rows a
// thread (measured best for small images: see MIN_ROWS in src/gpu/patterns/strip.rs).
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh, row16.cuh); the host launches the
// ALIGNED form only when width % 16 == 0, the general form otherwise.
#include "row16.cuh"

#ifndef STRIP_THREADS
#define STRIP_THREADS 128  // = THREADS in src/gpu/patterns/strip.rs (bench/probe may set others, to measure them)
#endif

// Timestamps for bench/probe/trace.cu (when a march's rows arrive and its steps end); empty in cuda_sobel.
#ifndef STRIP_HOOK
#define STRIP_HOOK(point)
#endif

// How many rows beyond the next one each thread prefetches into L2. Measured on the H200 (this kernel,
// 7680×4320 / 16384², µs): 0 rows 43.6 / 298; 1 row 40.7 / 271; 2 rows 41.5 / 274; 3 rows 42.7 / 303;
// 4 rows 45.6 / 326: more look-ahead than the latency needs only crowds the L2 (docs/performance.md v0.6).
#ifndef STRIP_PREFETCH
#define STRIP_PREFETCH 1
#endif
#define STRIP_AHEAD (2 + STRIP_PREFETCH)  // the prefetched row, counted from the step's output row

// 1: odd bands march up (above). 0 (for measuring): every band marches down.
#ifndef STRIP_ZIGZAG
#define STRIP_ZIGZAG 1
#endif

// Ask the L2 cache for the line holding p, a group's first byte (no register is written, nothing waits).
// One address per thread covers every 128-byte line of its warp's row segment.
__device__ __forceinline__ void prefetch_l2(const u8* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// Where a band's march is. The march walks pointers, so that the code is the same in both directions:
// `in` is the group's bytes in the step's output row, `o` that output row, and `in_step`/`out_step` the
// distances to the next row (± one image row). `far` is the far halo row (the row after the last output
// row), which the border rule may move or make 0 (nullptr); `prefetch_end` is n + 1 if that row is in the
// image, else n: the rows 0 … prefetch_end − 1 of the march (counted from the first output row) may be
// prefetched.
struct March {
    const u8* in;
    u8* o;
    ptrdiff_t in_step, out_step;
    const u8* far;
    int n, prefetch_end;
};

// One step of the march: output row k of n. Row k+1 (its bytes already loaded into `next`) becomes grey
// row b, and output row k is written. Before converting, row k+STRIP_AHEAD is asked into L2 and the loads
// of row k+2 are issued (unless the band ends), so that their latency overlaps this step's arithmetic:
// software pipelining, two rows deep. INTERIOR: the caller guarantees k + STRIP_AHEAD < n, so both rows
// are inside the band and no test is needed (measured: 12 % fewer instructions, 40.0 → 39.4 µs at
// 7680×4320).
template <bool INTERIOR>
__device__ __forceinline__ void strip_step(const March& s, int k, int width, int border, int x0, const int a[GROUP + 2],
                                           const int m[GROUP + 2], int b[GROUP + 2], Raw16& next) {
    const u8* in = s.in + k * s.in_step;
    Raw16 cur = next;
    if (INTERIOR) {
        prefetch_l2(in + STRIP_AHEAD * s.in_step);
        next = load_group(in + 2 * s.in_step, width, x0);
    } else {
        if (k + STRIP_AHEAD < s.prefetch_end) prefetch_l2(k + STRIP_AHEAD < s.n ? in + STRIP_AHEAD * s.in_step : s.far);
        if (k + 1 < s.n) next = load_raw16_at(k + 2 < s.n ? in + 2 * s.in_step : s.far, width, x0);
    }
    grey_from_raw16(cur, width, border, x0, b);
    sobel_row16<true>(a, m, b, s.o + k * s.out_step, x0, width);
    STRIP_HOOK(3 + k);
}

// Thread t owns group t mod groups (16 pixels wide) of band t / groups (`rows` rows high). Threads are
// numbered across whole rows of groups, so no thread idles however the width divides by the block size.
// Both forms start here: false for a thread past the image's last band.
struct Band {
    int x0, n, dir, y;  // group's first column, output rows, +1 down or −1 up, first output row
};
__device__ __forceinline__ bool thread_band(int width, int height, int rows, Band& b) {
    int groups = (width + GROUP - 1) / GROUP;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    int band = (int)(t / groups), top = band * rows;
    if (top >= height) return false;
    b.x0 = (int)(t % groups) * GROUP;
    b.n = min(rows, height - top);
    b.dir = STRIP_ZIGZAG && (band & 1) ? -1 : 1;
    b.y = b.dir > 0 ? top : top + b.n - 1;  // the last output row is y + (n − 1)·dir
    return true;
}

// The aligned form (width % 16 == 0).
__device__ __forceinline__ void strip_aligned(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                              int border, int rows) {
    Band band;
    if (!thread_band(width, height, rows, band)) return;
    STRIP_HOOK(0);
    const int x0 = band.x0, n = band.n, dir = band.dir, y = band.y;
    int y_far = y + n * dir;
    March s = {rgb + ((size_t)y * width + x0) * 3,
               out + (size_t)y * width,
               (ptrdiff_t)dir * width * 3,
               (ptrdiff_t)dir * width,
               group_ptr(rgb, width, height, border, y_far, x0),
               n,
               (unsigned)y_far < (unsigned)height ? n + 1 : n};
    // All three first rows' loads are in flight before any is converted (one memory round trip), and
    // the rows after them are asked into L2 behind those loads, not ahead of them: the first rows are
    // needed first (measured at 7680×4320: 39.5 → 38.7 µs; docs/performance.md v0.7).
    Raw16 behind = load_raw16(rgb, width, height, border, y - dir, x0);
    Raw16 here = load_group(s.in, width, x0);
    Raw16 next = load_raw16_at(n > 1 ? s.in + s.in_step : s.far, width, x0);
    for (int j = 2; j < STRIP_AHEAD && j < s.prefetch_end; ++j) prefetch_l2(j < n ? s.in + j * s.in_step : s.far);
    int r0[GROUP + 2], r1[GROUP + 2], r2[GROUP + 2];
    grey_from_raw16(behind, width, border, x0, r0);
    STRIP_HOOK(1);
    grey_from_raw16(here, width, border, x0, r1);
    STRIP_HOOK(2);
    // Unrolled by three so that the rows' roles rotate by renaming registers instead of copying. The
    // first loop runs while every step's rows are inside the band, the second finishes the band.
    int k = 0;
    for (; k + 2 + STRIP_AHEAD < n; k += 3) {
        strip_step<true>(s, k, width, border, x0, r0, r1, r2, next);
        strip_step<true>(s, k + 1, width, border, x0, r1, r2, r0, next);
        strip_step<true>(s, k + 2, width, border, x0, r2, r0, r1, next);
    }
    for (; k + 3 <= n; k += 3) {
        strip_step<false>(s, k, width, border, x0, r0, r1, r2, next);
        strip_step<false>(s, k + 1, width, border, x0, r1, r2, r0, next);
        strip_step<false>(s, k + 2, width, border, x0, r2, r0, r1, next);
    }
    if (k < n) strip_step<false>(s, k, width, border, x0, r0, r1, r2, next);
    if (k + 1 < n) strip_step<false>(s, k + 1, width, border, x0, r1, r2, r0, next);
}

// The general form (any width): the same march on 16-pixel groups, byte loads through the border rule,
// no prefetch.
__device__ __forceinline__ void strip_step_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width,
                                                   int height, int border, int y, int dir, int x0,
                                                   const int a[GROUP + 2], const int m[GROUP + 2], int b[GROUP + 2]) {
    grey_row18<false>(rgb, width, height, border, y + dir, x0, b);
    sobel_row16<false>(a, m, b, out + (size_t)y * width, x0, width);
}

__device__ __forceinline__ void strip_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                              int border, int rows) {
    Band band;
    if (!thread_band(width, height, rows, band)) return;
    const int x0 = band.x0, n = band.n, dir = band.dir;
    int y = band.y;
    int r0[GROUP + 2], r1[GROUP + 2], r2[GROUP + 2];
    grey_row18<false>(rgb, width, height, border, y - dir, x0, r0);
    grey_row18<false>(rgb, width, height, border, y, x0, r1);
    int k = 0;
    for (; k + 3 <= n; k += 3, y += 3 * dir) {
        strip_step_general(rgb, out, width, height, border, y, dir, x0, r0, r1, r2);
        strip_step_general(rgb, out, width, height, border, y + dir, dir, x0, r1, r2, r0);
        strip_step_general(rgb, out, width, height, border, y + 2 * dir, dir, x0, r2, r0, r1);
    }
    if (k < n) strip_step_general(rgb, out, width, height, border, y, dir, x0, r0, r1, r2);
    if (k + 1 < n) strip_step_general(rgb, out, width, height, border, y + dir, dir, x0, r1, r2, r0);
}

// A batch of equally sized images, packed one after another, is one launch: blockIdx.y picks the image
// (gridDim.y = 1 for one image). Each image keeps its own borders.
__device__ __forceinline__ size_t image_offset(int width, int height) {
    return (size_t)blockIdx.y * (size_t)width * (size_t)height;
}

extern "C" __global__ void __launch_bounds__(STRIP_THREADS)
    sobel_strip_aligned(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {
    size_t o = image_offset(width, height);
    strip_aligned(rgb + 3 * o, out + o, width, height, border, rows);
}

extern "C" __global__ void __launch_bounds__(STRIP_THREADS)
    sobel_strip_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {
    size_t o = image_offset(width, height);
    strip_general(rgb + 3 * o, out + o, width, height, border, rows);
}
