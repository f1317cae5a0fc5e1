// strip.cu — pattern: STENCIL WITH A ROLLING WINDOW (register blocking + column strips), the fast one.
//
// The seeds' "local memory" idea taken one step further: instead of staging a tile in shared memory,
// each thread owns a 16-pixel column strip and marches along `rows` rows, keeping what the stencil still
// needs of the rows behind it in registers. Each step loads one new RGB row segment (three 16-byte loads and
// the neighbours' words), converts it to grey once, and writes 16 outputs with one 16-byte store. So every
// input byte is read from DRAM once (the halo rows of each band and the neighbour pixels hit the L1/L2
// caches), and every grey value is computed once — the kernel does what the roofline asks: read 3 bytes,
// write 1 byte per pixel. For any kernel size the stencil is the 3×3 one on a binomially smoothed image
// (row16.cuh): the new row is smoothed along itself, then down the columns through L running sums a column
// (two columns to a 32-bit add), and three rows of the result (behind, here, ahead) feed the 3×3 step. The
// loop is unrolled three times so that those rows' roles rotate by renaming registers instead of copying them.
// No barriers.
//
// Look-ahead hides the memory latency. The 3×3 edges: the next row is already on its way into registers while
// this row is computed, and the row after it is asked into the L2 cache with a prefetch instruction (no
// register, no wait); without the prefetch each step's loads wait for DRAM, with it for L2 (the measurement,
// and why more rows ahead is slower, is at STRIP_PREFETCH below). The 3×3 gradients, whose steps move more
// bytes: a ring of rows in flight into the thread's own shared memory (STRIP_RING below), more bytes on their way
// without holding registers.
//
// Alternate bands march in opposite directions (even bands down, odd bands up), so that the two bands
// meeting at a boundary read its rows at the same moment — both at their start or both at their end —
// and the second read hits the L2. Marching all one way, band b reads its top halo at its start and band
// b−1 reads the same rows at its end, long evicted: 6 % more DRAM reads at 7680×4320 (measured with ncu:
// 106.0 → 99.6 MB, the input's size; 41.5 → 39.9 µs, all else equal). Going up, the rows behind and
// ahead swap roles: Gy changes sign (put back for the outputs that keep it), Gy² and so the magnitude do not.
//
// Report section: goes beyond the report (its kernels read each input ~9 times through the caches).
// Launch shape: 1D grid of STRIP_THREADS-thread blocks over (band, group) pairs. The host picks `rows`
// so that all threads fit on the GPU at once (one wave, no tail) while filling it, but at least 4 rows a
// thread (measured best for small images: see MIN_ROWS in core/src/gpu/patterns/strip.rs).
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh, row16.cuh); the host launches the
// ALIGNED form only when width % 16 == 0 and both arrays are 16-byte aligned, the general form otherwise (its groups
// inside a row march the same way, their rows read shifted into place; those at a row's ends through a column map).
#include "row16.cuh"

#ifndef STRIP_THREADS
#define STRIP_THREADS 128  // = THREADS in core/src/gpu/patterns/strip.rs (bench/probe may set others, to measure them)
#endif

// Blocks of STRIP_THREADS each SM must hold at once, for the aligned form: ptxas keeps the registers a thread
// uses within what that leaves (65 536 / (threads · blocks)). The 3×3 march fits 4 blocks (128 registers,
// no spill: examples/kernel_resources.rs), as it did before the stencil became a value, measured fastest;
// unbounded, ptxas took 154. The wider stencils keep rows of running sums and are
// left to ptxas (asking 3 blocks of the 5×5 spills).
#ifndef STRIP_MIN_BLOCKS
#define STRIP_MIN_BLOCKS (RADIUS == 1 ? 4 : 1)
#endif

// Timestamps for bench/probe/trace.cu (when a march's rows arrive and its steps end); empty in cuda_sobel.
#ifndef STRIP_HOOK
#define STRIP_HOOK(point)
#endif

