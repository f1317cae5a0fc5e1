// vec16.cu — pattern: WORK GRANULARITY DONE WITH REGISTER BLOCKING (vectorised n:1, n = 16).
//
// The n:1 idea as the seed on Intel subgroups did it: each thread produces 16 consecutive output pixels
// of one row, reading its input with 16-byte loads instead of 3-byte ones, converting four pixels to grey
// with six dp4a instructions, and reusing each grey value (and each column's partial sums) for the outputs
// that need it from registers. Unlike n_per_thread.cu, whose threads' pixels are spread so that 1-byte
// accesses coalesce, here one thread's pixels are adjacent and the accesses are wide.
// Each thread reads the 2r + 1 input rows its row needs itself (r the stencil's radius); the rows above and
// below are re-read by the threads of neighbouring rows (from the L2 cache) and converted to grey again —
// strip.cu removes that redundancy. The rows go through row16.cuh's smoothing (for 5×5 and 7×7) and its 3×3 step.
//
// Launch shape: 2D grid of 32×4 blocks; x over groups of 16 pixels, y over rows.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh, row16.cuh); ALIGNED only when
// width % 16 == 0.
#include "row16.cuh"

template <bool ALIGNED>
__device__ __forceinline__ void vec16(const u8* __restrict__ rgb, out_t* __restrict__ out, int width, int height,
                                      int border) {
    int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * GROUP, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x0 >= width || y >= height) return;
    // Rows y − r … y + r: the last three come out of the running column sums as U's rows y − 1, y, y + 1.
    Levels state = {};
    acc_t u[3][CORE];
#pragma unroll
    for (int j = 0; j < 2 * RADIUS + 1; ++j) {
        int g[WIDE];
        acc_t h[CORE];
        grey_row_wide<ALIGNED>(rgb, width, height, border, y + j - RADIUS, x0, g);
        smooth(g, state, h);
        if (j >= 2 * RADIUS - 2) {
#pragma unroll
            for (int i = 0; i < CORE; ++i) u[j - (2 * RADIUS - 2)][i] = h[i];
        }
    }
    sobel_row16<ALIGNED ? STORE_WORDS : STORE_CLIPPED>(u[0], u[1], u[2], out + (size_t)y * width, (size_t)width * height, x0,
                                                       width, false);
}

extern "C" __global__ void sobel_vec16_aligned(const u8* __restrict__ rgb, out_t* __restrict__ out, int width,
                                               int height, int border) {
    vec16<true>(rgb, out, width, height, border);
}

extern "C" __global__ void sobel_vec16_general(const u8* __restrict__ rgb, out_t* __restrict__ out, int width,
                                               int height, int border) {
    vec16<false>(rgb, out, width, height, border);
}
