// fused.cu — pattern: FULL FUSION (map + stencil in one kernel), one thread per pixel.
//
// One kernel goes from RGB bytes to magnitude bytes: each thread converts its 3×3 neighbourhood to grey
// itself, then computes Gx, Gy and the magnitude. No intermediate touches device memory: the kernel reads
// 3 bytes and writes 1 byte per pixel from DRAM (neighbours' reads hit the L1/L2 caches). The price is
// redundant arithmetic — each grey value is computed by 9 threads: bytes traded for instructions. On the
// H200 the instructions are what limits it (docs/patterns.md; separable.cu and tiled.cu, which convert each
// grey value once, are faster).
//
// Launch shape: 2D grid of 32×8 blocks (a warp spans 32 consecutive pixels of a row: coalesced).
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
#include "sobel.cuh"

extern "C" __global__ void sobel_fused(const u8* rgb, u8* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    out[(size_t)y * width + x] = sobel_pixel_from_rgb(rgb, x, y, width, height, border);
}
