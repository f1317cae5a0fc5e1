// conv.cuh — the filter command's exact arithmetic in CUDA C (core/src/conv/mod.rs restated), shared by the conv_*.cu
// files: one file per strategy of the convolution studies, each the same filter computed another way.
//
// Equivalence contract: every conv_*.cu kernel produces the bytes of `filter --variant cpu-scalar`:
//  - S(x, y) = Σᵢ Σⱼ K[i][j] · p(x + j − r, y + i − r) (a correlation, as OpenCV's filter2D), pixels outside the
//    image from the border rule (`resolve` in sobel.cuh), at any distance;
//  - a smoothing kernel: clamp(floor((S + ⌊d/2⌋) / d), 0, 255) with d = CONV_DIVISOR;
//  - a gradient kernel (CONV_GRADIENT=1): Gx = S with K, Gy = S with Kᵀ, the pixel min(255, round(√(Gx² + Gy²)))
//    (`magnitude_of` in sobel.cuh, after clamping each to ±255, which changes no answer);
//  - sums in 32 bits, or 64 where 255·Σ|K| + ⌊d/2⌋ passes 2^31 (CONV_WIDE=1: gaussian:13 and :15).
//
// The edge command runs its Sobel and Scharr stencils through the same files (`Build::conv_defines` in
// core/src/gpu/build.rs): its builds add CONV_RGB=1, the input packed RGB whose grey (sobel.cuh's `grey_of`) is
// taken where a pixel is read, as fused.cu does, and sobel.cuh's OUTPUT, NORM_L1 and COMPAT_REPORT, which
// `conv_store` below writes. A filter build has neither, and reads planes of bytes and writes bytes.
//
// The host compiles each file once per kernel (`defines` in src/gpu/conv.rs): the radius, kind and divisor always, so
// every loop over the window unrolls; the taps themselves (CONV_TAPS, row by row) for the strategies that compile
// them in. The others read them at run time: from global memory (conv_single.cu) or from `__constant__` memory
// (c_taps below; conv_separable.cu's factors), which the host fills before launching.
// Without options a file compiles as box:3.
#ifndef CUDA_SOBEL_CONV_CUH
#define CUDA_SOBEL_CONV_CUH
#include "sobel.cuh"

#ifndef CONV_R
#define CONV_R 1
#define CONV_TAPS 1, 1, 1, 1, 1, 1, 1, 1, 1
#define CONV_DIVISOR 9
#define CONV_NONNEG 1
#endif
#ifndef CONV_TAPS
#define CONV_TAPS 0  // this build reads its taps at run time
#endif
#ifndef CONV_GRADIENT
#define CONV_GRADIENT 0
#endif
#ifndef CONV_WIDE
#define CONV_WIDE 0
#endif
#ifndef CONV_OVERLAP
#define CONV_OVERLAP 0
#endif
#ifndef CONV_NONNEG
#define CONV_NONNEG 0
#endif
#ifndef CONV_RGB
#define CONV_RGB 0
#endif
#define CONV_D (2 * CONV_R + 1)
// Bytes of input a pixel: a plane's byte, or packed RGB.
#define CONV_IN_BYTES (CONV_RGB ? 3 : 1)
// An edge build's gradient output other than the L2 edge byte (sobel.cuh's `store` writes it from the exact sums).
#define CONV_EXACT_OUT (CONV_GRADIENT && (OUTPUT != OUTPUT_EDGES || NORM_L1 || COMPAT_REPORT))
static_assert(!CONV_RGB || CONV_GRADIENT, "an RGB input is the edge command's: a gradient kernel");

#if CONV_WIDE
typedef long long acc_t;
#else
typedef int acc_t;
#endif

// Launches that overlap (CONV_OVERLAP=1, the filter-size study's "launches overlapped" rows; sm_90 and later): a
// kernel launched after another on one stream normally starts when the last block of the one before has finished,
// so each launch of a small image pays the tail of the one before, where fewer and fewer SMs are busy. Hopper's
// programmatic dependent launch lets the next launch's blocks start on the SMs the tail leaves idle: every kernel of
// a conv_*.cu file begins by telling the GPU that the next launch may begin (`griddepcontrol.launch_dependents`:
// it does, once every block of this launch has started, where the host launched it so, `launch_conv` in
// core/src/gpu/patterns/mod.rs). The next launch never reads what this one writes, since only strategies of one launch
// an image take the overlap (`launches_an_image` in src/gpu/conv.rs), so it needs no `griddepcontrol.wait`; and
// work queued after the last launch (the timing event, the copy back) still waits for every launch before it
// (measured on the H100: an event after an overlapping launch completed only after the launch before had).
// Without CONV_OVERLAP, or on an older GPU, this is empty and the kernel is the same code as before.
__device__ __forceinline__ void next_launch_may_start() {
#if CONV_OVERLAP
    allow_next_launch();  // sobel.cuh
#endif
}

