// conv_strip.cu — pattern: a SEPARABLE ROLLING WINDOW IN REGISTERS (ours; gpu-strip's march for any rank-one filter).
//
// A rank-one kernel is a column ⊗ a row (K[i][j] = c[i]·r[j]: box, Gaussian, Sobel, the Scharr family), so its sum
// is a row pass then a column pass: H(y', x) = Σⱼ r[j]·p(y', x + j − R), S(y, x) = Σᵢ c[i]·H(y + i − R, x). Each
// thread owns STRIP_G neighbouring columns and marches down a band of `rows` rows. Each step reads ONE new input row
// (the STRIP_G + 2R pixels of its window, as aligned words), computes that row's pass once, keeps it in a ring of
// 2R + 1 rows of registers, and writes one output row from the ring. So every input byte comes from DRAM about once
// (the band's 2R halo rows and the neighbours' words hit the caches), and the work a pixel is (2R + 1) + (2R + 1)
// taps instead of conv_rolling.cu's (2R + 1)²; no shared memory, no barrier. The ring is an array indexed by
// compile-time slots: the step loop is unrolled 2R + 1 times, so the rows' roles rotate by renaming registers
// (strip.cu does the same with three rows).
//  - The taps are compiled in (CONV_COLUMN, CONV_ROW): zero taps vanish, so scharr:9's row pass is one subtraction.
//  - A gradient kernel's transpose is r ⊗ c: a second ring holds the rows' pass with c, and Gy = Σᵢ r[i]·(that ring).
//  - A box (CONV_FLAT: every tap 1) needs no ring: running sums along the row (each window is the previous one plus
//    the pixel entering minus the one leaving) and down the column (plus the row entering, minus the row leaving,
//    whose row sums are computed again from the caches): about ten adds a pixel at any diameter, and a thread can
//    own 8 columns (box_march below).
//
// Launch shape: 1D grid of 128×1 blocks over (band, group) pairs, STRIP_G columns (4, a box 8) × `rows` rows a
// thread, grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh); sums in acc_t as there.
#include "sobel.cuh"
#include "conv.cuh"

#ifndef CONV_COLUMN  // box:3, as conv.cuh's default
#define CONV_COLUMN 1, 1, 1
#define CONV_ROW 1, 1, 1
#define CONV_FLAT 1
#endif
#ifndef CONV_FLAT
#define CONV_FLAT 0
#endif

#define STRIP_THREADS 128
// Columns a thread: 4 for the ring (its 2r + 1 rows × 4 columns of registers), 8 for a box, which needs no ring
// (measured at 16384², 4256×8496 and 1920×3240, box:3 and box:15: 8 columns beat 4 by up to 2.2× and 16 on all but
// the largest case, where 16 took 255 registers and spilled: docs/performance.md v0.29).
#ifndef STRIP_G  // (bench/probe may set others, to measure them)
#define STRIP_G (CONV_FLAT ? 8 : 4)
#endif
// The window's load unit: the thread's columns as one vector (4, 8 or 16 bytes), so that a warp's load is 32 such
// vectors side by side. The window is pixels x0 − RU … x0 + STRIP_G + RU − 1, RU the radius rounded up to units.
#define UNIT (STRIP_G % 16 == 0 ? 16 : STRIP_G % 8 == 0 ? 8 : 4)
#define RU ((CONV_R + UNIT - 1) / UNIT * UNIT)
#define WORDS ((STRIP_G + 2 * RU) / 4)
#define WIN (STRIP_G + 2 * CONV_R)
// Rows asked into L2 ahead of the one being read.
#ifndef STRIP_PREFETCH
#define STRIP_PREFETCH 4
#endif

__device__ __forceinline__ int column_tap(int i) {
    const int t[CONV_D] = {CONV_COLUMN};
    return t[i];
}
__device__ __forceinline__ int row_tap(int j) {
    const int t[CONV_D] = {CONV_ROW};
    return t[j];
}

// Where a thread's columns are and how its rows are read.
struct Strip {
    const u8* plane;
    int width, height, border, x0;
    bool words;  // the window is inside the row and aligned: WORDS words in UNIT loads; else bytes through the border
};

// The words of one input row's window (the `words` form).
struct Words {
    unsigned v[WORDS];
};

