// tiled.cu — pattern: TILING WITH HALO (shared memory), the seeds' "local memory" optimisation.
//
// A block computes a 32×8 tile of outputs. First its 256 threads cooperatively convert the tile's
// (32 + 2r)×(8 + 2r) input pixels — the tile plus a halo of the stencil's radius r on every side — to grey
// into shared memory: thread t loads pixels t, t+256, … of the padded tile in row-major order, so consecutive
// threads read consecutive pixels (coalesced). After a barrier, each thread reads its (2r + 1)² neighbourhood
// from shared memory. Every grey value is computed once per tile (plus the halo: 340 conversions for 256
// outputs at 3×3, 532 at 7×7) instead of (2r + 1)² times as in fused.cu, at the price of a barrier and
// shared-memory traffic: the larger the stencil, the more the tile saves.
//
// Launch shape: 2D grid of 32×8 blocks (exactly TILE_W × TILE_H threads).
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
#include "sobel.cuh"

#define TILE_W 32
#define TILE_H 8

extern "C" __global__ void __launch_bounds__(TILE_W * TILE_H)
    sobel_tiled(const u8* __restrict__ rgb, out_t* __restrict__ out, int width, int height, int border) {
    __shared__ u8 tile[TILE_H + 2 * RADIUS][TILE_W + 2 * RADIUS];
    int bx = blockIdx.x * TILE_W, by = blockIdx.y * TILE_H;
    for (int i = threadIdx.y * TILE_W + threadIdx.x; i < (TILE_W + 2 * RADIUS) * (TILE_H + 2 * RADIUS);
         i += TILE_W * TILE_H) {
        int tx = i % (TILE_W + 2 * RADIUS), ty = i / (TILE_W + 2 * RADIUS);
        tile[ty][tx] = (u8)grey_at(rgb, bx + tx - RADIUS, by + ty - RADIUS, width, height, border);
    }
    __syncthreads();
    int x = bx + threadIdx.x, y = by + threadIdx.y;
    if (x >= width || y >= height) return;
    int gx, gy;
    // Neighbour (x', y') of the tile's output (x, y) is tile[y' − by + r][x' − bx + r].
    gradients_at([&](int sx, int sy) { return (int)tile[sy - by + RADIUS][sx - bx + RADIUS]; }, x, y, gx, gy);
    store(out, (size_t)y * width + x, (size_t)width * height, gx, gy);
}
