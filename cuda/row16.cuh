// row16.cuh — helpers for the register-blocked kernels (vec16.cu, strip.cu): one thread owns 16
// consecutive pixels of a row. Each trick's measured reason is beside it.
//
//  - Every stencil is the 3×3 one on a smoothed image. Sobel of size 2L + 3 factors as
//    smooth = [E C E] ⊛ [1 1]^L and deriv = [−1 0 1] ⊛ [1 1]^L (ksize 5: L = 2, 7: L = 4; 1, 3 and Scharr:
//    L = 0 — `Stencil::factors`). Both directions carry [1 1]^L, so Gx and Gy are the 3×3 operator with
//    weights (E, C) applied to U = [1 1]^L ⊛ [1 1]^L ⊛ grey: L pairwise sums along the row (`smooth`)
//    and L down the columns (the rolling window keeps one sum a level a column). 2L + 6 adds a pixel
//    instead of the (2r + 1)·… of the plain separable stencil.
//  - Wide loads: 16 RGB pixels are 48 bytes = three 16-byte loads (when the width is a multiple of 16,
//    every group of 16 pixels starts 16-byte aligned), plus ⌈3r / 4⌉ 4-byte words for the r neighbours on
//    each side.
//  - Grey with dp4a: four pixels are three 32-bit words; `__dp4a` multiplies four bytes by four weights
//    and adds, so the weighted sums take 1.5 instructions a pixel (twice that for BT.601, whose 15-bit
//    weights are split into high and low bytes), and `__umulhi(x, 42949673)` is x / 100 exactly for
//    x ≤ 25 550 (checked exhaustively by the selftest kernels).
//  - Sobel with shared partial sums: per column s = E·top + C·mid + E·bottom and d = bottom − top; then
//    Gx = s[x+1] − s[x−1] and Gy = E·d[x−1] + C·d[x] + E·d[x+1]. Each column's s and d serve three outputs.
//  - The smoothing of 5×5 and 7×7 on packed pairs: every value of U fits 16 bits (≤ 255·4^L: 4080 at 5×5,
//    65 280 at 7×7, never negative), so one 32-bit add sums two columns at once, columns j and j + 8 of the
//    segment in the low and high halves of word j: a shift along the row is then a shift of the word index, no
//    byte shuffle, and no carry ever crosses into the high half. Half the adds of the row and column passes and
//    half the column sums' registers.
//  - The 3×3 step: int for the 3×3 stencils; float for 5×5 and 7×7 (every value is an integer below 2^24,
//    so float adds are exact), which then run on the FP32 pipe, twice as wide as the integer one.
//  - Magnitude with one approximate square root (MUFU), rounded once (exact: see magnitude_fast_sq).
//  - With COMPAT_REPORT the grey and magnitude fall back to sobel.cuh's double-precision forms: the
//    report's truncations have no integer shortcut, and that mode is for fidelity, not speed.
#ifndef CUDA_SOBEL_ROW16_CUH
#define CUDA_SOBEL_ROW16_CUH
#include "sobel.cuh"

#define GROUP 16
// Grey values of a row segment: the group and RADIUS neighbours each side; after the L pairwise sums along
// the row, CORE values remain (the group and one neighbour each side, for the 3×3 core).
#define WIDE (GROUP + 2 * RADIUS)
#define CORE (GROUP + 2)
// 4-byte words holding the RADIUS neighbour pixels (3 bytes each) on each side of a group.
#define SIDE_WORDS ((3 * RADIUS + 3) / 4)

#if BINOMIAL_LEVELS > 0
typedef float acc_t;
#else
typedef int acc_t;
#endif

// The dp4a weight word for a pixel whose R, G, B bytes start at byte `first` of a word (first may be negative,
// or past 1: the bytes outside the word are the neighbouring word's), for weights (wr, wg, wb) of one byte each.
__host__ __device__ constexpr unsigned weight_word(unsigned wr, unsigned wg, unsigned wb, int first) {
    return (first >= 0 && first <= 3 ? wr << (8 * first) : 0u) | (first + 1 >= 0 && first + 1 <= 3 ? wg << (8 * (first + 1)) : 0u) |
           (first + 2 >= 0 && first + 2 <= 3 ? wb << (8 * (first + 2)) : 0u);
}

