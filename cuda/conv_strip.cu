// conv_strip.cu — pattern: a SEPARABLE ROLLING WINDOW IN REGISTERS (ours; gpu-strip's march for any rank-one filter).
//
// A rank-one kernel is a column ⊗ a row (K[i][j] = c[i]·r[j]: box, Gaussian, Sobel, the Scharr family), so its sum
// is a row pass then a column pass: H(y', x) = Σⱼ r[j]·p(y', x + j − R), S(y, x) = Σᵢ c[i]·H(y + i − R, x). Each
// thread owns STRIP_G neighbouring columns and marches down a band of `rows` rows. Each step reads ONE new input row
// (the STRIP_G + 2R pixels of its window, as words), computes that row's pass once, keeps it in a ring of 2R + 1
// rows of registers (2R/S + 1 where the filter reads every S-th row only: CONV_STRIDE below), and writes one output
// row from the ring. So every input byte comes from DRAM about once (the
// band's 2R halo rows and the neighbours' words hit the caches), and the work a pixel is (2R + 1) + (2R + 1) taps
// instead of conv_rolling.cu's (2R + 1)²; no barrier (the only shared memory: each edge strip's own column map).
// The ring is an array indexed by compile-time slots: the step loop is unrolled 2R + 1 times, so the rows' roles
// rotate by renaming registers (strip.cu does the same with three rows).
//  - The taps are compiled in (CONV_COLUMN, CONV_ROW): zero taps vanish, so scharr:9's row pass is one subtraction.
//  - A gradient kernel's transpose is r ⊗ c: a second ring holds the rows' pass with c, and Gy = Σᵢ r[i]·(that ring).
//  - Where every |G| ≤ 32 767 (scharr, sobel:3 and :5), two columns share a word of the rings (RING_PACKED below).
//  - A box (CONV_FLAT: every tap 1) needs no ring: column sums down the band (plus the row entering, minus the row
//    leaving), then a running sum along them (plus the column entering, minus the one leaving): a few adds a pixel at
//    any diameter, 16 columns a thread (box_march below). Where rows are aligned its warps share their halo: a lane
//    reads only its own columns, keeps them in shared memory until they leave, and takes its halo's column sums
//    from its neighbour lanes by warp shuffles (box_march_shared).
//  - Rows are read as words in four forms (FORM_* below): aligned vector loads; the same shifted into place where a
//    width is not a multiple of the load's size, marching down the band as the aligned form does, or through the
//    border rule for the rows where the band's window passes the image's top or bottom; byte by byte, each column
//    where a map made once says, for the strips at a row's ends.
//
// Launch shape: 1D grid of 128×1 blocks over (band, group) pairs, STRIP_G columns (4 or 8, a box 16 or 8) × `rows`
// rows a thread, grid.z = planes.
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
#if CONV_FLAT && !CONV_NONNEG
#error "a box (CONV_FLAT) has no negative taps: the host sets CONV_NONNEG"
#endif

#define STRIP_THREADS 128
// Columns a thread: 4 for the ring (its 2r + 1 rows × 4 columns of registers), 16 for a box, which keeps only its
// window's column sums (box:15 at 16384²: 0.545 ms against 0.96 for 8 columns and row sums, H200). The host builds a packed ring (RING_PACKED below) with 8 too, for large images, and a
// box with 8 for small ones (core/src/gpu/patterns/conv_strip.rs, `column_builds`).
#ifndef STRIP_G  // (the host's -DSTRIP_G where it builds another count)
#define STRIP_G (CONV_FLAT ? 16 : 4)
#endif
#if STRIP_G % 4 != 0 || (CONV_FLAT && STRIP_G % 8 != 0)
#error "STRIP_G: a multiple of 4 columns, of 8 for a box (its 8-byte load unit)"
#endif
// The window's load unit (4, 8 or 16 bytes): the thread's columns as one vector, so that a warp's load is 32 such
// vectors side by side; a box's 16 columns as two 8-byte units, so that its halo costs 8 bytes a side, not 16. The
// window is pixels x0 − RU … x0 + STRIP_G + RU − 1, RU the radius rounded up to units.
#ifndef UNIT
#define UNIT (CONV_FLAT ? 8 : STRIP_G % 16 == 0 ? 16 : STRIP_G % 8 == 0 ? 8 : 4)
#endif
#define RU ((CONV_R + UNIT - 1) / UNIT * UNIT)
#define WORDS ((STRIP_G + 2 * RU) / 4)
#define WIN (STRIP_G + 2 * CONV_R)
// Rows of the march asked into L2 ahead of the one being read.
#ifndef STRIP_PREFETCH
#define STRIP_PREFETCH 4
#endif

// The rows a ring keeps: only those its column passes read. Where every non-zero tap of the factors that run
// down the columns (CONV_COLUMN, and a gradient's CONV_ROW: its transpose's) lies a multiple of S rows from the
// centre, output row y reads rows y − R, y − R + S, …, y + R only, and row y + S reads the same rows moved down by S.
// So a thread marches every S-th row of its band and its ring holds 2R/S + 1 rows instead of 2R + 1: the filter
// study's Scharr family, the 3×3 Scharr dilated by r, reads rows −r, 0 and +r, S = r, and scharr:9 keeps 3 rows, not
// 9. The S threads of a strip share a band S times as tall, one row of every S each (`band_rows` below), so a thread
// still reads each of its rows once, and a band's priming rows are 2R/S instead of 2R. The host gives S
// (`ConvKernel::ring_stride`, core/src/conv/mod.rs); 1 for every other kernel: the march as before.
#ifndef CONV_STRIDE
#define CONV_STRIDE 1
#endif
#define RING_R (CONV_R / CONV_STRIDE)
#define RING_D (2 * RING_R + 1)
static_assert(CONV_STRIDE >= 1 && CONV_R % CONV_STRIDE == 0, "CONV_STRIDE divides the radius");
static_assert(!CONV_FLAT || CONV_STRIDE == 1, "a box reads every row");
__host__ __device__ constexpr bool taps_on_kept_rows() {
    constexpr int column[CONV_D] = {CONV_COLUMN}, row[CONV_D] = {CONV_ROW};
    for (int i = 0; i < CONV_D; ++i)
        if ((i - CONV_R) % CONV_STRIDE != 0 && (column[i] != 0 || (CONV_GRADIENT && row[i] != 0))) return false;
    return true;
}
static_assert(taps_on_kept_rows(), "CONV_STRIDE: a non-zero tap on a row the ring does not keep");