// THE RING: how many rows ahead each thread has on their way from DRAM into its own slots of shared memory
// (cp.async: the copy runs while the thread computes, and holds no register). 0: the register form, one row
// ahead in registers and one more asked into L2 (below). The slots are the thread's own: it copies its bytes,
// waits for them and reads them itself, so no barrier. Measured on the H200 (µs at
// 16384², 3 rows against the register form, each pair in one lease): 5×5 edges 347 against 373 (73.1 against
// 68.0 % of the copy bandwidth), 3×3 gradients of 16 × 1920×1080 from torch 89 against 99; 2, 4 or 6 rows the
// same as 3. The 3×3 edges (276 against 270, two leases) and the 7×7 (479 against 449: its loop, already the
// longest, grows) are faster in the register form and keep it. Since the smoothing runs on packed pairs
// the 5×5 edges need 147 registers either way and the ring's copies cost 2 instructions a pixel: on an H100 the
// register form is faster (16384²: 382.5 against 392.1 µs; 7680×4320: 57.5 against 59.6), so the 5×5 left the
// ring. The copies go through L1 (.ca): L2-only copies (.cg) of a thread's three 16-byte words, 48 bytes apart,
// fetched the warp's lines three times (1.6× slower).
#ifndef STRIP_RING
#define STRIP_RING (RADIUS == 1 && OUTPUT != OUTPUT_EDGES ? 3 : 0)
#endif

// How many rows beyond the next one each thread prefetches into L2 (register form; with the ring, beyond the
// ring's last row: default none). Measured on the H200 (the 3×3 kernel, register form, 7680×4320 / 16384², µs):
// 0 rows 43.6 / 298; 1 row 40.7 / 271; 2 rows 41.5 / 274; 3 rows 42.7 / 303;
// 4 rows 45.6 / 326: more look-ahead than the latency needs only crowds the L2.
// The 5×5 and 7×7 marches held more registers (206 and 254 a thread, 8 warps an SM, before the smoothing ran on packed pairs), so fewer
// loads are in flight; prefetching further makes up part of it: 5×5, 1 row 65.0 / 435; 2 rows 55.7 / 382;
// 3 rows 54.8 / 372.
#ifndef STRIP_PREFETCH
#define STRIP_PREFETCH (STRIP_RING > 0 ? 0 : RADIUS == 1 ? 1 : 3)
#endif
// Rows are counted from the march's first output row, in its direction. Step k (output row k) feeds the
// grey row k + RADIUS (whose last running sum completes U's row k + 1), asks for row k + RADIUS + 1 (register
// form) or k + RADIUS + STRIP_RING (ring) for a later step, and prefetches row k + STRIP_AHEAD.
#define STRIP_FETCH (RADIUS + (STRIP_RING > 0 ? STRIP_RING : 1))
#define STRIP_AHEAD (STRIP_FETCH + STRIP_PREFETCH)

// 1: odd bands march up (above). 0 (for measuring): every band marches down.
#ifndef STRIP_ZIGZAG
#define STRIP_ZIGZAG 1
#endif

// prefetch_l2 (sobel.cuh): one address per thread covers every 128-byte line of its warp's row segment.

// Where a band's march is. The march walks pointers, so that the code is the same in both directions:
// `in` is the group's bytes in the first output row, `in_step` the distance to the next row (± one image row),
// `o` the first output row and `out_step` likewise. The RADIUS rows after the band's last output row (its far
// halo) are found once, through the border rule, into `far` (nullptr: a row of zeros); the near halo only
// primes the march, before it starts.
struct March {
    const u8* in;
    out_t* o;
    ptrdiff_t in_step, out_step;
    const u8 *far0, *far1, *far2;  // rows n, n + 1, n + 2 (those within RADIUS)
    int width, x0, n;
    bool up;
    size_t plane;
    uint4* stage;  // the warp's store_warp stage (row16.cuh), or nullptr: each lane stores its own group

    // Row j's bytes, for 0 ≤ j < n + RADIUS: inside the band by arithmetic, beyond it from the far rows (fields
    // and selects, not an array: a run-time index into an array, or the struct's address, would move it to
    // local memory — measured: 72 bytes of stack a thread at 5×5 with an array).
    __device__ __forceinline__ const u8* row(int j) const {
        if (j < n) return in + j * in_step;
        return RADIUS > 2 && j - n == 2 ? far2 : (RADIUS > 1 && j - n == 1 ? far1 : far0);
    }
};