#define DIV100_MAGIC 42949673u  // ceil(2^32 / 100)

// Grey of the pixel whose three bytes start at byte `first` (0..3) of word a, running on into word b.
template <int FIRST>
__device__ __forceinline__ int grey3(unsigned a, unsigned b) {
#if COMPAT_REPORT
    u8 bytes[8] = {(u8)a, (u8)(a >> 8), (u8)(a >> 16), (u8)(a >> 24), (u8)b, (u8)(b >> 8), (u8)(b >> 16), (u8)(b >> 24)};
    return grey_of(bytes[FIRST], bytes[FIRST + 1], bytes[FIRST + 2]);
#elif GREY_BT601
    // 9798 = 38·256 + 70, 19235 = 75·256 + 35, 3735 = 14·256 + 151.
    unsigned hi = __dp4a(a, weight_word(38, 75, 14, FIRST), 0u), lo = __dp4a(a, weight_word(70, 35, 151, FIRST), 16384u);
    if (FIRST > 1) {
        hi = __dp4a(b, weight_word(38, 75, 14, FIRST - 4), hi);
        lo = __dp4a(b, weight_word(70, 35, 151, FIRST - 4), lo);
    }
    return (int)(((hi << 8) + lo) >> 15);
#else
    unsigned sum = __dp4a(a, weight_word(30, 59, 11, FIRST), 50u);
    if (FIRST > 1) sum = __dp4a(b, weight_word(30, 59, 11, FIRST - 4), sum);
    return (int)__umulhi(sum, DIV100_MAGIC);
#endif
}

// Grey of pixel k of a run of words: its bytes start at byte 3k.
template <int K, int N>
__device__ __forceinline__ int grey_of_pixel(const unsigned (&w)[N]) {
    return grey3<(3 * K) % 4>(w[(3 * K) / 4], w[(3 * K) / 4 + 1 < N ? (3 * K) / 4 + 1 : (3 * K) / 4]);
}

// x·y + z in the arithmetic type: one multiply-add (explicit for float: --fmad=false contracts nothing, and the
// operands are integers below 2^24, so the fused rounding is exact).
__device__ __forceinline__ int mad(int x, int y, int z) { return x * y + z; }
__device__ __forceinline__ float mad(int x, float y, float z) { return __fmaf_rn((float)x, y, z); }

// magnitude_fast_f and magnitude_fast_sq: sobel.cuh (the filter's gradient kernels use them too).

// The edge byte of one pixel's gradients, in the low byte.
__device__ __forceinline__ unsigned edge_fast(int gx, int gy) {
#if COMPAT_REPORT || NORM_L1
    return magnitude_of(gx, gy);
#else
    unsigned x = clamped_abs(gx), y = clamped_abs(gy);
    return magnitude_fast_sq(x * x + y * y);
#endif
}
__device__ __forceinline__ unsigned edge_fast(float gx, float gy) {
#if NORM_L1
    return (unsigned)fminf(fabsf(gx) + fabsf(gy), 255.0f);
#else
    // No clamp of |Gx| and |Gy| to 255 first (two instructions a pixel): below 2^24 the squares and their sum
    // are exact integers; a square or sum that float rounds is at least 2^24, far above SATURATED_SQUARE, to
    // which magnitude_fast_f clamps it, and rounding keeps it there.
    return magnitude_fast_f(__fmaf_rn(gx, gx, __fmul_rn(gy, gy)));
#endif
}

// The raw bytes of one aligned group's row: pixels x0 … x0+15 (three 16-byte words, as 12 words) and the words
// holding its RADIUS neighbours each side. Loading (load_group) and converting (grey_wide) are separate so
// that strip.cu can issue the next row's loads before it computes the current row.
struct Raw16 {
    unsigned left[SIDE_WORDS], mid[12], right[SIDE_WORDS];
};

// Aligned form only (width % 16 == 0). Where the bytes of group x0 of row y are, `y` at any distance outside
// the image: the row the border rule picks, or nullptr for a row that it makes 0.
__device__ __forceinline__ const u8* group_ptr(const u8* __restrict__ rgb, int width, int height, int border, int y,
                                               int x0) {
    int sy = resolve(y, height, border);
    return sy < 0 ? nullptr : rgb + ((size_t)sy * width + x0) * 3;
}