__device__ __forceinline__ int column_tap(int i) {
    const int t[CONV_D] = {CONV_COLUMN};
    return t[i];
}
__device__ __forceinline__ int row_tap(int j) {
    const int t[CONV_D] = {CONV_ROW};
    return t[j];
}

// The edge strips' column maps (FORM_GATHER; `map_columns`, sobel.cuh), resolved once a march: with the border rule at
// every row, the edge strips' march, one warp a scheduler, outlasted the rest of a small image's launch (H100, scharr:7
// on the filter study's 483×540: 11 µs, SMs busy a third of it). In shared memory because
// held in registers through the march it took registers from every form (the kernel's count is its largest path's:
// scharr:9 at 8 columns 128 → 146).
__shared__ unsigned column_maps[MAP_WORDS_OF(WIN) + 1][STRIP_THREADS];

// Where a thread's columns are and how its rows are read.
struct Strip {
    const u8* plane;
    int width, height, border, x0;
};

// How a thread reads its rows: a template parameter of the marches, so that each loop holds only the form it runs
// (measured: with two forms in one loop body, half the stalls were instruction fetch; with the alignment tested at
// every load, scharr:9 at 16384² took 0.63 ms against 0.52).
#define FORM_ALIGNED 0  // every row it reads inside the image, its window inside the row, rows on UNIT boundaries
#define FORM_INSIDE 3   // every row it reads inside the image, its window inside the row with a unit to spare, any
                        // alignment (the ring only: the box's unaligned rows keep FORM_SHIFTED, see the kernel)
#define FORM_SHIFTED 1  // the window inside the row with a unit to spare, any alignment; rows through the border rule
#define FORM_GATHER 2   // the rest, at a row's ends: rows and columns through the border rule

// Whether form FORM reads only rows inside the image: its addresses then march down a row a step (`At`), its loads
// need no border rule and happen whether or not the band goes on (`advance`).
__device__ __forceinline__ constexpr bool rows_inside_form(int form) {
    return form == FORM_ALIGNED || form == FORM_INSIDE;
}

// The words of one input row's window: bytes x0 − RU … x0 + STRIP_G + RU − 1.
struct Words {
    unsigned v[WORDS];
};

// Row y's words (row y inside the image): WORDS / (UNIT / 4) loads where rows are aligned. Where they are not (a
// width that is not a multiple of UNIT: the filter study's pyramid is 3866, 1933, 966 and 483 wide), one unit more
// is read from the aligned address below and the words are shifted into place (`load_shifted`, sobel.cuh).
template <bool ALIGNED>
__device__ __forceinline__ Words load_words_at(const u8* p) {
    Words r;
    if constexpr (ALIGNED)
        load_units<UNIT, WORDS / (UNIT / 4)>(p, r.v);
    else
        load_shifted<UNIT>(p, r.v);
    return r;
}

// Where row y's words start: byte x0 − RU of the row.
__device__ __forceinline__ const u8* words_of(const Strip& s, int y) {
    return s.plane + (size_t)y * s.width + s.x0 - RU;
}

template <bool ALIGNED>
__device__ __forceinline__ Words load_words(const Strip& s, int y) {
    return load_words_at<ALIGNED>(words_of(s, y));
}

// The window from words: w[c] = pixel x0 − R + c, c < WIN.
__device__ __forceinline__ void window_of(const Words& r, int w[WIN]) {
#pragma unroll
    for (int c = 0; c < WIN; ++c) {
        const int b = RU - CONV_R + c;  // a constant once unrolled: one byte permute (byte b % 4, zeros above)
        w[c] = __byte_perm(r.v[b / 4], 0, 0x4440 | (b % 4));
    }
}

// Row y's window bytes through the border rule (FORM_GATHER): the row the rule picks, then the WIN bytes the window
// takes, each from the column its map says (`column_maps`), in their places of the words (the rest stay 0). Loaded
// GATHER_BATCH at a time, a branch a batch (skipping a batch of the zero border's constants): without a branch between
// them the compiler issued all WIN loads at once, an address pair each, and the kernel (whose register count is its
// largest path's) took more registers (scharr:9 at 8 columns 146 instead of 128, box:15 110 instead of 100); with
// each load's use right after it, the WIN loads of a row ran one after another, and box:15's edge strips at 16384²
// outlasted the rest of the kernel. Not inlined: inlined into every row of the march, the
// kernel took 168 registers for scharr:9 at 8 columns and for box:15.
#ifndef GATHER_BATCH
#define GATHER_BATCH 4
#endif
__device__ __noinline__ Words gather_row(Strip s, int y) {
    const unsigned inside = column_maps[MAP_WORDS_OF(WIN)][threadIdx.x];
    Words r = {};
    int sy = resolve(y, s.height, s.border);
    if (sy < 0) return r;
    const u8* at = s.plane + (size_t)sy * s.width + s.x0 - CONV_R;
#pragma unroll
    for (int c0 = 0; c0 < WIN; c0 += GATHER_BATCH) {
        if ((inside >> c0 & (1u << GATHER_BATCH) - 1) == 0) continue;  // (a branch a batch: see above)
        unsigned px[GATHER_BATCH];
#pragma unroll
        for (int c = c0; c < c0 + GATHER_BATCH && c < WIN; ++c)
            px[c - c0] = __ldg(at + mapped_column(column_maps, c));
#pragma unroll
        for (int c = c0; c < c0 + GATHER_BATCH && c < WIN; ++c) {
            const int b = RU - CONV_R + c;
            r.v[b / 4] |= (inside >> c & 1u ? px[c - c0] : 0u) << (8 * (b % 4));
        }
    }
    return r;
}

