// row16.cuh — helpers for the register-blocked kernels (vec16.cu, strip.cu): one thread owns 16
// consecutive pixels of a row. Measured reasons for each trick are in docs/performance.md.
//
//  - Wide loads: 16 RGB pixels are 48 bytes = three 16-byte loads (when the width is a multiple of 16,
//    every group of 16 pixels starts 16-byte aligned), plus one 4-byte load for each neighbour pixel.
//  - Grey with dp4a: four pixels are three 32-bit words; `__dp4a` multiplies four bytes by four weights
//    and adds, so the weighted sums take 1.5 instructions a pixel, and `__umulhi(x, 42949673)` is x / 100
//    exactly for x ≤ 25 550 (checked exhaustively by the selftest kernels).
//  - Sobel with shared partial sums: per column s = top + 2·mid + bottom and d = bottom − top; then
//    Gx = s[x+1] − s[x−1] and Gy = d[x−1] + 2·d[x] + d[x+1]. Each column's s and d serve three outputs.
//    (Scharr: weights 3, 10, 3 instead of 1, 2, 1.)
//  - Magnitude with one approximate square root (MUFU), rounded once (exact: see magnitude_fast_sq).
//  - With COMPAT_REPORT the grey and magnitude fall back to sobel.cuh's double-precision forms: the
//    report's truncations have no integer shortcut, and that mode is for fidelity, not speed.
#ifndef CUDA_SOBEL_ROW16_CUH
#define CUDA_SOBEL_ROW16_CUH
#include "sobel.cuh"

#define GROUP 16

// Byte weights for dp4a, little-endian: which bytes of a word are R, G, B of which pixel.
#define W_RGB0 0x000B3B1Eu  // bytes 0,1,2 = R,G,B (pixel 0 of a word triple; also a right neighbour)
#define W_R1 0x1E000000u    // byte 3 = R of pixel 1
#define W_GB1 0x00000B3Bu   // bytes 0,1 = G,B of pixel 1
#define W_RG2 0x3B1E0000u   // bytes 2,3 = R,G of pixel 2
#define W_B2 0x0000000Bu    // byte 0 = B of pixel 2
#define W_RGB3 0x0B3B1E00u  // bytes 1,2,3 = R,G,B (pixel 3; also a left neighbour)
#define DIV100_MAGIC 42949673u  // ceil(2^32 / 100)

__device__ __forceinline__ int grey_div(unsigned weighted_plus_50) { return (int)__umulhi(weighted_plus_50, DIV100_MAGIC); }

#if COMPAT_REPORT
// The report's arithmetic has no integer shortcut: take the bytes apart and use grey_of (doubles).
__device__ __forceinline__ u8 byte_of(unsigned w, int k) { return (u8)(w >> (8 * k)); }
__device__ __forceinline__ int grey_lo3(unsigned w) { return grey_of(byte_of(w, 0), byte_of(w, 1), byte_of(w, 2)); }
__device__ __forceinline__ int grey_hi3(unsigned w) { return grey_of(byte_of(w, 1), byte_of(w, 2), byte_of(w, 3)); }
__device__ __forceinline__ void grey4(unsigned w0, unsigned w1, unsigned w2, int* g) {
    g[0] = grey_lo3(w0);
    g[1] = grey_of(byte_of(w0, 3), byte_of(w1, 0), byte_of(w1, 1));
    g[2] = grey_of(byte_of(w1, 2), byte_of(w1, 3), byte_of(w2, 0));
    g[3] = grey_hi3(w2);
}
#else
// Grey of the pixel in bytes 0..2 (lo3) or 1..3 (hi3) of a word.
__device__ __forceinline__ int grey_lo3(unsigned w) { return grey_div(__dp4a(w, W_RGB0, 50u)); }
__device__ __forceinline__ int grey_hi3(unsigned w) { return grey_div(__dp4a(w, W_RGB3, 50u)); }

// Grey of the four pixels packed in words w0, w1, w2 (12 bytes: RGBR GBRG BRGB).
__device__ __forceinline__ void grey4(unsigned w0, unsigned w1, unsigned w2, int* g) {
    g[0] = grey_lo3(w0);
    g[1] = grey_div(__dp4a(w1, W_GB1, __dp4a(w0, W_R1, 50u)));
    g[2] = grey_div(__dp4a(w2, W_B2, __dp4a(w1, W_RG2, 50u)));
    g[3] = grey_hi3(w2);
}
#endif