// Where the SIDE_WORDS words holding an aligned group's neighbour pixels are, each side of its 12 words at p (the
// pixels before the group end a word; those after start one), and whether the image has them (not at its left
// or right edge). load_group and strip.cu's ring both read them through this.
struct Sides {
    const unsigned *left, *right;
    bool has_left, has_right;
};
__device__ __forceinline__ Sides group_sides(const u8* p, int width, int x0) {
    const unsigned* words = reinterpret_cast<const unsigned*>(p);
    return {words - SIDE_WORDS, words + 12, x0 > 0, x0 + GROUP < width};
}

// The group's bytes at p, a row inside the image.
__device__ __forceinline__ Raw16 load_group(const u8* __restrict__ p, int width, int x0) {
    Raw16 r = {};
    const uint4* v = reinterpret_cast<const uint4*>(p);
    uint4 v0 = __ldg(v), v1 = __ldg(v + 1), v2 = __ldg(v + 2);
    unsigned mid[12] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w, v2.x, v2.y, v2.z, v2.w};
#pragma unroll
    for (int i = 0; i < 12; ++i) r.mid[i] = mid[i];
    Sides sides = group_sides(p, width, x0);
    if (sides.has_left) {
#pragma unroll
        for (int i = 0; i < SIDE_WORDS; ++i) r.left[i] = __ldg(sides.left + i);
    }
    if (sides.has_right) {
#pragma unroll
        for (int i = 0; i < SIDE_WORDS; ++i) r.right[i] = __ldg(sides.right + i);
    }
    return r;
}

// A group anywhere else (a width that is not a multiple of 16, an array starting anywhere): its bytes and its
// neighbours' words, GROUP_WORDS words from 4·SIDE_WORDS bytes before p, read as 16-byte loads from the aligned
// address below and shifted into place (`load_shifted`, sobel.cuh) — where all of them lie inside the row
// (`groups_inside`); the groups at a row's ends take strip.cu's column map instead.
#define GROUP_WORDS (12 + 2 * SIDE_WORDS)
#define GROUP_UNITS shifted_units<16, GROUP_WORDS>()
__device__ __forceinline__ Raw16 raw16_of(const unsigned (&w)[GROUP_WORDS]) {
    Raw16 r;
#pragma unroll
    for (int i = 0; i < SIDE_WORDS; ++i) r.left[i] = w[i], r.right[i] = w[SIDE_WORDS + 12 + i];
#pragma unroll
    for (int i = 0; i < 12; ++i) r.mid[i] = w[SIDE_WORDS + i];
    return r;
}
__device__ __forceinline__ Raw16 load_group_shifted(const u8* __restrict__ p) {
    unsigned w[GROUP_WORDS];
    load_shifted<16>(p - 4 * SIDE_WORDS, w);
    return raw16_of(w);
}

// The group's bytes in a row inside the image at p: aligned 16-byte loads, or SHIFTED ones.
template <bool SHIFTED>
__device__ __forceinline__ Raw16 load_at(const u8* __restrict__ p, int width, int x0) {
    return SHIFTED ? load_group_shifted(p) : load_group(p, width, x0);
}

// The group's bytes at p (from group_ptr); nullptr gives zero bytes, which convert to grey 0: no branch later.
template <bool SHIFTED = false>
__device__ __forceinline__ Raw16 load_raw16_at(const u8* __restrict__ p, int width, int x0) {
    return p ? load_at<SHIFTED>(p, width, x0) : Raw16{};
}

__device__ __forceinline__ Raw16 load_raw16(const u8* __restrict__ rgb, int width, int height, int border, int y,
                                            int x0) {
    return load_raw16_at(group_ptr(rgb, width, height, border, y, x0), width, x0);
}

// The groups whose every byte load_group_shifted reads lies inside their row — from 15 bytes before a group's first
// word (the aligned address below it) to GROUP_UNITS 16-byte units on: 3·x0 − 4·SIDE_WORDS ≥ 15 and
// 3·x0 − 4·SIDE_WORDS + 16·GROUP_UNITS ≤ 3·width (then the group and RADIUS neighbours each side are inside the row
// too: 16·GROUP_UNITS ≥ 48 + 8·SIDE_WORDS + 16). With x0 = 16·g, those are the groups lo … lo + inner − 1 of a row of
// `groups`; the rest, at most three (the first and the last one or two), take strip.cu's column map.
__device__ __forceinline__ void groups_inside(int width, int groups, int& lo, int& inner) {
    lo = (15 + 4 * SIDE_WORDS + 3 * GROUP - 1) / (3 * GROUP);
    int room = 3 * width + 4 * SIDE_WORDS - 16 * GROUP_UNITS, hi = room < 0 ? -1 : room / (3 * GROUP);
    inner = max(0, min(hi, groups - 1) - lo + 1);
}