// Row y's words in form FORM. The rows of the forms that march are all inside the image (the kernel chooses them only
// then); the others take the row the border rule picks (zero words for a row it makes 0), so that only the strips at a
// row's ends, not whole bands at the image's top and bottom, need the byte-by-byte form.
template <int FORM>
__device__ __forceinline__ Words row_words(const Strip& s, int y) {
    if constexpr (rows_inside_form(FORM)) {
        return load_words<FORM == FORM_ALIGNED>(s, y);
    } else if constexpr (FORM == FORM_GATHER) {
        return gather_row(s, y);
    } else {
        int sy = resolve(y, s.height, s.border);
        return sy < 0 ? Words{} : load_words<false>(s, sy);
    }
}

// The ring's row pass of a window: h[k] = Σⱼ tap(j)·w[k + j] for the STRIP_G outputs (a box has no ring: box_march).
template <typename Tap>
__device__ __forceinline__ void row_pass(Tap tap, const int w[WIN], acc_t h[STRIP_G]) {
#pragma unroll
    for (int k = 0; k < STRIP_G; ++k) {
        acc_t sum = 0;
#pragma unroll
        for (int j = 0; j < CONV_D; ++j) sum += (acc_t)tap(j) * w[k + j];
        h[k] = sum;
    }
}

// The STRIP_G bytes b at o as U-byte stores (o U-aligned; U 4, 8 or 16).
template <int U>
__device__ __forceinline__ void store_bytes(u8* o, const u8 b[STRIP_G]) {
    unsigned v[STRIP_G / 4];
#pragma unroll
    for (int q = 0; q < STRIP_G / 4; ++q)
        v[q] = b[4 * q] | b[4 * q + 1] << 8 | b[4 * q + 2] << 16 | (unsigned)b[4 * q + 3] << 24;
#pragma unroll
    for (int q = 0; q < STRIP_G / U; ++q) {
        if constexpr (U == 16)
            ((uint4*)o)[q] = make_uint4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
        else if constexpr (U == 8)
            ((uint2*)o)[q] = make_uint2(v[2 * q], v[2 * q + 1]);
        else
            ((unsigned*)o)[q] = v[q];
    }
}

// The STRIP_G output bytes at o (byte x0 of an output row): whole words where rows are aligned, else byte by byte
// (those inside the row).
template <int FORM>
__device__ __forceinline__ void store_row(const Strip& s, u8* o, const u8 b[STRIP_G]) {
    if constexpr (FORM == FORM_ALIGNED) {
        store_bytes<UNIT>(o, b);
    } else if constexpr (FORM != FORM_GATHER) {  // rows not aligned: byte by byte, all inside the row
#pragma unroll
        for (int k = 0; k < STRIP_G; ++k) o[k] = b[k];
    } else {
#pragma unroll
        for (int k = 0; k < STRIP_G; ++k)
            if (s.x0 + k < s.width) o[k] = b[k];
    }
}

// A gradient whose every |G| is at most 32 767 (the host's CONV_BOUND: scharr:3 … 15, sobel:3 and :5) keeps its
// ring two columns to a word (RING_PACKED): columns k and k + 2 of each four of the thread's as the 16-bit lanes of
// one 32-bit word, so that one add, subtract or multiply by a tap works on both. The passes are linear and every lane
// ends in −32 768 … 32 767, so the final word is exactly Lo + 2^16·Hi whatever borrows passed between the lanes on the
// way (as the box's column sums, below); Lo is its low half sign-extended, Hi the word plus 2^15 shifted down. The
// ring then takes half the registers (scharr:9: 36 instead of 72), and a row's bytes enter it as pairs: bytes 0 and 2
// of a word in one mask, bytes 1 and 3 in one byte permute, instead of one permute a byte.
#if !CONV_FLAT && CONV_GRADIENT && defined(CONV_BOUND) && CONV_BOUND <= 32767
#define RING_PACKED 1
#else
#define RING_PACKED 0
#endif

// The ring: the row pass (with the row taps, and for a gradient with the column taps too) of the 2R/S + 1 input rows
// the current output row reads (rows y − R, y − R + S, …, y + R; S = CONV_STRIDE, above); packed, pair e of a row
// holds columns pair_column(e) and pair_column(e) + 2.
struct Ring {
#if RING_PACKED
    unsigned hr[RING_D][STRIP_G / 2], hc[RING_D][STRIP_G / 2];
#else
    acc_t hr[RING_D][STRIP_G], hc[RING_D][STRIP_G];
#endif
};

// Bytes b and b + 2 of the words as the 16-bit lanes of a word (b a constant once unrolled): within one word a mask
// or a byte permute; across two, a permute of the two words' pairs.
__device__ __forceinline__ unsigned pair_at(const Words& r, int b) {
    auto spread = [&](int i) { return b % 2 == 0 ? r.v[i] & 0x00FF00FFu : __byte_perm(r.v[i], 0, 0x4341); };
    return b % 4 < 2 ? spread(b / 4) : __byte_perm(spread(b / 4), spread(b / 4 + 1), 0x5432);
}

// The first of pair e's two columns (the other is 2 to its right): 0, 1, 4, 5, 8, 9, …
__device__ __forceinline__ constexpr int pair_column(int e) { return 4 * (e / 2) + e % 2; }

// A packed row pass: pair e (columns k and k + 2, k = pair_column(e)) of Σⱼ tap(j)·p(x0 + k + j − R).
template <typename Tap>
__device__ __forceinline__ void row_pass_packed(Tap tap, const Words& r, unsigned h[STRIP_G / 2]) {
#pragma unroll
    for (int e = 0; e < STRIP_G / 2; ++e) {
        unsigned sum = 0;
#pragma unroll
        for (int j = 0; j < CONV_D; ++j)
            if (tap(j) != 0) sum += (unsigned)tap(j) * pair_at(r, RU - CONV_R + pair_column(e) + j);
        h[e] = sum;
    }
}

__device__ __forceinline__ int lane_lo(unsigned w) { return (int)(short)(w & 0xFFFFu); }
__device__ __forceinline__ int lane_hi(unsigned w) { return (int)(w + 0x8000u) >> 16; }

