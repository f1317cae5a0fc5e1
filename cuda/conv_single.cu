// conv_single.cu — pattern: MAP over output pixels, the plain convolution ("single" in the filter-size study).
//
// One thread per output pixel reads its (2r + 1)² neighbours and the (2r + 1)² taps, the taps through the pointer
// `taps` in global memory: cached in L1 like any load, but each one a load instruction beside each pixel's. A
// gradient kernel takes two launches, PASS_GX then PASS_GY, so every window is read twice, as the study's
// "single" strategy did. Each other conv_*.cu file changes one thing of this one (where the taps live, a tile in
// shared memory, two passes, one read for both gradients, more pixels per thread, a rolling window), and
// `cuda_sobel bench --study` measures what each change is worth as the filter grows.
//
// Launch shape: 2D grid of 32×8 blocks (any shape computes the same: the prefetch study runs 8×4), grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh).
#include "sobel.cuh"
#include "conv.cuh"

extern "C" __global__ void conv_single(const u8* __restrict__ in, out_t* __restrict__ out, int* __restrict__ gx_plane,
                                       int width, int height, int border, int pass, const int* __restrict__ taps) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    auto tap = [&](int i, int j, bool t) { return t ? taps[j * CONV_D + i] : taps[i * CONV_D + j]; };
    conv_map(tap, in, out, gx_plane, width, height, border, pass);
}
