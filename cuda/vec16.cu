// vec16.cu — pattern: WORK GRANULARITY DONE WITH REGISTER BLOCKING (vectorised n:1, n = 16).
//
// The n:1 idea as the seed on Intel subgroups did it: each thread produces 16 consecutive output pixels
// of one row, reading its input with 16-byte loads instead of 3-byte ones, converting four pixels to grey
// with six dp4a instructions, and reusing each grey value (and each column's partial sums) for the three
// outputs that need it from registers. Unlike n_per_thread.cu, whose threads' pixels are spread so that
// 1-byte accesses coalesce, here one thread's pixels are adjacent and the accesses are wide.
// Each thread reads its three input rows itself; the rows above and below are re-read by the threads of
// neighbouring rows (from the L2 cache) and converted to grey again — strip.cu removes that redundancy.
//
// Launch shape: 2D grid of 32×4 blocks; x over groups of 16 pixels, y over rows.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh, row16.cuh); ALIGNED only when
// width % 16 == 0.
#include "row16.cuh"

template <bool ALIGNED>
__device__ __forceinline__ void vec16(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                      int border) {
    int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * GROUP, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x0 >= width || y >= height) return;
    int a[GROUP + 2], m[GROUP + 2], b[GROUP + 2];
    grey_row18<ALIGNED>(rgb, width, height, border, y - 1, x0, a);
    grey_row18<ALIGNED>(rgb, width, height, border, y, x0, m);
    grey_row18<ALIGNED>(rgb, width, height, border, y + 1, x0, b);
    sobel_row16<ALIGNED>(a, m, b, out + (size_t)y * width, x0, width);
}

extern "C" __global__ void sobel_vec16_aligned(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                               int border) {
    vec16<true>(rgb, out, width, height, border);
}

extern "C" __global__ void sobel_vec16_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                               int border) {
    vec16<false>(rgb, out, width, height, border);
}