// The taps in constant memory (conv_constant.cu, conv_double.cu, conv_local.cu): every thread of a warp reads the
// same tap at the same time, which the constant cache serves in one broadcast. A build that knows its taps
// (CONV_TAPS: the edge command's) starts with them there; the filter's copies its kernel's in before launching.
// Either way the compiler cannot fold them: the host may rewrite constant memory at any time.
__constant__ int c_taps[CONV_D * CONV_D] = {CONV_TAPS};

// Tap (i, j) of K, or of Kᵀ, compiled in: a constant once the loops are unrolled, so zero taps vanish.
__device__ __forceinline__ int compiled_tap(int i, int j, bool transposed) {
    const int t[CONV_D * CONV_D] = {CONV_TAPS};
    return transposed ? t[j * CONV_D + i] : t[i * CONV_D + j];
}

// A gradient's sum clamped to ±255: all the magnitude needs.
__device__ __forceinline__ int clamp255(acc_t g) { return (int)(g < -255 ? -255 : g > 255 ? 255 : g); }

// The byte of a smoothing sum: floor((s + ⌊d/2⌋) / d) clamped to 0..255 (C's division truncates towards zero, so
// a negative quotient with a remainder is one too high). A kernel without negative taps (CONV_NONNEG: box,
// Gaussian) has s ≥ 0, so the division is unsigned and needs neither correction: a multiply-high and a shift
// instead of ~10 instructions (measured in conv_strip.cu). smooth_div takes n = s + ⌊d/2⌋
// already formed (conv_strip.cu's box carries ⌊d/2⌋ in its running sum).
// CLAMP false: the caller knows the quotient is at most 255 (a box: 255·D² / D²).
template <bool CLAMP = true>
__device__ __forceinline__ u8 smooth_div(acc_t n) {
    const acc_t d = CONV_DIVISOR;
#if CONV_NONNEG
#if CONV_WIDE
    unsigned long long q = (unsigned long long)n / (unsigned long long)d;
#else
    unsigned q = (unsigned)n / (unsigned)d;
#endif
    return (u8)(CLAMP && q > 255 ? 255 : q);
#else
    acc_t q = n / d;
    if (n % d != 0 && n < 0) q -= 1;
    return (u8)(q < 0 ? 0 : q > 255 ? 255 : q);
#endif
}

__device__ __forceinline__ u8 smooth_out(acc_t s) { return smooth_div(s + CONV_DIVISOR / 2); }

// The byte of a gradient pair: min(255, round(√(gx² + gy²))) after clamping each to ±255 (which changes no
// answer), with sobel.cuh's one-rounding square root (exact for every sum of squares; the selftest checks it).
// Where the host says every |G| is at most CONV_BOUND ≤ 46 340 (`defines` in src/gpu/conv.rs: 255·Σ|K|), Gx² + Gy²
// fits 32 bits unclamped, and the clamps go (2 and an absolute value each, ~5 of scharr:9's ~33 instructions a
// pixel in conv_strip.cu): a clamped |G| of 255 already squares past SATURATED_SQUARE, so any pair with a clamp
// saturates either way, and pairs without one are the same sum.
#if defined(CONV_BOUND) && CONV_BOUND <= 46340
__device__ __forceinline__ u8 edge_out(acc_t gx, acc_t gy) {
    const int x = (int)gx, y = (int)gy;
    return (u8)magnitude_fast_sq((unsigned)(x * x) + (unsigned)(y * y));
}
#else
__device__ __forceinline__ u8 edge_out(acc_t gx, acc_t gy) {
    unsigned x = abs(clamp255(gx)), y = abs(clamp255(gy));
    return (u8)magnitude_fast_sq(x * x + y * y);
}
#endif

