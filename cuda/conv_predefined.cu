// conv_predefined.cu — pattern: MAP with the taps COMPILED IN ("predefined" in the filter-size study).
//
// The host compiles this file once per kernel with its taps as a -D constant (CONV_TAPS), so once the loops over the
// window are unrolled every tap is a literal: a zero tap and its pixel load vanish, a ±1 tap becomes an add. The
// study's Scharr family has six non-zero taps at every size, so this kernel reads six pixels (per gradient) whether
// the filter is 3×3 or 9×9 — its time barely grows with the size. A gradient kernel's two sums come from one read
// of the window (PASS_WHOLE, as conv_double.cu) unless the host asks for two launches (the study's "single" form).
//
// Launch shape: 2D grid of 32×8 blocks (any shape computes the same), grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh).
#include "sobel.cuh"
#include "conv.cuh"

extern "C" __global__ void conv_predefined(const u8* __restrict__ in, out_t* __restrict__ out, int* __restrict__ gx_plane,
                                           int width, int height, int border, int pass) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    conv_map([](int i, int j, bool t) { return compiled_tap(i, j, t); }, in, out, gx_plane, width, height, border,
             pass);
}