// Input row y' into slot `slot` of the ring, from its words.
__device__ __forceinline__ void enter(Ring& g, int slot, const Words& r) {
#if RING_PACKED
    row_pass_packed(row_tap, r, g.hr[slot]);
    row_pass_packed(column_tap, r, g.hc[slot]);
#else
    int w[WIN];
    window_of(r, w);
    row_pass(row_tap, w, g.hr[slot]);
    if (CONV_GRADIENT) row_pass(column_tap, w, g.hc[slot]);
#endif
}

// Where the march is, as addresses: the words of the row the next step reads, and byte x0 of the output row. Each
// moves down a row a step (a 64-bit add) instead of being formed from the row number (a 64-bit multiply and add each
// time: scharr:9's step spent ~15 of its ~100 instructions forming the addresses of the row it read, the row it
// prefetched and the row it wrote). The forms whose rows are all inside the image read and
// write through them; the others read by row numbers.
struct At {
    const u8* in;
    u8* out;
    size_t ahead;  // from `in` to the row STRIP_PREFETCH below it, at byte x0
};

__device__ __forceinline__ At at_row(const Strip& s, u8* out, int y0) {
    return {words_of(s, y0 + CONV_STRIDE + CONV_R), out + (size_t)y0 * s.width + s.x0,
            (size_t)STRIP_PREFETCH * CONV_STRIDE * s.width + RU};
}

// Byte x0 of output row y: from `at` where the form marches, else from the row number.
template <int FORM>
__device__ __forceinline__ u8* out_row(const Strip& s, u8* out, int y, const At& at) {
    return rows_inside_form(FORM) ? at.out : out + (size_t)y * s.width + s.x0;
}

// The march's software pipelining: the row in `next` (its words read a step earlier) returned; then, unless the band
// ends (`more` false), row `following` — the one the next step reads — asked into `next` before this step computes,
// so that its latency overlaps the arithmetic, and the march's row STRIP_PREFETCH steps beyond it asked into L2 (a
// hint: skipped past the image's end). The forms whose rows are inside the image load whatever `more` says — at the band's last step
// the row below the one it needs, unused (the kernel takes these forms only where that row is inside the image) — so
// that no step keeps old words in place of a load that did not happen: a conditional load made the compiler copy
// the words between steps.
template <int FORM>
__device__ __forceinline__ Words advance(const Strip& s, Words& next, int following, bool more, At& at) {
    Words cur = next;
    if constexpr (rows_inside_form(FORM)) {
        next = load_words_at<FORM == FORM_ALIGNED>(at.in);
        if (following + STRIP_PREFETCH * CONV_STRIDE < s.height) prefetch_l2(at.in + at.ahead);
        at.in += CONV_STRIDE * s.width;
        return cur;
    }
    if (more) next = row_words<FORM>(s, following);
    int ahead = following + STRIP_PREFETCH * CONV_STRIDE;
    if (FORM != FORM_GATHER && ahead < s.height) prefetch_l2(s.plane + (size_t)ahead * s.width + s.x0);
    return cur;
}

// One step of the march at compile-time position U of the ring (D' = 2R/S + 1 slots, S = CONV_STRIDE): input row
// y + R enters slot (U + 2R/S) mod D' (where row y − R − S was), and output row y is the column pass over slots
// U … U + 2R/S (mod D'), rows y − R, y − R + S, … y + R, with taps 0, S, 2S, … 2R; `next` holds row y + R's words
// (`advance`), read in form FORM (FORM_* above). The thread's next output row is y + S.
template <int U, int FORM>
__device__ __forceinline__ void step(const Strip& s, u8* out, int y, int end, Ring& g, Words& next, At& at) {
    constexpr int slot = (U + 2 * RING_R) % RING_D;
    enter(g, slot, advance<FORM>(s, next, y + CONV_STRIDE + CONV_R, y + CONV_STRIDE < end, at));
    u8 b[STRIP_G];
#if RING_PACKED
#pragma unroll
    for (int e = 0; e < STRIP_G / 2; ++e) {
        unsigned gs = 0, gt = 0;
#pragma unroll
        for (int i = 0; i < RING_D; ++i) {
            constexpr int S = CONV_STRIDE;
            if (column_tap(S * i) != 0) gs += (unsigned)column_tap(S * i) * g.hr[(U + i) % RING_D][e];
            if (row_tap(S * i) != 0) gt += (unsigned)row_tap(S * i) * g.hc[(U + i) % RING_D][e];
        }
        b[pair_column(e)] = conv_finish(lane_lo(gs), lane_lo(gt));
        b[pair_column(e) + 2] = conv_finish(lane_hi(gs), lane_hi(gt));
    }
#else
#pragma unroll
    for (int k = 0; k < STRIP_G; ++k) {
        acc_t gs = 0, gt = 0;
#pragma unroll
        for (int i = 0; i < RING_D; ++i) {
            gs += (acc_t)column_tap(CONV_STRIDE * i) * g.hr[(U + i) % RING_D][k];
            if (CONV_GRADIENT) gt += (acc_t)row_tap(CONV_STRIDE * i) * g.hc[(U + i) % RING_D][k];
        }
        b[k] = conv_finish(gs, gt);
    }
#endif
    store_row<FORM>(s, out_row<FORM>(s, out, y, at), b);
    if (rows_inside_form(FORM)) at.out += CONV_STRIDE * s.width;
}

// Steps U, U + 1, … of one turn of the ring, while rows remain (y < end).
template <int U, int FORM>
__device__ __forceinline__ void turn(const Strip& s, u8* out, int y, int end, Ring& g, Words& next, At& at) {
    if (y >= end) return;
    step<U, FORM>(s, out, y, end, g, next, at);
    if constexpr (U + 1 < RING_D) turn<U + 1, FORM>(s, out, y + CONV_STRIDE, end, g, next, at);
}