// Grey of left neighbour k (1..RADIUS): its bytes start 3k bytes before the end of `left`.
template <int K>
__device__ __forceinline__ int grey_left(const Raw16& r) {
    constexpr int byte = 4 * SIDE_WORDS - 3 * K;
    return grey3<byte % 4>(r.left[byte / 4], r.left[byte / 4 + 1 < SIDE_WORDS ? byte / 4 + 1 : byte / 4]);
}
// Grey of right neighbour k (1..RADIUS): its bytes start at byte 3(k − 1) of `right`.
template <int K>
__device__ __forceinline__ int grey_right(const Raw16& r) {
    constexpr int byte = 3 * (K - 1);
    return grey3<byte % 4>(r.right[byte / 4], r.right[byte / 4 + 1 < SIDE_WORDS ? byte / 4 + 1 : byte / 4]);
}

template <int K>
__device__ __forceinline__ void neighbours(const Raw16& r, int width, int border, int x0, int g[WIDE]) {
    if constexpr (K <= RADIUS) {
        // Inside the image they come from the side words; at the image's left and right edges from the border
        // rule: pixel k (width − 1 − k) mirrored, the edge pixel repeated, or 0. Selects, not g[RADIUS + sx]: a
        // run-time index would move the whole array to local memory; and no branches (measured: slower with them).
        int edge_l = border == BORDER_ZERO ? 0 : (border == BORDER_REPLICATE ? g[RADIUS] : g[RADIUS + K]);
        int edge_r = border == BORDER_ZERO ? 0 : (border == BORDER_REPLICATE ? g[RADIUS + GROUP - 1] : g[RADIUS + GROUP - 1 - K]);
        g[RADIUS - K] = x0 > 0 ? grey_left<K>(r) : edge_l;
        g[RADIUS + GROUP - 1 + K] = x0 + GROUP < width ? grey_right<K>(r) : edge_r;
        neighbours<K + 1>(r, width, border, x0, g);
    }
}

template <int K>
__device__ __forceinline__ void group_grey(const unsigned (&w)[12], int g[WIDE]) {
    if constexpr (K < GROUP) {
        g[RADIUS + K] = grey_of_pixel<K>(w);
        group_grey<K + 1>(w, g);
    }
}

// Grey values of pixels x0 − RADIUS … x0 + 15 + RADIUS of an aligned group's row.
__device__ __forceinline__ void grey_wide(const Raw16& r, int width, int border, int x0, int g[WIDE]) {
    group_grey<0>(r.mid, g);
    neighbours<1>(r, width, border, x0, g);
}

// Grey values of pixels x0 − RADIUS … x0 + 15 + RADIUS of image row y (through the border rule).
// ALIGNED: width is a multiple of 16, so the group is whole and its 48 bytes start 16-byte aligned.
template <bool ALIGNED>
__device__ __forceinline__ void grey_row_wide(const u8* __restrict__ rgb, int width, int height, int border, int y,
                                              int x0, int g[WIDE]) {
    if (ALIGNED) {
        grey_wide(load_raw16(rgb, width, height, border, y, x0), width, border, x0, g);
        return;
    }
    // Any width: byte loads, each pixel through the border rule (pixels past the edge are unused).
    int sy = resolve(y, height, border);
    if (sy < 0) {
#pragma unroll
        for (int i = 0; i < WIDE; ++i) g[i] = 0;
        return;
    }
    const u8* row = rgb + (size_t)sy * width * 3;
#pragma unroll
    for (int i = 0; i < WIDE; ++i) {
        int sx = resolve(min(x0 + i - RADIUS, width - 1 + RADIUS), width, border);
        g[i] = sx < 0 ? 0 : grey_of(row[3 * sx], row[3 * sx + 1], row[3 * sx + 2]);
    }
}

