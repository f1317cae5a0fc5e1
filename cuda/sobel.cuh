// sobel.cuh — the pipeline's exact arithmetic in CUDA C, shared by every kernel file.
//
// Equivalence contract: these functions are `core/src/sobel.rs` restated; every kernel built on them must
// produce the bytes `cpu-scalar` produces, for every image, stencil, border mode, grey, norm, arithmetic and
// output (the tests check this).
//  - grey      = (30·R + 59·G + 11·B + 50) / 100, unsigned integer arithmetic (rounded half up), or with
//                GREY_BT601 OpenCV's (9798·R + 19235·G + 3735·B + 2^14) >> 15
//  - Gx, Gy    = the stencil of radius RADIUS: Gx = smooth (down) ⊗ deriv (along), Gy the transpose, exact ints
//  - edges     = min(255, round(sqrt(Gx² + Gy²))) — sqrtf is correctly rounded (NVRTC's default
//                --prec-sqrt=true, which the host passes explicitly), so it is exact below 2^24 — or with
//                NORM_L1 min(255, |Gx| + |Gy|)
//  - offsets into images are 64-bit (size_t): width·height·3 passes 2^31 at about 26 000 × 26 000.
//
// The stencil, the arithmetic and the output are fixed when the host compiles a file: it passes them as `-D`
// constants (`Build::defines` in core/src/gpu/build.rs) and loads one module per combination, so each build's
// loops have their taps folded in — zero taps vanish, ×1 becomes an add — and no run-time branch is in any
// hot loop. Without options, a file compiles as the default build (Sobel 3×3, exact, 8-bit edges), so
// `nvcc -ptx cuda/fused.cu` works as well:
//  - RADIUS, TAPS_SMOOTH, TAPS_DERIV: the stencil's reach and its 2·RADIUS + 1 taps each (`Stencil`);
//  - TAP_EDGE, TAP_CENTRE, BINOMIAL_LEVELS: the same stencil factored, smooth = [E C E] ⊛ [1 1]^L and
//    deriv = [−1 0 1] ⊛ [1 1]^L (`Stencil::factors`), which the register-blocked kernels use (row16.cuh);
//  - GRADIENT_BOUND: the largest |Gx| or |Gy| (1020 for Sobel 3×3, 163 200 for 7×7);
//  - GREY_BT601, NORM_L1: OpenCV's grey, the L1 norm;
//  - COMPAT_REPORT=1: the report's C program, `Compat::Report` in core/src/sobel.rs (3×3 only): grey in doubles
//    truncated, gradients kept mod 256, magnitude truncated and wrapped. Each double operation is written as
//    an explicit round-to-nearest intrinsic, so no compiler option can fuse them into an FMA (x86-64 SSE2,
//    where the report ran, has none; one fused rounding changes some pixels by one);
//  - OUTPUT: what each pixel writes (below).
//
// The host replaces each `#include "…cuh"` line with that header's text before NVRTC compiles a file
// (so the headers use include guards).
#ifndef CUDA_SOBEL_SOBEL_CUH
#define CUDA_SOBEL_SOBEL_CUH

// Border modes: the values of the Rust enum `Border` (checked by a test).
#define BORDER_REPLICATE 0
#define BORDER_ZERO 1
#define BORDER_REFLECT101 2

// Gx² + Gy² from which the rounded magnitude is 255 or more: 254² + 254 + 1.
#define SATURATED_SQUARE 64771u

// The default build: Sobel 3×3.
#ifndef RADIUS
#define RADIUS 1
#define TAPS_SMOOTH 1, 2, 1
#define TAPS_DERIV -1, 0, 1
#define TAP_EDGE 1
#define TAP_CENTRE 2
#define BINOMIAL_LEVELS 0
#define GRADIENT_BOUND 1020
#endif
#define TAPS (2 * RADIUS + 1)
#ifndef GREY_BT601
#define GREY_BT601 0
#endif
#ifndef NORM_L1
#define NORM_L1 0
#endif
#ifndef COMPAT_REPORT
#define COMPAT_REPORT 0
#endif