// A thread's whole march: prime the ring with rows y0 − R, y0 − R + S, … y0 + R − S (slots 0 … 2R/S − 1; slot 2R/S
// is the first step's), then output rows y0, y0 + S, … below `end`, one a step. Every priming row is read before any
// window is taken (in the load forms, one memory round trip, not 2R/S), then row y0 + R's for the first step.
template <int FORM>
__device__ __forceinline__ void march(const Strip& s, u8* out, int y0, int end) {
    Ring g;
    Words first[2 * RING_R > 0 ? 2 * RING_R : 1];
#pragma unroll
    for (int i = 0; i < 2 * RING_R; ++i) first[i] = row_words<FORM>(s, y0 - CONV_R + CONV_STRIDE * i);
    Words next = row_words<FORM>(s, y0 + CONV_R);
#pragma unroll
    for (int i = 0; i < 2 * RING_R; ++i) enter(g, i, first[i]);
    At at = at_row(s, out, y0);
    for (int y = y0; y < end; y += CONV_STRIDE * RING_D) turn<0, FORM>(s, out, y, end, g, next, at);
}

// A box's march (CONV_FLAT): no ring and no row pass per row. The thread keeps its window's column sums, each over
// the output row's 2R + 1 input rows; each step adds the row entering (y + R) and subtracts the row leaving
// (y − R − 1), re-read from the caches (this thread read it 2R + 1 steps earlier; box_march_shared keeps it in
// shared memory instead). Then the output
// row is a running sum along the columns: each output is the previous one plus the column entering, minus the column
// leaving. So a pixel costs a few operations at any diameter, and a thread holds only its window's column sums:
// 16 columns a thread, two 8-byte loads a row and the halo's.
//
// The arithmetic is spread over the SM's two pipes: with every sum an int, box:15's step was 244
// instructions for 16 pixels, nearly all on the integer pipe (byte permutes, three-input adds, the division's
// shift), which issues at half the rate of the float pipe (ncu: integer pipe 76 % of the busy time).
//  - Column sums two to a word (Columns): a column sum is at most 255·D (3825 for box:15), far inside a 16-bit lane,
//    and never negative, so one 32-bit add or subtract updates two columns: the word's value is exactly
//    lo + 2^16·hi whatever borrows pass between the lanes on the way, as long as each lane ends in 0 … 65 535. A
//    row's 4-byte word gives its bytes 0 and 2 as one pair of lanes and bytes 1 and 3 as another, one byte permute
//    each.
//  - Along the row in floats: a lane becomes the float 2^23 + lane with one byte permute (its bits are 0x4B00 and
//    the lane); the difference of two such floats is exact, and every sum is an integer below 2^23, so float adds
//    are exact too.
//  - The division by d in floats, rounded down: ⌊(s + ⌊d/2⌋) / d⌋ is the float fma n·(1/d rounded up) + 2^23
//    rounded towards −∞, whose low byte is the quotient. Exact for every n < 2^23: n·(1/d)↑ ≥ n/d, and it exceeds
//    n/d by less than n·2^−23/d < 1/d, the distance from n/d to the next integer above.
//    tests/filter.rs::the_box_division_in_floats_is_exact checks it for every n of every named box and for divisors
//    up to the limit. The host takes this march only where 255·D² + ⌊d/2⌋ < 2^23
//    (`is_box`); a larger divisor (a matrix file's) takes the ring.
#if CONV_FLAT && 255 * CONV_D * CONV_D + CONV_DIVISOR / 2 >= (1 << 23)
#error "a box's sums must stay below 2^23 (floats exact): the host gives larger divisors the ring"
#endif
#define PRAGMA_OF(x) _Pragma(#x)
#define UNROLL_BY(n) PRAGMA_OF(unroll n)
// Whether a box's quotient can pass 255: only with a divisor below D² (a matrix file of ones with its own divisor).
#define BOX_CLAMPS ((255 * CONV_D * CONV_D + CONV_DIVISOR / 2) / CONV_DIVISOR > 255)
// The band's 2R priming rows, R at a time: two memory round trips (box:15: 96 registers, five blocks an SM as with
// 92). Two at a time, the priming's seven round trips were 28 % of box:15's stall samples at 16384² (ncu source
// counters), and the box took 0.275 ms against 0.252–0.256 (H100). Asking the priming
// rows into L2 first as well changed nothing measurable there and slowed the one-row bands of small images.
#ifndef BOX_PRIME_UNROLL
#define BOX_PRIME_UNROLL (CONV_R > 0 ? CONV_R : 1)
#endif
#define TWO_23 8388608.0f

// The column sums of the window's words, two 16-bit lanes a word: even[i] holds those of the columns at bytes 4i
// and 4i + 2 of the words, odd[i] those at bytes 4i + 1 and 4i + 3.
struct Columns {
    unsigned even[WORDS], odd[WORDS];
};

// Adds the N words `in` to the column sums of words `even` and `odd` (see Columns) and subtracts the words `out`.
template <int N>
__device__ __forceinline__ void add_rows(unsigned* even, unsigned* odd, const unsigned* in, const unsigned* out) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
        even[i] += __byte_perm(in[i], 0, 0x4240) - __byte_perm(out[i], 0, 0x4240);
        odd[i] += __byte_perm(in[i], 0, 0x4341) - __byte_perm(out[i], 0, 0x4341);
    }
}

// Adds row `in`'s bytes to the column sums and subtracts row `out`'s.
__device__ __forceinline__ void update_columns(Columns& k, const Words& in, const Words& out) {
    add_rows<WORDS>(k.even, k.odd, in.v, out.v);
}

// The sum of the column at byte b of the words, plus 2^23, as a float (see above).
__device__ __forceinline__ float column_plus_2_23(const Columns& k, int b) {
    unsigned w = b % 2 == 0 ? k.even[b / 4] : k.odd[b / 4];
    return __uint_as_float(__byte_perm(w, 0x4B000000u, b % 4 < 2 ? 0x7610 : 0x7632));
}

// The output byte of n = s + ⌊d/2⌋ (see above); `inv` is 1/d rounded up.
__device__ __forceinline__ u8 box_byte(float n, float inv) {
    float q = __fmaf_rd(n, inv, TWO_23);
    if (BOX_CLAMPS) q = fminf(q, TWO_23 + 255.0f);
    return (u8)__float_as_uint(q);
}