// THE SMOOTHING, U = [1 1]^L along the row and down the columns, on packed pairs (header above). Word j of a
// row holds columns j and j + 8 of its grey segment g[0 … WIDE) as two 16-bit halves: PAIRS words cover it
// (the low halves columns 0 … PAIRS − 1, the high halves 8 … WIDE − 1). Each level of the row pass adds word
// j + 1 to word j (both halves move one column) and leaves one word fewer; after L = 2(RADIUS − 1) levels
// CORE_PAIRS words remain, holding U's CORE columns (x0 − 1 … x0 + 16). The column pass keeps one word a level
// a column pair: `Levels`.
#define PAIRS (WIDE - 8)
#define CORE_PAIRS (CORE - 8)
typedef unsigned Levels[BINOMIAL_LEVELS > 0 ? BINOMIAL_LEVELS : 1][CORE_PAIRS];

// Half `high` of a packed word as the arithmetic type: its 16 bits under the float exponent of 2^23 (one byte
// permute), minus 2^23 — exact, and no conversion instruction (which runs at a quarter of the rate).
template <bool HIGH>
__device__ __forceinline__ acc_t unpack_half(unsigned w) {
    return __int_as_float(__byte_perm(w, 0x4B000000u, HIGH ? 0x7432 : 0x7410)) - 8388608.0f;
}

// A grey row segment into U's row: `u` gets the level-L column sum Σ_k C(L, k)·(row fed k rows ago) of the
// row-smoothed values, i.e. U's row (the row fed minus L/2) once L rows have been fed; `state[l]` holds the
// previous row's level-l words. For the 3×3 stencils (L = 0) U is the grey row itself.
__device__ __forceinline__ void smooth(const int g[WIDE], Levels state, acc_t u[CORE]) {
#if BINOMIAL_LEVELS > 0
    unsigned w[PAIRS];
#pragma unroll
    for (int j = 0; j < PAIRS; ++j) w[j] = __byte_perm(g[j], g[j + 8], 0x5410);  // grey < 256: (g[j], g[j + 8])
#pragma unroll
    for (int level = 0; level < BINOMIAL_LEVELS; ++level)
#pragma unroll
        for (int j = 0; j < PAIRS - 1 - level; ++j) w[j] += w[j + 1];
#pragma unroll
    for (int level = 0; level < BINOMIAL_LEVELS; ++level)
#pragma unroll
        for (int j = 0; j < CORE_PAIRS; ++j) {
            unsigned v = w[j];
            w[j] = v + state[level][j];
            state[level][j] = v;
        }
#pragma unroll
    for (int i = 0; i < CORE; ++i) u[i] = i < CORE_PAIRS ? unpack_half<false>(w[i]) : unpack_half<true>(w[i - 8]);
#else
    (void)state;
#pragma unroll
    for (int i = 0; i < CORE; ++i) u[i] = g[i];  // L = 0: RADIUS 1, so CORE = WIDE
#endif
}

// A value's bits, for packing into 32-bit words.
__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned bits_of(int v) { return (unsigned)v; }
__device__ __forceinline__ unsigned bits_of(short v) { return (unsigned short)v; }
__device__ __forceinline__ unsigned bits_of(u8 v) { return v; }

// Word k of 16 values packed little-endian (built from registers: casting the array's address would move it
// to local memory).
__device__ __forceinline__ unsigned packed_word(const out_t (&v)[GROUP], int k) {
    constexpr int per = 4 / sizeof(out_t);
    unsigned w = 0;
#pragma unroll
    for (int j = 0; j < per; ++j) w |= bits_of(v[k * per + j]) << (8 * sizeof(out_t) * j);
    return w;
}

// How the outputs are stored: 0 plain stores; 1 streaming stores (st.global.cs, "evict first": the outputs are
// never read again, so they need not push the input's halo rows out of the L2). Measured on the H200 (gpu-strip
// on 16 × 1920×1080 from torch, back to back, two rounds): int16 gradients 75.6 / 75.4
// against 76.9 / 77.3 µs plain; float32 gradients and the edges the same either way. So: the gradients.
#ifndef STORE_STREAMING
#define STORE_STREAMING (OUTPUT == OUTPUT_GRADIENTS)
#endif