// What each pixel writes (`Output` in core/src/sobel.rs): the edge byte, Gx and Gy (two planes of
// OUT_GRADIENT_T: 1 short, 2 int, 3 float), the direction in radians (float), Canny's four directions, or
// Canny's magnitude and direction in one word of OUT_GRADIENT_T (sector_of below).
#define OUTPUT_EDGES 0
#define OUTPUT_GRADIENTS 1
#define OUTPUT_DIRECTION 2
#define OUTPUT_DIRECTION4 3
#define OUTPUT_SECTORS 4
#ifndef OUTPUT
#define OUTPUT OUTPUT_EDGES
#endif

typedef unsigned char u8;

// Canny's word a pixel (OUTPUT_SECTORS): 16 bits where the host found that its largest word fits (OUT_GRADIENT_T 1:
// aperture 3 with the L1 norm), else 32. canny.cu reads this type whatever the build's output.
#if defined(OUT_GRADIENT_T) && OUT_GRADIENT_T == 1
typedef short sector_t;
#else
typedef int sector_t;
#endif

#if OUTPUT == OUTPUT_GRADIENTS
#if OUT_GRADIENT_T == 1
typedef short out_t;
#elif OUT_GRADIENT_T == 2
typedef int out_t;
#else
typedef float out_t;
#endif
#elif OUTPUT == OUTPUT_DIRECTION
typedef float out_t;
#elif OUTPUT == OUTPUT_SECTORS
typedef sector_t out_t;
#else
typedef u8 out_t;
#endif

// The stencil's taps, as constants once a loop over them is unrolled.
__device__ __forceinline__ int smooth_tap(int i) {
    const int t[TAPS] = {TAPS_SMOOTH};
    return t[i];
}
__device__ __forceinline__ int deriv_tap(int i) {
    const int t[TAPS] = {TAPS_DERIV};
    return t[i];
}

#if COMPAT_REPORT
// The report: (byte)(0.30·R + 0.59·G + 0.11·B), left to right, each operation rounded on its own.
__device__ __forceinline__ u8 grey_of(u8 r, u8 g, u8 b) {
    double sum = __dadd_rn(__dadd_rn(__dmul_rn(0.30, (double)r), __dmul_rn(0.59, (double)g)), __dmul_rn(0.11, (double)b));
    return (u8)(int)sum;
}

