// fused.cu — pattern: FULL FUSION (map + stencil in one kernel), one thread per pixel.
//
// One kernel goes from RGB bytes to the output: each thread converts its (2r + 1)² neighbourhood to grey
// itself (r the stencil's radius: 9 pixels for 3×3, 49 for 7×7), then computes Gx, Gy and the output. No
// intermediate touches device memory: the kernel reads 3 bytes and writes 1 byte per pixel from DRAM
// (neighbours' reads hit the L1/L2 caches). The price is redundant arithmetic — each grey value is computed
// by (2r + 1)² threads: bytes traded for instructions. On the H200 the instructions are what limits it
// (docs/patterns.md; separable.cu and tiled.cu, which convert each grey value once, are faster, and more so
// as the stencil grows).
//
// Launch shape: 2D grid of 32×8 blocks (a warp spans 32 consecutive pixels of a row: coalesced).
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
#include "sobel.cuh"

extern "C" __global__ void sobel_fused(const u8* rgb, out_t* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    sobel_pixel_from_rgb(rgb, out, (size_t)width * height, x, y, width, height, border);
}