// Input row y's words (any y: the border rule picks the row; a row it makes 0 gives zero words). Read through the
// read-only cache (`__ldg`): the compiler may then issue them before the previous step's stores, which it cannot
// prove do not overlap them.
__device__ __forceinline__ Words load_words(const Strip& s, int y) {
    Words r;
    int sy = resolve(y, s.height, s.border);
    const u8* p = s.plane + (size_t)(sy < 0 ? 0 : sy) * s.width + s.x0 - RU;
#if UNIT == 16
#pragma unroll
    for (int k = 0; k < WORDS / 4; ++k) {
        uint4 q = sy < 0 ? make_uint4(0, 0, 0, 0) : __ldg((const uint4*)p + k);
        r.v[4 * k] = q.x, r.v[4 * k + 1] = q.y, r.v[4 * k + 2] = q.z, r.v[4 * k + 3] = q.w;
    }
#elif UNIT == 8
#pragma unroll
    for (int k = 0; k < WORDS / 2; ++k) {
        uint2 q = sy < 0 ? make_uint2(0, 0) : __ldg((const uint2*)p + k);
        r.v[2 * k] = q.x, r.v[2 * k + 1] = q.y;
    }
#else
#pragma unroll
    for (int k = 0; k < WORDS; ++k) r.v[k] = sy < 0 ? 0u : __ldg((const unsigned*)p + k);
#endif
    return r;
}

// The window from words: w[c] = pixel x0 − R + c, c < WIN.
__device__ __forceinline__ void window_of(const Words& r, int w[WIN]) {
#pragma unroll
    for (int c = 0; c < WIN; ++c) {
        const int b = RU - CONV_R + c;  // a constant once unrolled: one byte extract
        w[c] = (r.v[b / 4] >> (8 * (b % 4))) & 0xFF;
    }
}

// The window of input row y pixel by pixel through the border rule (threads at a row's ends, odd widths).
__device__ __forceinline__ void read_window(const Strip& s, int y, int w[WIN]) {
    int sy = resolve(y, s.height, s.border);
    const u8* row = s.plane + (size_t)(sy < 0 ? 0 : sy) * s.width;
#pragma unroll
    for (int c = 0; c < WIN; ++c) {
        int sx = resolve(s.x0 - CONV_R + c, s.width, s.border);
        w[c] = sy < 0 || sx < 0 ? 0 : row[sx];
    }
}

// The row pass of a window: h[k] = Σⱼ tap(j)·w[k + j] for the STRIP_G outputs (running sums for a box).
template <typename Tap>
__device__ __forceinline__ void row_pass(Tap tap, const int w[WIN], acc_t h[STRIP_G]) {
    if (CONV_FLAT) {
        acc_t sum = 0;
#pragma unroll
        for (int j = 0; j < CONV_D; ++j) sum += w[j];
        h[0] = sum;
#pragma unroll
        for (int k = 1; k < STRIP_G; ++k) h[k] = sum = sum + w[k + CONV_D - 1] - w[k - 1];
    } else {
#pragma unroll
        for (int k = 0; k < STRIP_G; ++k) {
            acc_t sum = 0;
#pragma unroll
            for (int j = 0; j < CONV_D; ++j) sum += (acc_t)tap(j) * w[k + j];
            h[k] = sum;
        }
    }
}

// The STRIP_G output bytes of row y: whole words in the WORDS form, else those inside the row.
template <bool WORDS_FORM>
__device__ __forceinline__ void store_row(const Strip& s, u8* out, int y, const u8 b[STRIP_G]) {
    u8* o = out + (size_t)y * s.width + s.x0;
    if constexpr (WORDS_FORM) {
        unsigned v[STRIP_G / 4];
#pragma unroll
        for (int q = 0; q < STRIP_G / 4; ++q)
            v[q] = b[4 * q] | b[4 * q + 1] << 8 | b[4 * q + 2] << 16 | (unsigned)b[4 * q + 3] << 24;
#if UNIT == 16
#pragma unroll
        for (int q = 0; q < STRIP_G / 16; ++q) ((uint4*)o)[q] = make_uint4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
#elif UNIT == 8
#pragma unroll
        for (int q = 0; q < STRIP_G / 8; ++q) ((uint2*)o)[q] = make_uint2(v[2 * q], v[2 * q + 1]);
#else
#pragma unroll
        for (int q = 0; q < STRIP_G / 4; ++q) ((unsigned*)o)[q] = v[q];
#endif
    } else {
#pragma unroll
        for (int k = 0; k < STRIP_G; ++k)
            if (s.x0 + k < s.width) o[k] = b[k];
    }
}