// The report: h = (byte)abs(Gx), v = (byte)abs(Gy) (mod 256), then (byte)(int)sqrt(h² + v²). sqrt of
// an integer below 2^53 in doubles is correctly rounded, so the truncation is floor(√(h² + v²)) exactly.
__device__ __forceinline__ u8 magnitude_of(int gx, int gy) {
    int h = abs(gx) & 0xFF, v = abs(gy) & 0xFF;
    return (u8)(int)sqrt((double)(h * h + v * v));
}
#else
#if GREY_BT601
__device__ __forceinline__ u8 grey_of(u8 r, u8 g, u8 b) { return (u8)((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15); }
#else
__device__ __forceinline__ u8 grey_of(u8 r, u8 g, u8 b) { return (u8)((30u * r + 59u * g + 11u * b + 50u) / 100u); }
#endif

// |g| clamped to 255: a gradient that reaches 255 saturates the edge byte whatever the other, so clamping first
// changes no answer, and keeps 7×7's squares (|G| up to 163 200) from overflowing. Smaller stencils' squares
// fit 32 bits as they are: no clamp (one instruction fewer a gradient).
__device__ __forceinline__ unsigned clamped_abs(int g) {
#if GRADIENT_BOUND > 32767
    return min((unsigned)abs(g), 255u);
#else
    return (unsigned)abs(g);
#endif
}

#if NORM_L1
__device__ __forceinline__ u8 magnitude_of(int gx, int gy) {
    return (u8)min((unsigned)abs(gx) + (unsigned)abs(gy), 255u);
}
#else
// min(255, round(sqrt(s))), exactly: r = floor(sqrt(s)), then round up iff s > r² + r.
__device__ __forceinline__ u8 magnitude_of(int gx, int gy) {
    unsigned x = clamped_abs(gx), y = clamped_abs(gy);
    unsigned s = min(x * x + y * y, SATURATED_SQUARE);
    unsigned r = (unsigned)sqrtf((float)s);
    return (u8)(r + (s > r * r + r ? 1u : 0u));
}
#endif
#endif

// min(255, round(sqrt(s))) exactly, for any s, in the LOW BYTE of the result (callers narrow to a byte;
// the upper bytes hold the float exponent 0x4B40_00xx). Clamp, exact float of s, one approximate sqrt,
// then round to nearest by adding 1.5·2^23, whose float spacing is 1.
// Why one rounding is exact: for integers s ≤ 64 771 (m ≤ 255), √s is never within 1/(8m + 4) ≥ 4.9·10⁻⁴
// of a half-integer (the closest case is s = m² + m), while sqrt.approx is off by a few ulp (~6·10⁻⁵
// at 255), so r and √s round the same way. The selftest kernel checks every s on the GPU.
// Measured: dropping the old integer correction (the m² + m test) saved 4 of
// gpu-strip's ~26 instructions a pixel (317 → 302 µs at 16384²); returning the bits instead of
// subtracting the exponent, one more (~0.3 µs at 7680×4320).
// The integer form converts with one I2F and clamps the float: every s above SATURATED_SQUARE stays above it when
// rounded to a float (rounding is monotonic and 64 772 is a float), and below it the conversion is exact. Measured
// (H100) against an integer clamp, conversion by the bits (s | 0x4B000000, − 2^23)
// and a second clamp in floats: scharr:9 at 16384² 0.2556 ms against 0.2608 (0.2581 with only the second clamp
// dropped); the edge command's 3×3 strip, bound by memory, unchanged.
__device__ __forceinline__ unsigned magnitude_fast_f(float s) {
    s = fminf(s, (float)SATURATED_SQUARE);
    float r;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
    return __float_as_uint(__fadd_rn(r, 12582912.0f));  // 0x4B400000 + round(r): low byte = round(r)
}
__device__ __forceinline__ unsigned magnitude_fast_sq(unsigned s) { return magnitude_fast_f(__uint2float_rn(s)); }

// atan2(gy, gx) in radians, in (−π, π]: `direction` in core/src/sobel/pixel.rs, operation for operation (explicit
// round-to-nearest intrinsics, so that nothing is fused or reordered: the same bits as the CPU).
__device__ __forceinline__ float direction_of(int gx, int gy) {
    const float FRAC_PI_4 = 0.785398185253143310546875f;  // std::f32::consts::FRAC_PI_4
    float ax = (float)abs(gx), ay = (float)abs(gy);       // exact: |g| < 2^24
    float lo = fminf(ax, ay), hi = fmaxf(ax, ay);
    float t = hi == 0.0f ? 0.0f : __fdiv_rn(lo, hi);
    float base = 0.0f, x = t;
    if (t > (float)0.414213562373095) {
        base = FRAC_PI_4;
        x = __fdiv_rn(__fsub_rn(t, 1.0f), __fadd_rn(t, 1.0f));
    }
    float z = __fmul_rn(x, x);
    float p = __fmul_rn((float)8.05374449538e-2, z);
    p = __fmul_rn(__fsub_rn(p, (float)1.38776856032e-1), z);
    p = __fmul_rn(__fadd_rn(p, (float)1.99777106478e-1), z);
    p = __fmul_rn(__fmul_rn(__fsub_rn(p, (float)3.33329491539e-1), z), x);
    p = __fadd_rn(p, x);
    float a = __fadd_rn(base, p);
    if (ay > ax) a = __fsub_rn(2.0f * FRAC_PI_4, a);
    if (gx < 0) a = __fsub_rn(4.0f * FRAC_PI_4, a);
    return gy < 0 ? -a : a;
}

// OpenCV Canny's quantised direction (`direction4` in core/src/sobel/pixel.rs): tan 22.5° as 13573 / 2^15, in
// `wide_t`: 64 bits by default (|gy|·2^15 passes 2^31 for ksize 7); Canny, whose gradients are at most 2^15 in size,
// asks for unsigned 32 bits (2^15·13573 + 2^31 < 2^32): fewer instructions than 64-bit products.
// Written as selects, not early returns: the compiler then keeps it free of branches (divergent ones in
// canny.cu's suppression).
template <typename wide_t = long long>
__device__ __forceinline__ u8 direction4_of(int gx, int gy) {
    wide_t x = abs(gx), y = (wide_t)abs(gy) << 15, tg22x = x * 13573;
    u8 diagonal = (gx ^ gy) < 0 ? 3 : 1;
    u8 steep = y > tg22x + (x << 16) ? 2 : diagonal;
    return y < tg22x ? 0 : steep;
}

// The gradient OpenCV's Canny sees (`Canny::opencv_gradient`): the exact one clamped to 16 bits, or for aperture 7
// (RADIUS 3) divided by 16, rounded half to even.
__device__ __forceinline__ int opencv_gradient(int g) {
#if RADIUS == 3
    int q = g >> 4, r = g & 15;  // floor division by 16 and its remainder, for negative g too
    return q + (r > 8 || (r == 8 && (q & 1)));
#elif GRADIENT_BOUND > 32767
    return max(-32768, min(32767, g));
#else
    return g;  // within 16 bits already
#endif
}

// Canny's magnitude of OpenCV's gradients (`Canny::magnitude`): |Gx| + |Gy| with NORM_L1, else Gx² + Gy² (below 2^31:
// OpenCV's gradients are within ±12 240).
__device__ __forceinline__ int canny_magnitude(int gx, int gy) {
    return NORM_L1 ? abs(gx) + abs(gy) : gx * gx + gy * gy;
}

// What Canny's suppression needs of a pixel, in one word (`Canny::sector` in core/src/canny.rs): its magnitude,
// shifted up two bits, and the sector of its direction (0 horizontal … 3) in those two. Computed where the gradients
// are, so that canny.cu reads one word a pixel instead of two gradients and finds each neighbour's magnitude with a
// shift: at aperture 3 with L1 a 16-bit word, half the bytes of the two 16-bit gradients. Measured on an H200 at
// 7680×4320 (ncu): gpu-strip 79 → 62 µs with 16-bit words, but 76 → 104 µs with 32-bit ones (aperture 3, L2; same
// bytes and instructions as the 16-bit build, cause not found), where the suppression gains 30 µs either way.
__device__ __forceinline__ sector_t sector_of(int gx, int gy) {
    int x = opencv_gradient(gx), y = opencv_gradient(gy);
    return (sector_t)(canny_magnitude(x, y) << 2 | direction4_of<unsigned>(x, y));
}

// What pixel i writes; `plane` is the offset of Gy's plane from Gx's (the image's, or a batch's, pixels).
__device__ __forceinline__ void store(out_t* out, size_t i, size_t plane, int gx, int gy) {
#if OUTPUT == OUTPUT_GRADIENTS
    out[i] = (out_t)gx;
    out[plane + i] = (out_t)gy;
#elif OUTPUT == OUTPUT_DIRECTION
    out[i] = direction_of(gx, gy);
#elif OUTPUT == OUTPUT_DIRECTION4
    out[i] = direction4_of(gx, gy);
#elif OUTPUT == OUTPUT_SECTORS
    out[i] = sector_of(gx, gy);
#else
    out[i] = magnitude_of(gx, gy);
#endif
}

// Ask the L2 cache for the line holding p (no register is written, nothing waits): the marches of strip.cu and
// conv_strip.cu ask for rows they will read a few steps later.
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// N UNIT-sized loads (UNIT 4, 8 or 16) from p, UNIT-aligned, into the words a[0 … N·UNIT/4). Read through the
// read-only cache (`__ldg`): the compiler may then issue them before earlier stores, which it cannot prove do not
// overlap them.
template <int UNIT, int N>
__device__ __forceinline__ void load_units(const u8* p, unsigned* a) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
        if constexpr (UNIT == 16) {
            uint4 q = __ldg((const uint4*)p + k);
            a[4 * k] = q.x, a[4 * k + 1] = q.y, a[4 * k + 2] = q.z, a[4 * k + 3] = q.w;
        } else if constexpr (UNIT == 8) {
            uint2 q = __ldg((const uint2*)p + k);
            a[2 * k] = q.x, a[2 * k + 1] = q.y;
        } else {
            a[k] = __ldg((const unsigned*)p + k);
        }
    }
}