// One 16-byte store at p (16-byte aligned).
__device__ __forceinline__ void store16B(void* p, uint4 v) {
#if STORE_STREAMING
    __stcs(static_cast<uint4*>(p), v);
#else
    *static_cast<uint4*>(p) = v;
#endif
}

// How a group's 16 outputs of a row are stored: as 16-byte words (the row and the group 16-byte aligned), as words at
// any alignment (all 16 inside the row; below), or a value at a time where inside the row (a group at its end).
#define STORE_WORDS 0
#define STORE_VALUES 1
#define STORE_CLIPPED 2

// STORE_VALUES: a group's bytes (16·sizeof(out_t): 16, 32 or 64), which may start at any byte, as aligned 16-byte
// stores where whole 16-byte units lie inside them, aligned 4-byte words before and after those, and a byte and a 2-byte
// half at most at each end. A value at a time, a warp's store instruction (its lanes 16·sizeof(out_t) bytes apart)
// touches 32 sectors for 32 values: the 3×3 edges at 7679×4320 took 201.9 µs byte by byte and 82.0 as words (H100);
// the int16 gradients from torch 787.8 µs a value at a time against 96.5 at 7680 wide.
// VALUE_WORDS 0: a value at a time, for measuring.
#ifndef VALUE_WORDS
#define VALUE_WORDS 1
#endif

// One 4-byte word at p (4-byte aligned), streaming as store16B.
__device__ __forceinline__ void store4B(unsigned* p, unsigned v) {
#if STORE_STREAMING
    __stcs(p, v);
#else
    *p = v;
#endif
}

// Words w[0 … F) at p, whose first LEAD words come before a 16-byte boundary.
template <int F, int LEAD>
__device__ __forceinline__ void store_words_from(unsigned* __restrict__ p, const unsigned (&w)[F]) {
    constexpr int L = LEAD < F ? LEAD : F, UNITS = (F - L) / 4;
#pragma unroll
    for (int k = 0; k < L; ++k) store4B(p + k, w[k]);
#pragma unroll
    for (int u = 0; u < UNITS; ++u)
        store16B(p + L + 4 * u, make_uint4(w[L + 4 * u], w[L + 4 * u + 1], w[L + 4 * u + 2], w[L + 4 * u + 3]));
#pragma unroll
    for (int k = L + 4 * UNITS; k < F; ++k) store4B(p + k, w[k]);
}

// Words w[0 … F) at p (4-byte aligned, anywhere in a 16-byte unit). Every lane of a warp marching one row has the same
// p mod 16 (their groups are 16·sizeof(out_t) bytes apart), so the switch does not split a warp there. The edges' 3 or 4
// words are stored one by one: at most one 16-byte store to gain, and with the switch the 7×7 edges at
// 7679×4320 took 145.0 µs against 130.7 without it (H100).
template <int F>
__device__ __forceinline__ void store_words_any(unsigned* __restrict__ p, const unsigned (&w)[F]) {
    if constexpr (F <= 4) {
        store_words_from<F, F>(p, w);
        return;
    }
    switch ((unsigned)(16 - (size_t)p % 16) % 16 / 4) {
        case 0: store_words_from<F, 0>(p, w); break;
        case 1: store_words_from<F, 1>(p, w); break;
        case 2: store_words_from<F, 2>(p, w); break;
        default: store_words_from<F, 3>(p, w);
    }
}

// The 4N bytes of words w (little-endian) at p, p aligned to ALIGN bytes (a value's size): the words shifted into
// place between the head and the tail when p is not 4-byte aligned.
template <int ALIGN, int N>
__device__ __forceinline__ void store_packed(void* dst, const unsigned (&w)[N]) {
    u8* p = static_cast<u8*>(dst);
    const unsigned a = (unsigned)(size_t)p % 4 & (4 - ALIGN);  // 0 … 3 (u8), 0 or 2 (2-byte values), 0
    if (a == 0) {
        store_words_any<N>(reinterpret_cast<unsigned*>(p), w);
        return;
    }
    const unsigned h = 4 - a;  // bytes before the first aligned word (1 … 3); the last a bytes follow the words
    if (h & 1) p[0] = (u8)w[0];
    if (h & 2) *reinterpret_cast<unsigned short*>(p + h - 2) = (unsigned short)(w[0] >> (8 * (h - 2)));
    unsigned mid[N - 1];
#pragma unroll
    for (int k = 0; k < N - 1; ++k) mid[k] = __funnelshift_r(w[k], w[k + 1], 8 * h);
    store_words_any<N - 1>(reinterpret_cast<unsigned*>(p + h), mid);
    if (a & 2) *reinterpret_cast<unsigned short*>(p + 4 * N - a) = (unsigned short)(w[N - 1] >> (8 * (4 - a)));
    if (a & 1) p[4 * N - 1] = (u8)(w[N - 1] >> 24);
}