#if STRIP_RING > 0
// The ring's slots: row f of the march (counting every row it feeds, priming rows first) goes to slot f mod
// STRIP_RING. Laid out [slot][word][thread], so that a warp's 16-byte reads of one word are 512 consecutive
// bytes (no bank conflicts).
__shared__ uint4 ring_mid[STRIP_RING][3][STRIP_THREADS];
__shared__ unsigned ring_side[STRIP_RING][2 * SIDE_WORDS][STRIP_THREADS];
// The shifted form's slots (rows not 16-byte aligned): the GROUP_UNITS aligned 16-byte units holding the group's words,
// shifted into place when taken (row16.cuh's load_group_shifted, with the copy in between).
__shared__ uint4 ring_units[STRIP_RING][GROUP_UNITS][STRIP_THREADS];

// One asynchronous copy of BYTES (4 or 16) from global to shared memory; `valid` false fills zeros instead
// (a row the border rule makes 0, a neighbour past the image's edge). Before sm_80 (no cp.async) a plain copy.
template <int BYTES>
__device__ __forceinline__ void copy_async(void* to, const void* from, bool valid) {
#if __CUDA_ARCH__ >= 800
    unsigned dst = (unsigned)__cvta_generic_to_shared(to);
    if (BYTES == 16)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(from), "r"(valid ? 16 : 0));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(from), "r"(valid ? 4 : 0));
#else
    if (BYTES == 16)
        *static_cast<uint4*>(to) = valid ? __ldg(static_cast<const uint4*>(from)) : make_uint4(0, 0, 0, 0);
    else
        *static_cast<unsigned*>(to) = valid ? __ldg(static_cast<const unsigned*>(from)) : 0u;
#endif
}

// Closes the copies issued since the last call into one group. Every fill commits one group, empty or not,
// so that "the row filled STRIP_RING fills ago" is always "the oldest group".
__device__ __forceinline__ void ring_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;");
#endif
}

// Row `p`'s group into slot `slot` (p: a row inside the image, or nullptr for a row of zeros; `live` false: no
// copy at all, past the band's last row). SHIFTED: the shifted form's units.
template <bool SHIFTED>
__device__ __forceinline__ void ring_fill(int slot, const u8* p, bool live, int width, int x0) {
    if (live) {
        unsigned t = threadIdx.x;
        if constexpr (SHIFTED) {
            const u8* first = p ? p - 4 * SIDE_WORDS : reinterpret_cast<const u8*>(ring_units);  // (any valid address)
            const u8* base = first - (size_t)first % 16;
#pragma unroll
            for (int c = 0; c < GROUP_UNITS; ++c) copy_async<16>(&ring_units[slot][c][t], base + 16 * c, p != nullptr);
        } else {
            const u8* src = p ? p : reinterpret_cast<const u8*>(ring_mid);  // any valid address when nothing is read
#pragma unroll
            for (int c = 0; c < 3; ++c) copy_async<16>(&ring_mid[slot][c][t], src + 16 * c, p != nullptr);
            Sides sides = group_sides(src, width, x0);
            bool left = p && sides.has_left, right = p && sides.has_right;
#pragma unroll
            for (int i = 0; i < SIDE_WORDS; ++i) {
                copy_async<4>(&ring_side[slot][i][t], left ? static_cast<const void*>(sides.left + i) : src, left);
                copy_async<4>(&ring_side[slot][SIDE_WORDS + i][t], right ? static_cast<const void*>(sides.right + i) : src, right);
            }
        }
    }
    ring_commit();
}

// The oldest group's row, from slot `slot`, once its copies have landed; `p` is where that row was copied from (the
// shifted form's shift; nullptr: a row of zeros).
template <bool SHIFTED>
__device__ __forceinline__ Raw16 ring_take(int slot, const u8* p) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(STRIP_RING - 1) : "memory");
#endif
    unsigned t = threadIdx.x;
    if constexpr (SHIFTED) {
        unsigned a[4 * GROUP_UNITS], w[GROUP_WORDS];
#pragma unroll
        for (int c = 0; c < GROUP_UNITS; ++c) {
            uint4 v = ring_units[slot][c][t];
            a[4 * c] = v.x, a[4 * c + 1] = v.y, a[4 * c + 2] = v.z, a[4 * c + 3] = v.w;
        }
        words_shifted<16>(a, (unsigned)((size_t)p - 4 * SIDE_WORDS) % 16, w);
        return raw16_of(w);
    } else {
        (void)p;
        Raw16 r;
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            uint4 v = ring_mid[slot][c][t];
            r.mid[4 * c] = v.x, r.mid[4 * c + 1] = v.y, r.mid[4 * c + 2] = v.z, r.mid[4 * c + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < SIDE_WORDS; ++i) r.left[i] = ring_side[slot][i][t], r.right[i] = ring_side[slot][SIDE_WORDS + i][t];
        return r;
    }
}
__device__ __forceinline__ int ring_next(int slot) { return slot + 1 == STRIP_RING ? 0 : slot + 1; }
#endif