// The first output's window sum plus ⌊d/2⌋ (columns x0 − R … x0 + R, bytes RU − R … RU + R of the words), as a
// float. For a wide box the lanes of the words holding those columns are added as ints first (a lane then sums at
// most 2·W of them, W the words: still below 2^16) and the words' bytes outside the window taken off, so that it
// costs a float conversion a lane, not a column (box:15: 13 instructions instead of 30); a narrow box, whose window
// is a small part of its words, adds its columns one by one.
__device__ __forceinline__ float first_window(const Columns& k, const float c[WIN]) {
    constexpr int B0 = RU - CONV_R, B1 = RU + CONV_R, W0 = B0 / 4, W1 = B1 / 4, W = W1 - W0 + 1;
    constexpr int outside = B0 % 4 + 3 - B1 % 4;
    float n = (float)(CONV_DIVISOR / 2);
    if constexpr (2 * W + 2 * outside + 4 < 2 * CONV_D) {
        static_assert(2 * W * 255 * CONV_D < 65536, "a lane's sum of 2·W columns fits 16 bits");
        unsigned t = 0;
#pragma unroll
        for (int i = W0; i <= W1; ++i) t += k.even[i] + k.odd[i];
        n += (__uint_as_float(__byte_perm(t, 0x4B000000u, 0x7610)) - TWO_23) +
             (__uint_as_float(__byte_perm(t, 0x4B000000u, 0x7632)) - TWO_23);
#pragma unroll
        for (int b = 4 * W0; b < B0; ++b) n -= column_plus_2_23(k, b) - TWO_23;
#pragma unroll
        for (int b = B1 + 1; b < 4 * W1 + 4; ++b) n -= column_plus_2_23(k, b) - TWO_23;
    } else {
#pragma unroll
        for (int j = 0; j < CONV_D; ++j) n += c[j] - TWO_23;
    }
    return n;
}

// The output row's bytes from the window's column sums: a running sum along them, each output the previous one plus
// the column entering, minus the column leaving.
__device__ __forceinline__ void box_bytes(const Columns& k, float inv, u8 b[STRIP_G]) {
    float c[WIN];  // column x0 − R + j's sum, plus 2^23
#pragma unroll
    for (int j = 0; j < WIN; ++j) c[j] = column_plus_2_23(k, RU - CONV_R + j);
    float n = first_window(k, c);
    b[0] = box_byte(n, inv);
#pragma unroll
    for (int j = 1; j < STRIP_G; ++j) {
        n += c[j + CONV_D - 1] - c[j - 1];
        b[j] = box_byte(n, inv);
    }
}

// The aligned march of a box shares the window's halo across the warp (`box_march_shared`, below); the others read
// each thread's whole window, its halo included, entering and leaving.
template <int FORM>
__device__ __forceinline__ void box_march(const Strip& s, u8* out, int y0, int end) {
    const float inv = __frcp_ru((float)CONV_DIVISOR);
    Columns k;
#pragma unroll
    for (int i = 0; i < WORDS; ++i) k.even[i] = k.odd[i] = 0;
    const Words none = {};
    // Rows y0 − R … y0 + R − 1.
    UNROLL_BY(BOX_PRIME_UNROLL)
    for (int i = 0; i < 2 * CONV_R; ++i) update_columns(k, row_words<FORM>(s, y0 - CONV_R + i), none);
    // The words of the rows entering and leaving, read a step ahead (none leaves at the first step).
    Words nin = row_words<FORM>(s, y0 + CONV_R), nout = {};
    for (int y = y0; y < end; ++y) {
        Words win = nin, wout = nout;
        if (y + 1 < end) nout = row_words<FORM>(s, y - CONV_R), nin = row_words<FORM>(s, y + 1 + CONV_R);
        int ahead = y + 1 + CONV_R + STRIP_PREFETCH;
        if (FORM != FORM_GATHER && ahead < s.height) prefetch_l2(s.plane + (size_t)ahead * s.width + s.x0);
        update_columns(k, win, wout);
        u8 b[STRIP_G];
        box_bytes(k, inv, b);
        store_row<FORM>(s, out + (size_t)y * s.width + s.x0, b);
    }
}

// A box's aligned march with the halo shared. Each thread reads only its own STRIP_G columns of the row
// entering (one coalesced load of a warp's 32 × STRIP_G bytes) and keeps them in shared memory until they leave the
// window 2R + 1 steps later, so it updates only its own columns' sums; the sums of the halo's columns are its
// neighbour lanes' own, taken by warp shuffles (`share_halo`). A warp marches 32 neighbouring strips of one band, and
// its outer two lanes only supply halo (the kernel's numbering: 30 strips of output a warp). Before, each thread read
// its 16 columns and 8 bytes of halo each side, twice a row (entering, and leaving from the caches): box:15 at 16384²
// moved 3.6 bytes through L2 for every byte of the image, and L2 was the limit (82.7 % busy).
#if CONV_FLAT
#define OWN (STRIP_G / 4)  // a thread's own words of a row
#ifndef OWN_UNIT           // the widest load of them (16 where rows allow; CUDA_SOBEL_DEFINES=-DOWN_UNIT=8 measures 8)
#define OWN_UNIT 16
#endif
#define HALO (RU / 4)      // the window's words each side of them (none for box:1)
static_assert(HALO <= OWN, "a lane's halo lies within its neighbour's own columns");
// Row y0 − R + q's own words (q ≥ 0) in slot q mod D of its thread: 30 KB a block for box:15 at 16 columns.
struct Own {
    unsigned v[OWN];
};
__shared__ Own leaving[CONV_D][STRIP_THREADS];

// Whether word i of the window holds a column the output row reads (x0 − R … x0 + STRIP_G + R − 1): only those of the
// halo are shared.
__device__ __forceinline__ constexpr bool word_read(int i) { return 4 * i + 3 >= RU - CONV_R && 4 * i < RU + STRIP_G + CONV_R; }