// UNIT-sized loads that N words starting anywhere need: those covering them, from the aligned address below.
template <int UNIT, int N>
__device__ __forceinline__ constexpr int shifted_units() {
    return (4 * N + UNIT - 1) / UNIT + 1;
}

// The N words at byte p, any alignment, from `a`, the shifted_units units read from the aligned address below p
// (o = p mod UNIT): each word shifted into place, a select and a funnel shift a word.
template <int UNIT, int N>
__device__ __forceinline__ void words_shifted(const unsigned* a, unsigned o, unsigned (&r)[N]) {
    constexpr int PER = UNIT / 4;
    unsigned ws = o / 4, shift = 8 * (o % 4);
#pragma unroll
    for (int k = 0; k < N; ++k) {
        unsigned lo = a[k], hi = a[k + 1];
#pragma unroll
        for (int j = 1; j < PER; ++j)
            if (ws == j) lo = a[k + j], hi = a[k + j + 1];
        r[k] = __funnelshift_r(lo, hi, shift);
    }
}

// The N words at byte p, any alignment, read as the strips read a row whose start is not on a UNIT boundary (a width
// that is not a multiple of UNIT, an array starting anywhere; conv_strip.cu and strip.cu): shifted_units loads from
// the aligned address below, shifted into place — instead of a load a byte. Reads
// up to UNIT − 1 bytes before p and the rest of the last unit.
template <int UNIT, int N>
__device__ __forceinline__ void load_shifted(const u8* p, unsigned (&r)[N]) {
    unsigned o = (unsigned)(size_t)p % UNIT;
    unsigned a[shifted_units<UNIT, N>() * (UNIT / 4)];
    load_units<UNIT, shifted_units<UNIT, N>()>(p - o, a);
    words_shifted<UNIT>(a, o, r);
}