// A raw row into U: grey, smoothed along the row, then down the columns; `u` gets U's row (the row fed
// minus L/2, once L rows have been fed).
__device__ __forceinline__ void feed(const Raw16& raw, int width, int border, int x0, Levels state, acc_t u[CORE]) {
    int g[WIDE];
    grey_wide(raw, width, border, x0, g);
    smooth(g, state, u);
}

// What the march has on its way: the next row's bytes in registers (register form), or the ring's oldest slot.
struct Ahead {
#if STRIP_RING > 0
    int slot;
#else
    Raw16 next;
#endif
};

// One step of the march: output row k of n. Row k + RADIUS (its bytes already on their way) completes U's row
// k + 1 into b, and output row k is written from a, m, b. Before converting, row k + STRIP_FETCH is asked for
// (unless the band has no such row) and row k + STRIP_AHEAD into L2, so that their latency overlaps this and the
// following steps' arithmetic: software pipelining. INTERIOR: the caller guarantees k + STRIP_AHEAD < n, so
// every row is inside the band and no test is needed (measured: 12 % fewer instructions, 40.0 → 39.4 µs at
// 7680×4320). SHIFTED: the rows are read shifted into place and the outputs stored as words at any alignment.
template <bool INTERIOR, bool SHIFTED>
__device__ __forceinline__ void strip_step(const March& s, int k, int border, Levels state, const acc_t a[CORE],
                                           const acc_t m[CORE], acc_t b[CORE], Ahead& ahead) {
    const u8* in = s.in + k * s.in_step;
    if (STRIP_PREFETCH > 0) {
        if (INTERIOR) {
            prefetch_l2(in + STRIP_AHEAD * s.in_step);
        } else if (k + STRIP_AHEAD < s.n + RADIUS) {
            const u8* p = s.row(k + STRIP_AHEAD);
            if (p) prefetch_l2(p);
        }
    }
    const bool live = INTERIOR || k + STRIP_FETCH < s.n + RADIUS;
    const u8* fetch = INTERIOR ? in + STRIP_FETCH * s.in_step : s.row(k + STRIP_FETCH);
#if STRIP_RING > 0
    const u8* taken = SHIFTED ? (INTERIOR ? in + RADIUS * s.in_step : s.row(k + RADIUS)) : nullptr;  // row k + RADIUS
    Raw16 cur = ring_take<SHIFTED>(ahead.slot, taken);
    ring_fill<SHIFTED>(ahead.slot, fetch, live, s.width, s.x0);  // into the slot just read
    ahead.slot = ring_next(ahead.slot);
#else
    Raw16 cur = ahead.next;
    if (live) ahead.next = INTERIOR ? load_at<SHIFTED>(fetch, s.width, s.x0) : load_raw16_at<SHIFTED>(fetch, s.width, s.x0);
#endif
    feed(cur, s.width, border, s.x0, state, b);
    sobel_row16<SHIFTED ? STORE_VALUES : STORE_WORDS>(a, m, b, s.o + k * s.out_step, s.plane, s.x0, s.width, s.up,
                                                      s.stage);
    STRIP_HOOK(3 + k);
}

// Which band of rows (`rows` high, its march's direction) and which group (16 pixels wide) a thread owns; band_of is
// false past the image's last band. The aligned kernel's thread t owns group t mod groups of band t / groups: threads
// numbered across whole rows of groups, so no thread idles however the width divides by the block size (the general
// kernel's numbering, with its edge groups apart, is below).
struct Band {
    int x0, n, dir, y;  // group's first column, output rows, +1 down or −1 up, first output row
};
__device__ __forceinline__ bool band_of(int band, int height, int rows, Band& b) {
    int top = band * rows;
    if (top >= height) return false;
    b.n = min(rows, height - top);
    b.dir = STRIP_ZIGZAG && (band & 1) ? -1 : 1;
    b.y = b.dir > 0 ? top : top + b.n - 1;  // the last output row is y + (n − 1)·dir
    return true;
}
__device__ __forceinline__ bool thread_band(int width, int height, int rows, Band& b) {
    int groups = (width + GROUP - 1) / GROUP;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (!band_of((int)(t / groups), height, rows, b)) return false;
    b.x0 = (int)(t % groups) * GROUP;  // after the test: formed before it, ptxas spilled
    return true;
}