// The halo's column sums from the neighbour lanes: the left halo is the last HALO words of the lane to the left, the
// right halo the first HALO words of the lane to the right (the outer lanes' halo is left wrong: they write nothing).
__device__ __forceinline__ void share_halo(Columns& k) {
#pragma unroll
    for (int i = 0; i < HALO; ++i) {
        if (word_read(i)) {
            k.even[i] = __shfl_up_sync(0xFFFFFFFFu, k.even[OWN + i], 1);
            k.odd[i] = __shfl_up_sync(0xFFFFFFFFu, k.odd[OWN + i], 1);
        }
        if (word_read(HALO + OWN + i)) {
            k.even[HALO + OWN + i] = __shfl_down_sync(0xFFFFFFFFu, k.even[HALO + i], 1);
            k.odd[HALO + OWN + i] = __shfl_down_sync(0xFFFFFFFFu, k.odd[HALO + i], 1);
        }
    }
}

// Adds the own words `in` to the own columns' sums and subtracts `out`.
__device__ __forceinline__ void update_own(Columns& k, const Own& in, const Own& out) {
    add_rows<OWN>(k.even + HALO, k.odd + HALO, in.v, out.v);
}

template <int OU>
__device__ __forceinline__ Own load_own(const u8* p) {
    Own r;
    load_units<OU, STRIP_G / OU>(p, r.v);
    return r;
}

// Every lane of the warp runs it (the shuffles need all 32), `writes` false for the outer two. Rows are read and
// written OU bytes at a time: 16 where the rows are 16-byte aligned, else 8 (UNIT). With 8-byte loads and stores
// of 16 columns a thread a warp's two instructions each touched every 32-byte sector of its 512 bytes.
template <int OU>
__device__ __forceinline__ void box_march_shared(const Strip& s, u8* out, int y0, int end, bool writes) {
    const float inv = __frcp_ru((float)CONV_DIVISOR);
    Columns k;
#pragma unroll
    for (int i = 0; i < WORDS; ++i) k.even[i] = k.odd[i] = 0;
    const Own none = {};
    const u8* p = s.plane + (size_t)(y0 - CONV_R) * s.width + s.x0;  // row y0 − R, byte x0
    // Rows y0 − R … y0 + R − 1 into slots 0 … 2R − 1; slot 2R, whose row leaves at the first step, is zero.
    UNROLL_BY(BOX_PRIME_UNROLL)
    for (int i = 0; i < 2 * CONV_R; ++i, p += s.width) {
        Own r = load_own<OU>(p);
        update_own(k, r, none);
        leaving[i][threadIdx.x] = r;
    }
    leaving[2 * CONV_R][threadIdx.x] = none;
    // The entering row read a step ahead; at the band's last step the row below its window (inside the image: the
    // kernel takes this form only then), unused. Two steps ahead measured the same (box:15 at 16384², H100: 0.2369
    // against 0.2354 ms), and asking rows into L2 ahead as the other marches do (`prefetch_l2`) slower (0.2416 against
    // 0.2369, both two steps ahead).
    Own nin = load_own<OU>(p);
    p += s.width;
    u8* o = out + (size_t)y0 * s.width + s.x0;
    int slot = 2 * CONV_R;
    for (int y = y0; y < end; ++y, p += s.width, o += s.width) {
        Own win = nin, wout = leaving[slot][threadIdx.x];
        nin = load_own<OU>(p);
        leaving[slot][threadIdx.x] = win;
        slot = slot == 2 * CONV_R ? 0 : slot + 1;
        update_own(k, win, wout);
        share_halo(k);
        u8 b[STRIP_G];
        box_bytes(k, inv, b);
        if (writes) store_bytes<OU>(o, b);
    }
}
#endif

// This build's march (a box's or the ring's) in form FORM, for a thread that writes its strip.
template <int FORM>
__device__ __forceinline__ void march_of(const Strip& s, u8* out, int y0, int end) {
#if CONV_FLAT
    box_march<FORM>(s, out, y0, end);
#else
    march<FORM>(s, out, y0, end);
#endif
}

// Which strip thread t marches: every band's edge strips (those at a row's ends, whose window passes the row's ends
// or lacks a unit to spare) first, then every band's interior strips, so that a warp runs one form — an edge strip's
// border rule among interior strips would hold the whole warp at every row (with 16 columns a thread, a 1920-pixel
// row has 120 strips: half the warps would hold one) — and so that the slower edge strips start in the first wave
// and finish under the interior's, not after it (numbered last, they were the kernel's tail at 16384²).
// A box's warps share their halo (`box_march_shared`): their interior strips come SPAN = 30 a warp, one band's, in
// lanes 1 … 30, lanes 0 and 31 marching the strips either side of them (for their column sums only), and the edge
// strips end on a whole warp. The ring's warps take 32 strips in a row, whatever their bands.
#if CONV_FLAT && CONV_R > 0  // (box:1 has no halo: its warps need no neighbours)
#define PROVIDERS 1
#else
#define PROVIDERS 0
#endif
#define SPAN (32 - 2 * PROVIDERS)
#if PROVIDERS
static_assert(RU + UNIT >= STRIP_G, "the strip right of a band's last interior strip lies inside the row");
#endif

