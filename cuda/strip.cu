// strip.cu — pattern: STENCIL WITH A ROLLING WINDOW (register blocking + column strips), the fast one.
//
// The seeds' "local memory" idea taken one step further: instead of staging a tile in shared memory,
// each thread owns a 16-pixel column strip and marches down `rows` rows, keeping three grey rows
// (above, here, below) in registers. Each step loads one new RGB row segment (three 16-byte loads),
// converts it to grey once, and writes 16 outputs with one 16-byte store. So every input byte is read
// from DRAM once (plus 2 halo rows per `rows`, and the 1-pixel neighbours, which hit the L1/L2
// caches), and every grey value is computed once — the kernel does what the roofline asks: read 3 bytes,
// write 1 byte per pixel. The loop is unrolled three times so that the rows' roles rotate by renaming
// registers instead of copying them. No shared memory, no barriers.
//
// Report section: goes beyond the report (its kernels read each input ~9 times through the caches).
// Launch shape: 2D grid; x over groups of 16 pixels (STRIP_THREADS per block), y over bands of `rows`
// rows. The host picks `rows` so that the grid still fills the GPU for small images.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh, row16.cuh); the host launches the
// ALIGNED form only when width % 16 == 0, the general form otherwise.
#include "row16.cuh"

#define STRIP_THREADS 128

template <bool ALIGNED>
__device__ __forceinline__ void strip_step(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                           int border, int y, int x0, const int a[GROUP + 2], const int m[GROUP + 2],
                                           int b[GROUP + 2]) {
    grey_row18<ALIGNED>(rgb, width, height, border, y + 1, x0, b);
    sobel_row16<ALIGNED>(a, m, b, out + (size_t)y * width, x0, width);
}

template <bool ALIGNED>
__device__ __forceinline__ void strip(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                      int border, int rows) {
    int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * GROUP;
    if (x0 >= width) return;
    int y = blockIdx.y * rows, y_end = min(y + rows, height);
    int r0[GROUP + 2], r1[GROUP + 2], r2[GROUP + 2];
    grey_row18<ALIGNED>(rgb, width, height, border, y - 1, x0, r0);
    grey_row18<ALIGNED>(rgb, width, height, border, y, x0, r1);
    for (; y + 3 <= y_end; y += 3) {
        strip_step<ALIGNED>(rgb, out, width, height, border, y, x0, r0, r1, r2);
        strip_step<ALIGNED>(rgb, out, width, height, border, y + 1, x0, r1, r2, r0);
        strip_step<ALIGNED>(rgb, out, width, height, border, y + 2, x0, r2, r0, r1);
    }
    if (y < y_end) strip_step<ALIGNED>(rgb, out, width, height, border, y, x0, r0, r1, r2);
    if (y + 1 < y_end) strip_step<ALIGNED>(rgb, out, width, height, border, y + 1, x0, r1, r2, r0);
}

extern "C" __global__ void __launch_bounds__(STRIP_THREADS)
    sobel_strip_aligned(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {
    strip<true>(rgb, out, width, height, border, rows);
}

extern "C" __global__ void __launch_bounds__(STRIP_THREADS)
    sobel_strip_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {
    strip<false>(rgb, out, width, height, border, rows);
}