// The coordinate that position i (at any distance outside 0..n-1) reads, or -1 for the constant 0:
// `Border::resolve` (OpenCV's borderInterpolate). Reflection is periodic with period 2·(n − 1).
__device__ __forceinline__ int resolve(int i, int n, int border) {
    if (i >= 0 && i < n) return i;
    if (border == BORDER_ZERO) return -1;
    if (border == BORDER_REPLICATE) return i < 0 ? 0 : n - 1;
    if (n == 1) return 0;  // reflect101 of a one-pixel dimension repeats it
    int period = 2 * (n - 1), m = i % period;
    if (m < 0) m += period;
    return m > n - 1 ? period - m : m;
}

// A COLUMN MAP, for the strips at a row's ends (conv_strip.cu's edge strips, strip.cu's edge groups): the WIN columns
// of a window starting at pixel x0 − R resolved through the border rule once a march, not at every row (with the
// rule's branches and reflect101's remainder a row cost ~25 instructions a byte).
// Kept in shared memory, maps[k][thread] (conflict-free): byte c of words 0 … MAP_WORDS_OF(WIN) − 1 is the column
// window column c reads, as its distance from x0 − R; bit c of the last word is 0 where the rule gives the constant 0.
// Every column an output inside the row needs is within the window: inside the row, or one the rule reflects or
// repeats from within R of the row's end (in a row narrower than R, any of its columns: all within the window).
// Columns past the row, whose outputs are not written, may resolve further back than the window (memcheck caught
// their reads before the image once): a distance outside 0 … WIN − 1 is taken as the constant 0 — not read. A
// column not read names pixel x0 (distance R), inside the row.
#define MAP_WORDS_OF(WIN) (((WIN) + 3) / 4)
template <int R, int WIN, int THREADS>
__device__ __forceinline__ void map_columns(unsigned (&maps)[MAP_WORDS_OF(WIN) + 1][THREADS], int x0, int width,
                                            int border) {
    static_assert(WIN <= 32, "a column map's bits fit a word");
    constexpr int WORDS = MAP_WORDS_OF(WIN);
    unsigned w[WORDS + 1] = {};
#pragma unroll
    for (int c = 0; c < WIN; ++c) {
        int sx = resolve(x0 - R + c, width, border), d = sx - x0 + R;
        bool read = sx >= 0 && d >= 0 && d < WIN;
        w[c / 4] |= (unsigned)(read ? d : R) << (8 * (c % 4));
        w[WORDS] |= (read ? 1u : 0u) << c;
    }
#pragma unroll
    for (int k = 0; k <= WORDS; ++k) maps[k][threadIdx.x] = w[k];
}

// Window column c's distance from x0 − R, from this thread's map.
template <int WORDS, int THREADS>
__device__ __forceinline__ int mapped_column(const unsigned (&maps)[WORDS][THREADS], int c) {
    return (int)(maps[c / 4][threadIdx.x] >> (8 * (c % 4)) & 0xFFu);
}