// The march of one band (both forms of the rows inside a row's ends: aligned, or SHIFTED).
template <bool SHIFTED>
__device__ __forceinline__ void strip_march(const u8* __restrict__ rgb, out_t* __restrict__ out, size_t plane,
                                            int width, int height, int border, const Band& band, uint4* stage) {
    STRIP_HOOK(0);
    const int x0 = band.x0, dir = band.dir, y = band.y;
    auto far = [&](int i) { return i < RADIUS ? group_ptr(rgb, width, height, border, y + (band.n + i) * dir, x0) : nullptr; };
    March s = {rgb + ((size_t)y * width + x0) * 3,
               out + (size_t)y * width,
               (ptrdiff_t)dir * width * 3,
               (ptrdiff_t)dir * width,
               far(0),
               far(1),
               far(2),
               width,
               x0,
               band.n,
               dir < 0,
               plane,
               stage};
    // Row j of the march (j < 0: the near halo, through the border rule).
    auto row_at = [&](int j) { return j < 0 ? group_ptr(rgb, width, height, border, y + j * dir, x0) : s.row(j); };
    // The rows before the first output row (−RADIUS … RADIUS − 1) prime U: every load is in flight before any
    // is converted (one memory round trip), and the rows after them are asked for behind those loads, not
    // ahead of them: the first rows are needed first (measured at 7680×4320: 39.5 → 38.7 µs).
    Ahead ahead;
#if STRIP_RING > 0
    // The ring's first STRIP_RING rows, −RADIUS onwards; each row primed is replaced by the one STRIP_RING
    // further on.
#pragma unroll
    for (int f = 0; f < STRIP_RING; ++f) ring_fill<SHIFTED>(f, row_at(f - RADIUS), f < s.n + 2 * RADIUS, width, x0);
    ahead.slot = 0;
    auto primed = [&](int f) {
        Raw16 r = ring_take<SHIFTED>(ahead.slot, row_at(f - RADIUS));
        ring_fill<SHIFTED>(ahead.slot, row_at(f + STRIP_RING - RADIUS), f + STRIP_RING < s.n + 2 * RADIUS, width, x0);
        ahead.slot = ring_next(ahead.slot);
        return r;
    };
#else
    Raw16 first[2 * RADIUS];
#pragma unroll
    for (int f = 0; f < 2 * RADIUS; ++f) first[f] = load_raw16_at<SHIFTED>(row_at(f - RADIUS), width, x0);
    ahead.next = load_raw16_at<SHIFTED>(s.row(RADIUS), width, x0);
    auto primed = [&](int f) { return first[f]; };
#endif
#pragma unroll
    for (int j = STRIP_FETCH; j < STRIP_AHEAD; ++j) {
        const u8* p = s.row(j);
        if (p && j < s.n + RADIUS) prefetch_l2(p);
    }
    Levels state = {};
    acc_t r0[CORE], r1[CORE], r2[CORE];
    // U's rows −1 and 0 come out of the last two rows fed; the earlier ones only fill the running sums (r2,
    // written by the first step, takes their results).
#pragma unroll
    for (int f = 0; f < 2 * RADIUS - 2; ++f) feed(primed(f), width, border, x0, state, r2);
    feed(primed(2 * RADIUS - 2), width, border, x0, state, r0);
    STRIP_HOOK(1);
    feed(primed(2 * RADIUS - 1), width, border, x0, state, r1);
    STRIP_HOOK(2);
    const int n = band.n;
    // Unrolled by three so that the rows' roles rotate by renaming registers instead of copying. The
    // first loop runs while every step's rows are inside the band, the second finishes the band.
    int k = 0;
    for (; k + 2 + STRIP_AHEAD < n; k += 3) {
        strip_step<true, SHIFTED>(s, k, border, state, r0, r1, r2, ahead);
        strip_step<true, SHIFTED>(s, k + 1, border, state, r1, r2, r0, ahead);
        strip_step<true, SHIFTED>(s, k + 2, border, state, r2, r0, r1, ahead);
    }
    for (; k + 3 <= n; k += 3) {
        strip_step<false, SHIFTED>(s, k, border, state, r0, r1, r2, ahead);
        strip_step<false, SHIFTED>(s, k + 1, border, state, r1, r2, r0, ahead);
        strip_step<false, SHIFTED>(s, k + 2, border, state, r2, r0, r1, ahead);
    }
    if (k < n) strip_step<false, SHIFTED>(s, k, border, state, r0, r1, r2, ahead);
    if (k + 1 < n) strip_step<false, SHIFTED>(s, k + 1, border, state, r1, r2, r0, ahead);
}