// The ring: the row pass (with the row taps, and for a gradient with the column taps too) of the 2R + 1 input rows
// the current output row reads.
struct Ring {
    acc_t hr[CONV_D][STRIP_G], hc[CONV_D][STRIP_G];
};

// Input row y' into slot `slot` of the ring, from its window.
__device__ __forceinline__ void enter(Ring& g, int slot, const int w[WIN]) {
    row_pass(row_tap, w, g.hr[slot]);
    if (CONV_GRADIENT) row_pass(column_tap, w, g.hc[slot]);
}

// The words form's software pipelining: the window of the row in `next` (loaded a step earlier) into w; then, unless
// the band ends (`more` false), row `following` — the one the next step reads — asked into `next` before this step
// computes, so that its latency overlaps the arithmetic, and a row STRIP_PREFETCH beyond it asked into L2 (a hint:
// skipped past the image's end).
__device__ __forceinline__ void advance(const Strip& s, Words& next, int following, bool more, int w[WIN]) {
    Words cur = next;
    if (more) next = load_words(s, following);
    int ahead = following + STRIP_PREFETCH;
    if (ahead < s.height) prefetch_l2(s.plane + (size_t)ahead * s.width + s.x0);
    window_of(cur, w);
}

// One step of the march at compile-time position U of the ring: input row y + R enters slot (U + 2R) mod D (where
// row y − R − 1 was), and output row y is the column pass over slots U … U + 2R (mod D), rows y − R … y + R.
// WORDS (the thread's whole window inside the row, aligned): `next` holds row y + R's words (`advance`). Otherwise the
// window is read pixel by pixel through the border rule. The two forms are two instantiations, so the march's
// loop holds only the form it runs (measured: with both in one loop body, half the stalls were instruction fetch).
template <int U, bool WORDS_FORM>
__device__ __forceinline__ void step(const Strip& s, u8* out, int y, int end, Ring& g, Words& next) {
    constexpr int slot = (U + 2 * CONV_R) % CONV_D;
    int w[WIN];
    if constexpr (WORDS_FORM)
        advance(s, next, y + 1 + CONV_R, y + 1 < end, w);
    else
        read_window(s, y + CONV_R, w);
    enter(g, slot, w);
    u8 b[STRIP_G];
#pragma unroll
    for (int k = 0; k < STRIP_G; ++k) {
        acc_t gs = 0, gt = 0;
#pragma unroll
        for (int i = 0; i < CONV_D; ++i) {
            gs += (acc_t)column_tap(i) * g.hr[(U + i) % CONV_D][k];
            if (CONV_GRADIENT) gt += (acc_t)row_tap(i) * g.hc[(U + i) % CONV_D][k];
        }
        b[k] = conv_finish(gs, gt);
    }
    store_row<WORDS_FORM>(s, out, y, b);
}

// Steps U, U + 1, … of one turn of the ring, while rows remain (y < end).
template <int U, bool WORDS_FORM>
__device__ __forceinline__ void turn(const Strip& s, u8* out, int y, int end, Ring& g, Words& next) {
    if (y >= end) return;
    step<U, WORDS_FORM>(s, out, y, end, g, next);
    if constexpr (U + 1 < CONV_D) turn<U + 1, WORDS_FORM>(s, out, y + 1, end, g, next);
}