// A group's 16 values as words, for store_group.
__device__ __forceinline__ void pack_values(const out_t (&v)[GROUP], unsigned (&w)[GROUP * sizeof(out_t) / 4]) {
#pragma unroll
    for (int k = 0; k < GROUP * (int)sizeof(out_t) / 4; ++k) w[k] = packed_word(v, k);
}

// THE WARP'S STORES: a warp whose 32 lanes march one band hold 32 consecutive groups of each row, 32 · 16 ·
// sizeof(out_t) bytes, but each lane stores its own group's N / 4 16-byte units, so one store instruction of the warp
// writes a unit in every group: for 32-bit values 32 units 64 bytes apart, sixteen 128-byte lines a fourth full, and
// four such instructions a row. Through `stage` (the warp's 32 · N / 4 units of shared memory) the lanes first
// write their units, then each instruction stores 32 consecutive units: four full lines. Unit g of the warp's row
// (lane g / (N / 4)'s unit g mod (N / 4)) sits at slot g ^ ((g >> 3) & (N / 4 − 1)): a 16-byte access is served in
// eight-lane phases, and the swizzle puts both phases' eight units in eight different bank groups. The lanes
// take part together (the caller gives a stage only to a warp marching one band, whose steps are the same).
template <int N>
__device__ __forceinline__ void store_warp(unsigned* __restrict__ p, const unsigned (&w)[N], uint4* stage) {
    constexpr unsigned U = N / 4;
    static_assert(N % 4 == 0 && (U & (U - 1)) == 0, "whole 16-byte units, a power of two of them");
    auto slot = [](unsigned g) { return g ^ ((g >> 3) & (U - 1)); };
    const unsigned lane = threadIdx.x % 32;
    __syncwarp();  // every lane done reading the last row's units
#pragma unroll
    for (unsigned u = 0; u < U; ++u)
        stage[slot(U * lane + u)] = make_uint4(w[4 * u], w[4 * u + 1], w[4 * u + 2], w[4 * u + 3]);
    __syncwarp();
    uint4* first = reinterpret_cast<uint4*>(p) - U * lane;  // lane 0's group: the warp's groups are consecutive
#pragma unroll
    for (unsigned k = 0; k < U; ++k) store16B(first + 32 * k + lane, stage[slot(32 * k + lane)]);
}

// A group's packed values at p: STORE_WORDS as 16-byte stores (p 16-byte aligned; with a stage, the warp's together,
// above), STORE_VALUES anywhere (above).
template <int STORE, int N>
__device__ __forceinline__ void store_group(out_t* p, const unsigned (&w)[N], uint4* stage) {
    if constexpr (STORE == STORE_WORDS && N >= 8) {
        if (stage != nullptr) {
            store_warp<N>(reinterpret_cast<unsigned*>(p), w, stage);
            return;
        }
    }
    if (STORE == STORE_WORDS)
        store_words_from<N, 0>(reinterpret_cast<unsigned*>(p), w);
    else
        store_packed<sizeof(out_t)>(p, w);
}