// min(255, round(sqrt(s))) exactly, for any s, in the LOW BYTE of the result (callers narrow to a byte;
// the upper bytes hold the float exponent 0x4B40_00xx). Clamp, exact float of s, one approximate sqrt,
// then round to nearest by adding 1.5·2^23, whose float spacing is 1.
// Why one rounding is exact: for integers s ≤ 64 771 (m ≤ 255), √s is never within 1/(8m + 4) ≥ 4.9·10⁻⁴
// of a half-integer (the closest case is s = m² + m), while sqrt.approx is off by a few ulp (~6·10⁻⁵
// at 255), so r and √s round the same way. The selftest kernel checks every s on the GPU.
// Measured (docs/performance.md v0.6): dropping the old integer correction (the m² + m test) saved 4 of
// gpu-strip's ~26 instructions a pixel (317 → 302 µs at 16384²); returning the bits instead of
// subtracting the exponent, one more (~0.3 µs at 7680×4320).
__device__ __forceinline__ unsigned magnitude_fast_sq(unsigned s) {
    s = min(s, SATURATED_SQUARE);
    float f = __uint_as_float(s | 0x4B000000u) - 8388608.0f;  // s < 2^23: exact, without a conversion
    float r;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(f));
    return __float_as_uint(__fadd_rn(r, 12582912.0f));  // 0x4B400000 + round(r): low byte = round(r)
}

#if COMPAT_REPORT
__device__ __forceinline__ unsigned magnitude_fast(int gx, int gy) { return magnitude_of(gx, gy); }
#else
__device__ __forceinline__ unsigned magnitude_fast(int gx, int gy) { return magnitude_fast_sq((unsigned)(gx * gx + gy * gy)); }
#endif

// The raw bytes of one aligned group: pixels x0 … x0+15 of a row (three 16-byte words) and the words
// holding its left and right neighbours. Loading (load_raw16) and converting (grey_from_raw16) are
// separate so that strip.cu can issue the next row's loads before it computes the current row.
struct Raw16 {
    uint4 v0, v1, v2;
    unsigned left, right;
};

// Aligned form only (width % 16 == 0). Where the bytes of group x0 of row y are, `y` one row outside the
// image at most: the row the border rule picks, or nullptr for a row that it makes 0.
__device__ __forceinline__ const u8* group_ptr(const u8* __restrict__ rgb, int width, int height, int border, int y,
                                               int x0) {
    int sy = resolve(y, height, border);
    return sy < 0 ? nullptr : rgb + ((size_t)sy * width + x0) * 3;
}

// The group's bytes at p, a row inside the image.
__device__ __forceinline__ Raw16 load_group(const u8* __restrict__ p, int width, int x0) {
    const uint4* v = reinterpret_cast<const uint4*>(p);
    Raw16 r = {__ldg(v), __ldg(v + 1), __ldg(v + 2), 0u, 0u};
    // The pixel before the group ends a 4-byte word; the one after starts one.
    if (x0 > 0) r.left = __ldg(reinterpret_cast<const unsigned*>(p - 4));
    if (x0 + GROUP < width) r.right = __ldg(reinterpret_cast<const unsigned*>(p + 3 * GROUP));
    return r;
}

// The group's bytes at p (from group_ptr); nullptr gives zero bytes, which convert to grey 0
// ((0 + 50) / 100): no branch later.
__device__ __forceinline__ Raw16 load_raw16_at(const u8* __restrict__ p, int width, int x0) {
    return p ? load_group(p, width, x0) : Raw16{};
}

__device__ __forceinline__ Raw16 load_raw16(const u8* __restrict__ rgb, int width, int height, int border, int y,
                                            int x0) {
    return load_raw16_at(group_ptr(rgb, width, height, border, y, x0), width, x0);
}

