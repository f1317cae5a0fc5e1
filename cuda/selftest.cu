// selftest.cu — not a variant: kernels the tests use to check sobel.cuh's and row16.cuh's arithmetic against
// the reference on every possible input (all 2^24 RGB triples through dp4a grey, in the build's grey; every
// reachable Gx² + Gy² through the approximate-sqrt magnitude; the direction of every 3×3 gradient, bit for bit).
#include "row16.cuh"

// Grey of four pixels packed in three words (12 bytes: RGBR GBRG BRGB), as row16.cuh converts a group.
template <int K>
__device__ __forceinline__ void grey_of_four(const unsigned (&w)[3], int g[4]) {
    if constexpr (K < 4) {
        g[K] = grey_of_pixel<K>(w);
        grey_of_four<K + 1>(w, g);
    }
}

// out[i] = grey of RGB triple i = (R << 16 | G << 8 | B), computed four pixels at a time as row16.cuh does.
extern "C" __global__ void selftest_grey(u8* out) {
    unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i >= (1u << 24)) return;
    u8 bytes[12];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        unsigned v = i + k;
        bytes[3 * k] = (u8)(v >> 16), bytes[3 * k + 1] = (u8)(v >> 8), bytes[3 * k + 2] = (u8)v;
    }
    unsigned w[3];
#pragma unroll
    for (int k = 0; k < 3; ++k)
        w[k] = bytes[4 * k] | bytes[4 * k + 1] << 8 | bytes[4 * k + 2] << 16 | (unsigned)bytes[4 * k + 3] << 24;
    int g[4];
    grey_of_four<0>(w, g);
#pragma unroll
    for (int k = 0; k < 4; ++k) out[i + k] = (u8)g[k];
}

// out[s] = magnitude of Gx² + Gy² = s, for s < n.
extern "C" __global__ void selftest_magnitude(u8* out, unsigned n) {
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < n) out[s] = (u8)magnitude_fast_sq(s);
}

// out[(gy + m) · (2m + 1) + gx + m] = direction_of(gx, gy) for |gx|, |gy| ≤ m.
extern "C" __global__ void selftest_direction(float* out, int m) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, side = 2 * m + 1;
    if (i >= side * side) return;
    out[i] = direction_of((int)(i % side) - m, (int)(i / side) - m);
}