// Stores the 16 outputs of one row at out_row[x0…] (Gy's plane `plane` elements after Gx's); `stage`: store_warp's,
// or nullptr.
template <int STORE>
__device__ __forceinline__ void store16(out_t* __restrict__ out_row, size_t plane, int x0, int width, const acc_t gx[GROUP],
                                        const acc_t gy[GROUP], uint4* stage) {
#if OUTPUT == OUTPUT_EDGES
    unsigned v[GROUP], packed[GROUP / 4];
#pragma unroll
    for (int i = 0; i < GROUP; ++i) v[i] = edge_fast(gx[i], gy[i]);
    // Four bytes into a word with byte permutes (3 PRMT per word instead of shifts and ors).
#pragma unroll
    for (int k = 0; k < GROUP / 4; ++k)
        packed[k] = __byte_perm(__byte_perm(v[4 * k], v[4 * k + 1], 0x0040), __byte_perm(v[4 * k + 2], v[4 * k + 3], 0x0040),
                                0x5410);
    if (STORE == STORE_WORDS || (STORE == STORE_VALUES && VALUE_WORDS)) {
        store_group<STORE>(out_row + x0, packed, nullptr);  // a byte a value: one unit a lane, the warp's already whole lines
    } else {
#pragma unroll
        for (int i = 0; i < GROUP; ++i)
            if (STORE == STORE_VALUES || x0 + i < width) out_row[x0 + i] = (u8)(packed[i / 4] >> (8 * (i % 4)));
    }
#else
    // Gradients, direction: 16 values a plane, 16·sizeof(out_t) bytes, stored as 16-byte words when aligned (x0
    // is a multiple of 16, so out_row + x0 is 16-byte aligned for every out_t). One scalar store a value made
    // each store instruction of a warp touch 32 sectors 16 values apart: gradients at 7680×4320 took 741 µs
    // from torch, against 47 µs for the edges.
    out_t first[GROUP], second[GROUP];
#pragma unroll
    for (int i = 0; i < GROUP; ++i) {
        int x = (int)gx[i], y = (int)gy[i];
#if OUTPUT == OUTPUT_GRADIENTS
        first[i] = (out_t)x, second[i] = (out_t)y;
#elif OUTPUT == OUTPUT_DIRECTION
        first[i] = direction_of(x, y), second[i] = 0;
#elif OUTPUT == OUTPUT_SECTORS
        first[i] = sector_of(x, y), second[i] = 0;
#else
        first[i] = direction4_of(x, y), second[i] = 0;
#endif
    }
    if (STORE == STORE_WORDS || (STORE == STORE_VALUES && VALUE_WORDS)) {
        unsigned w[GROUP * sizeof(out_t) / 4];
        pack_values(first, w);
        store_group<STORE>(out_row + x0, w, stage);
#if OUTPUT == OUTPUT_GRADIENTS
        pack_values(second, w);
        store_group<STORE>(out_row + plane + x0, w, stage);
#endif
    } else {
#pragma unroll
        for (int i = 0; i < GROUP; ++i)
            if (STORE == STORE_VALUES || x0 + i < width) {
                out_row[x0 + i] = first[i];
#if OUTPUT == OUTPUT_GRADIENTS
                out_row[plane + x0 + i] = second[i];
#endif
            }
    }
#endif
}

// The 16 outputs of one row from U's rows above (a), at (m) and below (b), stored at out_row[x0…]. Column sums
// s = E·a + C·m + E·b and differences d = b − a (E, C = TAP_EDGE, TAP_CENTRE) are computed as a sliding window
// of three columns, not as arrays: fewer live registers than the arrays' form
// (measured by ptxas's counts of both). `up`: the march goes up, so a is below and Gy changes sign (the edge bytes do not). STORE: above.
template <int STORE>
__device__ __forceinline__ void sobel_row16(const acc_t a[CORE], const acc_t m[CORE], const acc_t b[CORE],
                                            out_t* __restrict__ out_row, size_t plane, int x0, int width, bool up,
                                            uint4* stage = nullptr) {
    auto column_sum = [](acc_t a, acc_t m, acc_t b) { return mad(TAP_CENTRE, m, TAP_EDGE * (a + b)); };
    acc_t s0 = column_sum(a[0], m[0], b[0]), d0 = b[0] - a[0];
    acc_t s1 = column_sum(a[1], m[1], b[1]), d1 = b[1] - a[1];
    acc_t gx[GROUP], gy[GROUP];
#pragma unroll
    for (int i = 0; i < GROUP; ++i) {
        acc_t s2 = column_sum(a[i + 2], m[i + 2], b[i + 2]), d2 = b[i + 2] - a[i + 2];
        gx[i] = s2 - s0;
        gy[i] = column_sum(d0, d1, d2);
#if OUTPUT != OUTPUT_EDGES
        if (up) gy[i] = -gy[i];
#endif
        s0 = s1, s1 = s2, d0 = d1, d1 = d2;
    }
    store16<STORE>(out_row, plane, x0, width, gx, gy, stage);
}

#endif  // CUDA_SOBEL_ROW16_CUH