// THE GROUPS AT A ROW'S ENDS (the general kernel's, outside `groups_inside`): the same march, each row's window
// (pixels x0 − RADIUS … x0 + 15 + RADIUS) a pixel at a time from the columns the border rule picks, resolved once a
// march into a column map in shared memory (`map_columns`, sobel.cuh), not at every row: resolving them at every row
// took 143 instructions a pixel (NVRTC sm_90, the 3×3 edges) against the aligned form's 21, and these groups, one or
// three of a row, would hold the launch.
__shared__ unsigned edge_columns[MAP_WORDS_OF(WIDE) + 1][STRIP_THREADS];

// Grey of row y's window (through the border rule), each column where the map says, GATHER_BATCH columns at a time
// with a branch between batches (skipping a batch the rule makes 0). With no branch the compiler issued all 3·WIDE byte
// loads at once, and the kernel, whose register count is its largest path's, spilled more in the shifted form's march
// (NVRTC sm_90, the 3×3 edges at 128 registers: 120 spill instructions with all at once, 51 with batches of 4 to 9,
// 13 with no edge path). A batch is a memory round trip that an edge group's warp waits for: batches of 9 make two a
// row (3×3) instead of five.
#ifndef GATHER_BATCH
#define GATHER_BATCH 9
#endif
__device__ __forceinline__ void grey_row_mapped(const u8* __restrict__ rgb, int width, int height, int border, int y,
                                                int x0, int g[WIDE]) {
    int sy = resolve(y, height, border);
    const unsigned inside = sy < 0 ? 0u : edge_columns[MAP_WORDS_OF(WIDE)][threadIdx.x];
    const u8* at = rgb + ((size_t)max(sy, 0) * width + x0) * 3;  // pixel x0; column c is at + 3·(d − RADIUS)
#pragma unroll
    for (int c0 = 0; c0 < WIDE; c0 += GATHER_BATCH) {
#pragma unroll
        for (int c = c0; c < c0 + GATHER_BATCH && c < WIDE; ++c) g[c] = 0;
        if ((inside >> c0 & (GATHER_BATCH < 32 ? (1u << GATHER_BATCH) - 1 : ~0u)) == 0) continue;  // (see above)
#pragma unroll
        for (int c = c0; c < c0 + GATHER_BATCH && c < WIDE; ++c) {
            const u8* px = at + 3 * (mapped_column(edge_columns, c) - RADIUS);
            int v = grey_of(__ldg(px), __ldg(px + 1), __ldg(px + 2));
            g[c] = inside >> c & 1u ? v : 0;
        }
    }
}

__device__ __forceinline__ void edge_feed(const u8* __restrict__ rgb, int width, int height, int border, int y, int x0,
                                          Levels state, acc_t u[CORE]) {
    int g[WIDE];
    grey_row_mapped(rgb, width, height, border, y, x0, g);
    smooth(g, state, u);
}

// How many rows ahead an edge group asks the L2 for the window it will read (its two 128-byte lines): each row's
// batches then wait for the L2, not DRAM.
#define EDGE_AHEAD 3