__device__ __forceinline__ void grey_from_raw16(const Raw16& r, int width, int border, int x0, int g[GROUP + 2]) {
    grey4(r.v0.x, r.v0.y, r.v0.z, g + 1);
    grey4(r.v0.w, r.v1.x, r.v1.y, g + 5);
    grey4(r.v1.z, r.v1.w, r.v2.x, g + 9);
    grey4(r.v2.y, r.v2.z, r.v2.w, g + 13);
    // Neighbours. Inside the image they come from the extra words; at the image's left and right edges
    // from the border rule: pixel 0 or 1 (width−1 or width−2), or 0. Selects, not g[1 + sx]: a run-time
    // index would move the whole array to local memory; and no branches (measured: docs/performance.md).
    int left = grey_hi3(r.left), right = grey_lo3(r.right);
    int edge_l = border == BORDER_ZERO ? 0 : (border == BORDER_REPLICATE ? g[1] : g[2]);
    int edge_r = border == BORDER_ZERO ? 0 : (border == BORDER_REPLICATE ? g[GROUP] : g[GROUP - 1]);
    g[0] = x0 > 0 ? left : edge_l;
    g[GROUP + 1] = x0 + GROUP < width ? right : edge_r;
}

// Grey values of pixels x0−1 … x0+16 of image row y (through the border rule) into g[0..17].
// ALIGNED: width is a multiple of 16, so the group is whole and its 48 bytes start 16-byte aligned.
template <bool ALIGNED>
__device__ __forceinline__ void grey_row18(const u8* __restrict__ rgb, int width, int height, int border, int y, int x0,
                                           int g[GROUP + 2]) {
    if (ALIGNED) {
        grey_from_raw16(load_raw16(rgb, width, height, border, y, x0), width, border, x0, g);
        return;
    }
    // Any width: byte loads, each pixel through the border rule (pixels past the edge are unused).
    int sy = resolve(y, height, border);
    if (sy < 0) {
#pragma unroll
        for (int i = 0; i < GROUP + 2; ++i) g[i] = 0;
        return;
    }
    const u8* row = rgb + (size_t)sy * width * 3;
#pragma unroll
    for (int i = 0; i < GROUP + 2; ++i) {
        int sx = resolve(min(x0 + i - 1, width), width, border);
        g[i] = sx < 0 ? 0 : grey_of(row[3 * sx], row[3 * sx + 1], row[3 * sx + 2]);
    }
}

// The 16 outputs of one row from the grey rows above (a), at (m) and below (b), stored at out[x0…].
// Column sums s = E·a + C·m + E·b and differences d = b − a (E, C = TAP_EDGE, TAP_CENTRE) are computed
// as a sliding window of three columns, not as arrays: fewer live registers (docs/performance.md v0.3c
// has the register counts of both forms).
__device__ __forceinline__ int column_sum(int a, int m, int b) { return TAP_EDGE * a + TAP_CENTRE * m + TAP_EDGE * b; }

template <bool ALIGNED>
__device__ __forceinline__ void sobel_row16(const int a[GROUP + 2], const int m[GROUP + 2], const int b[GROUP + 2],
                                            u8* __restrict__ out_row, int x0, int width) {
    int s0 = column_sum(a[0], m[0], b[0]), d0 = b[0] - a[0];
    int s1 = column_sum(a[1], m[1], b[1]), d1 = b[1] - a[1];
    unsigned v[GROUP], packed[GROUP / 4];
#pragma unroll
    for (int i = 0; i < GROUP; ++i) {
        int s2 = column_sum(a[i + 2], m[i + 2], b[i + 2]), d2 = b[i + 2] - a[i + 2];
        v[i] = magnitude_fast(s2 - s0, column_sum(d0, d1, d2));
        s0 = s1, s1 = s2, d0 = d1, d1 = d2;
    }
    // Four bytes into a word with byte permutes (3 PRMT per word instead of shifts and ors).
#pragma unroll
    for (int k = 0; k < GROUP / 4; ++k)
        packed[k] = __byte_perm(__byte_perm(v[4 * k], v[4 * k + 1], 0x0040), __byte_perm(v[4 * k + 2], v[4 * k + 3], 0x0040),
                                0x5410);
    if (ALIGNED) {
        *reinterpret_cast<uint4*>(out_row + x0) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
    } else {
#pragma unroll
        for (int i = 0; i < GROUP; ++i)
            if (x0 + i < width) out_row[x0 + i] = (u8)(packed[i / 4] >> (8 * (i % 4)));
    }
}

#endif  // CUDA_SOBEL_ROW16_CUH