// That numbering's counts for `width` × `height` in bands of `rows`: the kernel launches `threads()` a plane (the
// emulation's driver calls this; the host's twin is core/src/gpu/patterns/conv_strip.rs's `threads`).
struct Layout {
    unsigned groups, bands, left, inner, edges;
    unsigned before, slots;  // threads before the interior strips' (whole warps where warps share halos); a band's
    __host__ __device__ unsigned threads() const { return before + bands * slots; }
};
__host__ __device__ inline Layout layout_of(int width, int height, int rows) {
    Layout l;
    // A strip's threads: one a band of `rows` rows, or S (CONV_STRIDE) a band of rows·S rows (`band_rows`).
    const int tall = rows * CONV_STRIDE;
    l.groups = (width + STRIP_G - 1) / STRIP_G, l.bands = (height + tall - 1) / tall * CONV_STRIDE;
    // The last interior strip starts at most here: its window and a unit more (the shifted load may read it) inside.
    int room = width - STRIP_G - RU - UNIT;
    l.left = min((unsigned)(RU + STRIP_G - 1) / STRIP_G, l.groups);  // strips starting before column RU
    l.inner = room < 0 || (unsigned)room / STRIP_G < l.left ? 0 : (unsigned)room / STRIP_G - l.left + 1;
    l.edges = l.groups - l.inner;
    l.before = PROVIDERS ? (l.bands * l.edges + 31) / 32 * 32 : l.bands * l.edges;
    l.slots = PROVIDERS ? (l.inner + SPAN - 1) / SPAN * 32 : l.inner;
    return l;
}
// The kernel's launch bounds. A box's march re-reads the row leaving its window from the caches 2R + 1 steps after
// reading it, so the fewer threads the GPU holds, the fewer rows are in flight between a read and its re-read and the
// more of them L2 still has: stating "at least one block an SM" lets ptxas give box:15 92 registers instead of 80,
// five blocks an SM instead of six, and box:15 at 16384² took 0.275 ms against 0.296 (H100:
// DRAM traffic 674 → 578 MB, L2 hits 60 → 67 %, L1 hits unchanged; fewer blocks forced by shared memory were
// slower). The shared march, which re-reads nothing, measured the same way round: six blocks an SM (a build
// of that march alone, 79 registers) took box:15 at 16384² 0.266 ms against 0.251 with five. The ring keeps the bare
// bound: stated for it, scharr:3–7 on the filter study's pyramid were 7–11 % slower.
// STRIP_MIN_BLOCKS (CUDA_SOBEL_DEFINES) tries others.
#if defined(STRIP_MIN_BLOCKS)
#define STRIP_BOUNDS __launch_bounds__(STRIP_THREADS, STRIP_MIN_BLOCKS)
#elif CONV_FLAT
#define STRIP_BOUNDS __launch_bounds__(STRIP_THREADS, 1)
#else
#define STRIP_BOUNDS __launch_bounds__(STRIP_THREADS)
#endif
// The rows thread `band` of a strip marches: rows y0, y0 + S, … below `end`, of the band of rows·S rows that
// threads band − band mod S … share, y0 its row band mod S (S = CONV_STRIDE; with S = 1, the band's every row).
__device__ __forceinline__ void band_rows(unsigned band, int rows, int height, int& y0, int& end) {
    int top = (int)(band / CONV_STRIDE) * rows * CONV_STRIDE;
    y0 = top + (int)(band % CONV_STRIDE), end = min(top + rows * CONV_STRIDE, height);
}

extern "C" __global__ void STRIP_BOUNDS
    conv_strip(const u8* __restrict__ in, u8* __restrict__ out, int width, int height, int border, int rows) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    const Layout l = layout_of(width, height, rows);
    unsigned t = blockIdx.x * STRIP_THREADS + threadIdx.x, band, g;
    bool edge = t < l.bands * l.edges, writes = true;
    if (edge) {
        unsigned k = t % l.edges;
        band = t / l.edges, g = k < l.left ? k : l.inner + k;
    } else {
        if (t < l.before || t >= l.threads()) return;
        unsigned i = t - l.before, k = i % l.slots;
        band = i / l.slots, g = l.left + k / 32 * SPAN + k % 32 - PROVIDERS;
        // The bottom S bands right after the top S, not last: both read rows through the border rule (FORM_SHIFTED,
        // slower than the aligned march), and numbered last they ran in the last wave and lengthened it. H100, one
        // call: scharr:9 at 16384² 0.2257 ms against 0.2275, the filter study's pyramid
        // 1–2 % faster, box:15 unchanged.
        band = (band + l.bands - CONV_STRIDE) % l.bands;
        writes = k % 32 >= PROVIDERS && k % 32 < 32 - PROVIDERS && g < l.left + l.inner;
        g = min(g, l.left + l.inner);  // past the band's last strip: its right neighbour, for a lane writing nothing
    }
    int y0, end;
    band_rows(band, rows, height, y0, end);
    if (CONV_STRIDE > 1 && y0 >= end) return;  // a row of the band below the image's end: nothing to write
    size_t plane = (size_t)width * height * blockIdx.z;
    int x0 = (int)g * STRIP_G;
    Strip s = {in + plane, width, height, border, x0};
    // The marching forms' rows: their last step also reads the row S below the band's last window (`advance`).
    bool rows_inside = y0 - CONV_R >= 0 && end + CONV_R + CONV_STRIDE - 1 < height;
    size_t alignment = (size_t)(in + plane) | (size_t)(out + plane) | (unsigned)width;  // its low bits: the rows'
    bool aligned = alignment % UNIT == 0;
    if (edge) {
        map_columns<CONV_R, WIN>(column_maps, s.x0, s.width, s.border);
        march_of<FORM_GATHER>(s, out + plane, y0, end);
    }
    else if (rows_inside && aligned) {
#if CONV_FLAT
        // every lane of the warp, writing or not
        if (OWN_UNIT == 16 && STRIP_G % 16 == 0 && alignment % 16 == 0)
            box_march_shared<16>(s, out + plane, y0, end, writes);
        else
            box_march_shared<UNIT>(s, out + plane, y0, end, writes);
#else
        march<FORM_ALIGNED>(s, out + plane, y0, end);
#endif
    }
    else if (!writes)
        return;
    // Rows inside the image, not aligned (a width that is not a multiple of UNIT): the ring marches as the aligned form
    // does, its loads shifted into place (H100, the filter study's pyramid, a launch an image, scharr:3 / 5 / 7 / 9:
    // 0.237 / 0.277 / 0.316 / 0.355 → 0.200 / 0.236 / 0.264 / 0.284 ms). Not the box: its
    // march holds the leaving row's words too, and the form took it from 100 to 117 registers (box:15, NVRTC sm_90).
    else if (rows_inside && !CONV_FLAT)
        march_of<FORM_INSIDE>(s, out + plane, y0, end);
    else
        march_of<FORM_SHIFTED>(s, out + plane, y0, end);
}