__device__ __forceinline__ void strip_step_edge(const u8* __restrict__ rgb, out_t* __restrict__ out, size_t plane,
                                                int width, int height, int border, int y, int dir, int x0, Levels state,
                                                const acc_t a[CORE], const acc_t m[CORE], acc_t b[CORE]) {
    int ahead = y + (RADIUS + EDGE_AHEAD) * dir;
    if (ahead >= 0 && ahead < height) {
        const u8* row = rgb + (size_t)ahead * width * 3;
        prefetch_l2(row + 3 * max(x0 - RADIUS, 0));
        prefetch_l2(row + 3 * min(x0 + GROUP + RADIUS, width) - 1);
    }
    edge_feed(rgb, width, height, border, y + RADIUS * dir, x0, state, b);
    sobel_row16<STORE_CLIPPED>(a, m, b, out + (size_t)y * width, plane, x0, width, dir < 0);
}

__device__ __forceinline__ void strip_edge(const u8* __restrict__ rgb, out_t* __restrict__ out, size_t plane, int width,
                                           int height, int border, const Band& band) {
    const int x0 = band.x0, n = band.n, dir = band.dir;
    int y = band.y;
    map_columns<RADIUS, WIDE>(edge_columns, x0, width, border);
    Levels state = {};
    acc_t r0[CORE], r1[CORE], r2[CORE];
#pragma unroll
    for (int j = 0; j < 2 * RADIUS - 2; ++j) edge_feed(rgb, width, height, border, y + (j - RADIUS) * dir, x0, state, r2);
    // As the aligned form: rows y + (R − 2)·dir and y + (R − 1)·dir give U's rows −1 and 0.
    edge_feed(rgb, width, height, border, y + (RADIUS - 2) * dir, x0, state, r0);
    edge_feed(rgb, width, height, border, y + (RADIUS - 1) * dir, x0, state, r1);
    int k = 0;
    for (; k + 3 <= n; k += 3, y += 3 * dir) {
        strip_step_edge(rgb, out, plane, width, height, border, y, dir, x0, state, r0, r1, r2);
        strip_step_edge(rgb, out, plane, width, height, border, y + dir, dir, x0, state, r1, r2, r0);
        strip_step_edge(rgb, out, plane, width, height, border, y + 2 * dir, dir, x0, state, r2, r0, r1);
    }
    if (k < n) strip_step_edge(rgb, out, plane, width, height, border, y, dir, x0, state, r0, r1, r2);
    if (k + 1 < n) strip_step_edge(rgb, out, plane, width, height, border, y + dir, dir, x0, state, r1, r2, r0);
}

// The general kernel's numbering. The groups at a row's ends (outside groups_inside: the first, and the last one or
// two) march bands of at most EDGE_ROWS rows, however tall the others' are: a row of an edge group waits for its
// batches of loads (above), so a tall band's edge group would outlast the launch, and the extra halo rows of the
// shorter bands are a sliver of the image's reads. They take the first warp of each of the first blocks, and the groups
// inside the rest: a warp runs one form (an edge group among shifted groups would hold its whole warp at every row),
// the edge groups start in the first wave, and they are spread over as many SMs as there are edge warps (a warp of
// edge groups reads 32 rows at once, a cache line a lane for each byte load). The first form, edge groups in bands as
// tall as the others' and packed into the first blocks, left the busiest SM active 3.6 times the average (ncu, 7679
// wide). `edge` says which this thread marches.
#define EDGE_ROWS 4
static_assert(STRIP_THREADS % 32 == 0, "whole warps");
__device__ __forceinline__ bool thread_band_general(int width, int height, int rows, Band& b, bool& edge) {
    int groups = (width + GROUP - 1) / GROUP, lo, inner;
    groups_inside(width, groups, lo, inner);
    int edges = groups - inner;
    int edge_rows = min(rows, EDGE_ROWS), edge_bands = (height + edge_rows - 1) / edge_rows;
    unsigned edge_threads = (unsigned)edge_bands * (unsigned)edges, edge_warps = (edge_threads + 31) / 32;
    unsigned block = blockIdx.x, x = threadIdx.x;
    edge = block < edge_warps && x < 32;
    if (edge) {
        unsigned e = block * 32 + x;
        if (e >= edge_threads) return false;
        int k = (int)(e % edges);
        b.x0 = (k < lo ? k : inner + k) * GROUP;
        return band_of((int)(e / edges), height, edge_rows, b);
    }
    if (inner == 0) return false;
    unsigned i = block * STRIP_THREADS + x - (block < edge_warps ? block + 1 : edge_warps) * 32;
    b.x0 = (lo + (int)(i % inner)) * GROUP;
    return band_of((int)(i / inner), height, rows, b);
}