// A thread's whole march: prime the ring with rows y0 − R … y0 + R − 1 (slots 0 … 2R − 1; slot 2R is the first
// step's), then one output row a step. In the WORDS form every priming load is issued before any window is taken
// (one memory round trip, not 2R), then row y0 + R's for the first step.
template <bool WORDS_FORM>
__device__ __forceinline__ void march(const Strip& s, u8* out, int y0, int end) {
    Ring g;
    Words next = {};
    if constexpr (WORDS_FORM) {
        Words first[2 * CONV_R > 0 ? 2 * CONV_R : 1];
#pragma unroll
        for (int i = 0; i < 2 * CONV_R; ++i) first[i] = load_words(s, y0 - CONV_R + i);
        next = load_words(s, y0 + CONV_R);
#pragma unroll
        for (int i = 0; i < 2 * CONV_R; ++i) {
            int w[WIN];
            window_of(first[i], w);
            enter(g, i, w);
        }
    } else {
#pragma unroll
        for (int i = 0; i < 2 * CONV_R; ++i) {
            int w[WIN];
            read_window(s, y0 - CONV_R + i, w);
            enter(g, i, w);
        }
    }
    for (int y = y0; y < end; y += CONV_D) turn<0, WORDS_FORM>(s, out, y, end, g, next);
}

// v[k] += sign · (the row pass of window w)[k].
__device__ __forceinline__ void accumulate(acc_t v[STRIP_G], const int w[WIN], int sign) {
    acc_t h[STRIP_G];
    row_pass(row_tap, w, h);
#pragma unroll
    for (int k = 0; k < STRIP_G; ++k) v[k] += sign * h[k];
}

// A box's march: no ring. v holds, per column, the sum of the row sums of the window's rows; each step adds the row
// entering (y + R) and, after the output, subtracts the row leaving (y − R), re-read from the caches (it was read
// 2R steps earlier) instead of kept: 2 loads a step instead of 1, but 8 columns a thread in 192 registers at box:15
// where the ring's 4 columns took 254 (docs/performance.md v0.29). Both rows' words are loaded a step ahead.
template <bool WORDS_FORM>
__device__ __forceinline__ void box_march(const Strip& s, u8* out, int y0, int end) {
    acc_t v[STRIP_G];
#pragma unroll
    for (int k = 0; k < STRIP_G; ++k) v[k] = 0;
    // Rows y0 − R … y0 + R − 1.
    for (int i = 0; i < 2 * CONV_R; ++i) {
        int w[WIN];
        if constexpr (WORDS_FORM)
            window_of(load_words(s, y0 - CONV_R + i), w);
        else
            read_window(s, y0 - CONV_R + i, w);
        accumulate(v, w, 1);
    }
    Words nin = {}, nout = {};
    if constexpr (WORDS_FORM) nin = load_words(s, y0 + CONV_R), nout = load_words(s, y0 - CONV_R);
    for (int y = y0; y < end; ++y) {
        int w[WIN];
        Words cout = nout;  // row y − R's words, loaded a step earlier
        if constexpr (WORDS_FORM) {
            if (y + 1 < end) nout = load_words(s, y + 1 - CONV_R);
            advance(s, nin, y + 1 + CONV_R, y + 1 < end, w);
        } else {
            read_window(s, y + CONV_R, w);
        }
        accumulate(v, w, 1);
        u8 b[STRIP_G];
#pragma unroll
        for (int k = 0; k < STRIP_G; ++k) b[k] = conv_finish(v[k], 0);
        store_row<WORDS_FORM>(s, out, y, b);
        if constexpr (WORDS_FORM)
            window_of(cout, w);
        else
            read_window(s, y - CONV_R, w);
        accumulate(v, w, -1);
    }
}

extern "C" __global__ void __launch_bounds__(STRIP_THREADS)
    conv_strip(const u8* __restrict__ in, u8* __restrict__ out, int width, int height, int border, int rows) {
    int groups = (width + STRIP_G - 1) / STRIP_G;
    unsigned t = blockIdx.x * STRIP_THREADS + threadIdx.x;
    int band = (int)(t / groups), y0 = band * rows;
    if (y0 >= height) return;
    size_t plane = (size_t)width * height * blockIdx.z;
    int x0 = (int)(t % groups) * STRIP_G;
    Strip s = {in + plane, width, height, border, x0, width % UNIT == 0 && x0 >= RU && x0 + STRIP_G + RU <= width};
    int end = min(y0 + rows, height);
#if CONV_FLAT
    if (s.words)
        box_march<true>(s, out + plane, y0, end);
    else
        box_march<false>(s, out + plane, y0, end);
#else
    if (s.words)
        march<true>(s, out + plane, y0, end);
    else
        march<false>(s, out + plane, y0, end);
#endif
}