// Pixel (x, y), inside the image, of a w-wide plane: its byte, or with CONV_RGB the grey of its RGB.
__device__ __forceinline__ int plane_pixel(const u8* p, int x, int y, int w) {
    size_t i = (size_t)y * w + x;
#if CONV_RGB
    return grey_of(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
#else
    return p[i];
#endif
}

// Two ways to read pixel (x', y') of a plane: directly, where the whole window of the output is inside the image
// (almost every pixel), and through the border rule elsewhere.
struct DirectFetch {
    const u8* p;
    int w;
    __device__ __forceinline__ int operator()(int x, int y) const { return plane_pixel(p, x, y, w); }
};
struct BorderFetch {
    const u8* p;
    int w, h, border;
    __device__ __forceinline__ int operator()(int x, int y) const {
        int sx = resolve(x, w, border), sy = resolve(y, h, border);
        return sx < 0 || sy < 0 ? 0 : plane_pixel(p, sx, sy, w);
    }
};

// Whether the whole window of (x, y) is inside a w × h image.
__device__ __forceinline__ bool window_inside(int x, int y, int w, int h) {
    return x >= CONV_R && x < w - CONV_R && y >= CONV_R && y < h - CONV_R;
}

// The sum of the taps tap(i, j) over the window of (x, y), pixels from fetch(x', y').
template <typename Tap, typename Fetch>
__device__ __forceinline__ acc_t window_sum(Tap tap, Fetch fetch, int x, int y) {
    acc_t s = 0;
#pragma unroll
    for (int i = 0; i < CONV_D; ++i)
#pragma unroll
        for (int j = 0; j < CONV_D; ++j) s += (acc_t)tap(i, j) * fetch(x + j - CONV_R, y + i - CONV_R);
    return s;
}

// Both sums of a gradient kernel, K's and Kᵀ's, from one read of the window ("double" in the filter-size study).
template <typename Tap, typename Fetch>
__device__ __forceinline__ void window_sums(Tap tap, Fetch fetch, int x, int y, acc_t& s, acc_t& t) {
    s = 0, t = 0;
#pragma unroll
    for (int i = 0; i < CONV_D; ++i)
#pragma unroll
        for (int j = 0; j < CONV_D; ++j) {
            acc_t v = fetch(x + j - CONV_R, y + i - CONV_R);
            s += (acc_t)tap(i, j, false) * v;
            t += (acc_t)tap(i, j, true) * v;
        }
}

// What one launch computes (the kernels' `pass` argument): the whole filter (a gradient kernel's two sums from one
// read of the window), or a gradient kernel in two launches as the study's "single" strategy: PASS_GX writes Gx
// (clamped to ±255) into an int plane, PASS_GY computes Gy and combines it with that plane.
#define PASS_WHOLE 0
#define PASS_GX 1
#define PASS_GY 2

// The byte of a pixel whose sums are s (K's) and t (Kᵀ's, used by gradient kernels only).
__device__ __forceinline__ u8 conv_finish(acc_t s, acc_t t) {
#if CONV_GRADIENT
    return edge_out(s, t);
#else
    return smooth_out(s);
#endif
}

// What pixel i of a launch over `all` pixels writes from its sums: `conv_finish`'s byte, or an edge build's output
// (Gx and Gy, the direction, the L1 or the report's magnitude) as sobel.cuh's `store` writes it from the exact
// sums. The files whose kernels write through this take edge builds (conv_constant.cu, conv_separable.cu).
__device__ __forceinline__ void conv_store(out_t* out, size_t i, size_t all, acc_t s, acc_t t) {
#if CONV_EXACT_OUT
    store(out, i, all, (int)s, (int)t);
#else
    out[i] = conv_finish(s, t);
#endif
}

// Gx as the two-pass gradients keep it between their launches: clamped to ±255 for the edge byte (the sums may be
// 64-bit), exact for an edge build's other outputs.
__device__ __forceinline__ int kept_gx(acc_t s) {
#if CONV_EXACT_OUT
    return (int)s;
#else
    return clamp255(s);
#endif
}

// One output pixel (index i of out and gx_plane, of `all`) for `pass`, the sums from tap(i, j, transposed) and fetch.
template <typename Tap, typename Fetch>
__device__ __forceinline__ void conv_pixel(int pass, Tap tap, Fetch fetch, int x, int y, out_t* out, int* gx_plane,
                                           size_t i, size_t all) {
#if CONV_GRADIENT
    if (pass == PASS_GX) {
        gx_plane[i] = kept_gx(window_sum([&](int a, int b) { return tap(a, b, false); }, fetch, x, y));
    } else if (pass == PASS_GY) {
        conv_store(out, i, all, gx_plane[i], window_sum([&](int a, int b) { return tap(a, b, true); }, fetch, x, y));
    } else {
        acc_t s, t;
        window_sums(tap, fetch, x, y, s, t);
        conv_store(out, i, all, s, t);
    }
#else
    conv_store(out, i, all, window_sum([&](int a, int b) { return tap(a, b, false); }, fetch, x, y), 0);
#endif
}

// The map strategies' kernel body: one thread per output pixel of plane blockIdx.z, any block shape.
template <typename Tap>
__device__ __forceinline__ void conv_map(Tap tap, const u8* in, out_t* out, int* gx_plane, int width, int height,
                                         int border, int pass) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t plane = (size_t)width * height * blockIdx.z, i = plane + (size_t)y * width + x;
    size_t all = (size_t)width * height * gridDim.z;
    const u8* p = in + plane * CONV_IN_BYTES;
    if (window_inside(x, y, width, height))
        conv_pixel(pass, tap, DirectFetch{p, width}, x, y, out, gx_plane, i, all);
    else
        conv_pixel(pass, tap, BorderFetch{p, width, height, border}, x, y, out, gx_plane, i, all);
}

#endif  // CUDA_SOBEL_CONV_CUH