// A batch of equally sized images, packed one after another, is one launch: blockIdx.y picks the image
// (gridDim.y = 1 for one image). Each image keeps its own borders. Gradients go to two planes, Gx's for the
// whole batch, then Gy's.
__device__ __forceinline__ size_t image_offset(int width, int height) {
    return (size_t)blockIdx.y * (size_t)width * (size_t)height;
}
__device__ __forceinline__ size_t batch_plane(int width, int height) {
    return (size_t)gridDim.y * (size_t)width * (size_t)height;
}

// Whether the aligned form's warps store their rows together (row16.cuh's store_warp): where the stores, not the
// arithmetic, hold the march. Measured on an H200 at 7680×4320 (ncu, each pair in one lease): Canny's 32-bit words
// 103.7 → 75.9 µs (store wavefronts 1.07 → 0.26 million) and the int16 gradient planes 75.9 → 66.9 µs; but the
// 16-bit words 59.9 → 67.5 and the direction (float) 284 → 299 µs, whose sector test and arctangent the staging's
// 10 % more instructions slow more than their stores gain. Not for the bytes (a lane's 16 already fill its unit),
// nor the float gradients, whose 3×3 march then spills (ptxas, 128 registers: tests/kernels.rs).
#ifndef STRIP_STAGE_STORES
#define STRIP_STAGE_STORES \
    ((OUTPUT == OUTPUT_GRADIENTS && OUT_GRADIENT_T != 3) || (OUTPUT == OUTPUT_SECTORS && OUT_GRADIENT_T != 1))
#endif
#if STRIP_STAGE_STORES
__shared__ uint4 warp_stage[STRIP_THREADS / 32][32 * sizeof(out_t)];  // a group's 16 values: sizeof(out_t) units
#endif

// The warp's stage where its 32 lanes all march one band (so their groups are consecutive and their steps the same),
// else nullptr. Called by every lane, before any returns.
__device__ __forceinline__ uint4* stage_of(int width, bool inside) {
#if STRIP_STAGE_STORES
    unsigned groups = (unsigned)(width + GROUP - 1) / GROUP, band = (blockIdx.x * blockDim.x + threadIdx.x) / groups;
    unsigned first = __shfl_sync(~0u, band, 0);  // by every lane (after `inside &&` it would not be: a hang)
    bool whole = __all_sync(~0u, inside & (band == first));
    return whole ? warp_stage[threadIdx.x / 32] : nullptr;
#else
    (void)width, (void)inside;
    return nullptr;
#endif
}

// The aligned form: width % 16 == 0 and both arrays 16-byte aligned (the host checks).
extern "C" __global__ void __launch_bounds__(STRIP_THREADS, STRIP_MIN_BLOCKS)
    sobel_strip_aligned(const u8* __restrict__ rgb, out_t* __restrict__ out, int width, int height, int border, int rows) {
    allow_next_launch();  // the next launch may place its blocks beside these (Canny's suppression: canny.cu)
    Band band;
    bool inside = thread_band(width, height, rows, band);
    uint4* stage = stage_of(width, inside);
    if (!inside) return;
    size_t o = image_offset(width, height);
    strip_march<false>(rgb + 3 * o, out + o, batch_plane(width, height), width, height, border, band, stage);
}

// Any width and alignment: the groups inside the row march as the aligned ones do, their rows read shifted into place
// and their outputs stored as words (the 3×3 edges at 1366×768 / 3000×2000 / 7679×4320 on an H100: 18.5 / 44.9 /
// 186.0 → 13.3 / 18.9 / 82.0 µs); the groups at a row's ends take the column map.
extern "C" __global__ void __launch_bounds__(STRIP_THREADS, STRIP_MIN_BLOCKS)
    sobel_strip_general(const u8* __restrict__ rgb, out_t* __restrict__ out, int width, int height, int border, int rows) {
    allow_next_launch();  // as above
    Band band;
    bool edge;
    if (!thread_band_general(width, height, rows, band, edge)) return;
    size_t o = image_offset(width, height);
    if (edge)
        strip_edge(rgb + 3 * o, out + o, batch_plane(width, height), width, height, border, band);
    else
        strip_march<true>(rgb + 3 * o, out + o, batch_plane(width, height), width, height, border, band, nullptr);
}
