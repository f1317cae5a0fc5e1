// conv_constant.cu — pattern: MAP with the taps in CONSTANT MEMORY (the `__constant` step of the 7×7 study).
//
// conv_single.cu with one change: the taps come from `c_taps` (conv.cuh), a `__constant__` array the host fills
// before the launch. All threads of a warp read the same tap at the same moment, and the constant cache broadcasts
// it to them in one transaction, without occupying L1 or the load units the pixels need. The study measured
// about 4 % from this one keyword; `bench --study constant-local` measures it here.
//
// It is also the "before" of the filter-optimisation article's "predefined" optimisation (conv_predefined.cu), and
// the edge command's gpu-constant: since the host could change constant memory at run time, the compiler cannot
// fold the taps, so each pixel does every multiply-add, zeros included (18 for Sobel 3×3, 98 for 7×7), where
// conv_predefined.cu's compiled-in taps skip the zeros and turn ×1 into adds.
//
// Launch shape: 2D grid of 32×8 blocks (any shape computes the same), grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh).
#include "sobel.cuh"
#include "conv.cuh"

extern "C" __global__ void conv_constant(const u8* __restrict__ in, out_t* __restrict__ out, int* __restrict__ gx_plane,
                                         int width, int height, int border, int pass) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    auto tap = [](int i, int j, bool t) { return t ? c_taps[j * CONV_D + i] : c_taps[i * CONV_D + j]; };
    conv_map(tap, in, out, gx_plane, width, height, border, pass);
}