// Grey value of the pixel at (x, y) of an RGB image, or of its border substitute.
__device__ __forceinline__ int grey_at(const u8* rgb, int x, int y, int width, int height, int border) {
    int sx = resolve(x, width, border), sy = resolve(y, height, border);
    if (sx < 0 || sy < 0) return 0;
    size_t i = ((size_t)sy * width + sx) * 3;
    return grey_of(rgb[i], rgb[i + 1], rgb[i + 2]);
}

// Value of the pixel at (x, y) of a grey image, or of its border substitute.
__device__ __forceinline__ int grey_pixel(const u8* grey, int x, int y, int width, int height, int border) {
    int sx = resolve(x, width, border), sy = resolve(y, height, border);
    if (sx < 0 || sy < 0) return 0;
    return grey[(size_t)sy * width + sx];
}

// Gx and Gy at (x, y) from the grey values `fetch(x', y')` of its (2r + 1)² neighbourhood, row by row: each row's
// smoothing and derivative sums, then Gx += smooth[i]·(row's derivative sum), Gy += deriv[i]·(row's smoothing
// sum) — the 2-D taps are smooth[i]·deriv[j], so this is the 2-D stencil, with 2·(2r + 1) multiplies a row.
template <typename Fetch>
__device__ __forceinline__ void gradients_at(Fetch fetch, int x, int y, int& gx, int& gy) {
    gx = 0, gy = 0;
#pragma unroll
    for (int i = 0; i < TAPS; ++i) {
        int s = 0, d = 0;
#pragma unroll
        for (int j = 0; j < TAPS; ++j) {
            int g = fetch(x + j - RADIUS, y + i - RADIUS);
            s += smooth_tap(j) * g;
            d += deriv_tap(j) * g;
        }
        gx += smooth_tap(i) * d;
        gy += deriv_tap(i) * s;
    }
}

// Gx and Gy of a window g[row][col] of grey values held in registers, centre g[RADIUS][RADIUS] (the exercises in
// cuda/exercises/ fill a 3×3 one): the same sums as gradients_at.
__device__ __forceinline__ int sobel_x(const int g[TAPS][TAPS]) {
    int gx = 0;
#pragma unroll
    for (int i = 0; i < TAPS; ++i)
#pragma unroll
        for (int j = 0; j < TAPS; ++j) gx += smooth_tap(i) * deriv_tap(j) * g[i][j];
    return gx;
}
__device__ __forceinline__ int sobel_y(const int g[TAPS][TAPS]) {
    int gy = 0;
#pragma unroll
    for (int i = 0; i < TAPS; ++i)
#pragma unroll
        for (int j = 0; j < TAPS; ++j) gy += deriv_tap(i) * smooth_tap(j) * g[i][j];
    return gy;
}

// The whole pipeline for one output pixel, straight from RGB: (2r + 1)² grey conversions, the stencil, the output.
__device__ __forceinline__ void sobel_pixel_from_rgb(const u8* rgb, out_t* out, size_t plane, int x, int y, int width,
                                                     int height, int border) {
    int gx, gy;
    gradients_at([&](int sx, int sy) { return grey_at(rgb, sx, sy, width, height, border); }, x, y, gx, gy);
    store(out, (size_t)y * width + x, plane, gx, gy);
}

// The edge byte of (x, y) straight from RGB: the form a kernel with sobel_fused's signature writes as
// `out[(size_t)y * width + x] = sobel_pixel_from_rgb(rgb, x, y, width, height, border);` (the exercises and
// --kernel-file's students; it needs no output plane).
__device__ __forceinline__ u8 sobel_pixel_from_rgb(const u8* rgb, int x, int y, int width, int height, int border) {
    int gx, gy;
    gradients_at([&](int sx, int sy) { return grey_at(rgb, sx, sy, width, height, border); }, x, y, gx, gy);
    return magnitude_of(gx, gy);
}

// Programmatic dependent launch (sm_90 and later). A launch the host makes with the programmatic-serialization
// attribute (`launch_after` in core/src/gpu/patterns/mod.rs) may begin before the launch before it on its stream has
// finished: once every block of that one has called allow_next_launch() (or ended), the new launch's blocks take the
// SMs its tail leaves idle. One that reads what the launch before wrote first calls wait_for_previous_launch(), which
// returns once that launch has finished and its writes are visible (at once for a launch made without the
// attribute). Both compile to nothing before sm_90, where every launch waits for the one before.
__device__ __forceinline__ void allow_next_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_previous_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#endif  // CUDA_SOBEL_SOBEL_CUH
