// conv_double.cu — pattern: MAP computing BOTH GRADIENTS FROM ONE READ ("double" in the filter-size study).
//
// conv_constant.cu computes a gradient kernel in two launches, each reading every window once: Gx, then Gy. Here
// one thread reads each neighbour once and adds it into both sums, K's and Kᵀ's, then writes the magnitude: half
// the pixel loads, no Gx plane to write and read back, one launch. (A smoothing kernel has one sum: this file then
// computes what conv_constant.cu does.)
//
// Launch shape: 2D grid of 32×8 blocks (any shape computes the same), grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh).
#include "sobel.cuh"
#include "conv.cuh"

// The pixel's byte: each neighbour read once and added into both sums.
template <typename Fetch>
__device__ __forceinline__ u8 both_sums(Fetch fetch, int x, int y) {
    acc_t s = 0, t = 0;
#pragma unroll
    for (int i = 0; i < CONV_D; ++i)
#pragma unroll
        for (int j = 0; j < CONV_D; ++j) {
            acc_t v = fetch(x + j - CONV_R, y + i - CONV_R);  // read once ...
            s += (acc_t)c_taps[i * CONV_D + j] * v;            // ... for K
#if CONV_GRADIENT
            t += (acc_t)c_taps[j * CONV_D + i] * v;            // ... and for Kᵀ
#endif
        }
    return conv_finish(s, t);
}

extern "C" __global__ void conv_double(const u8* __restrict__ in, u8* __restrict__ out, int width, int height,
                                       int border) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t plane = (size_t)width * height * blockIdx.z;
    const u8* p = in + plane;
    if (window_inside(x, y, width, height))
        out[plane + (size_t)y * width + x] = both_sums(DirectFetch{p, width}, x, y);
    else
        out[plane + (size_t)y * width + x] = both_sums(BorderFetch{p, width, height, border}, x, y);
}
