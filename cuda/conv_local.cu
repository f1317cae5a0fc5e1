// conv_local.cu — pattern: TILING WITH HALO in shared memory ("local memory" in the OpenCL studies).
//
// A block computes a TILE_W × TILE_H tile of outputs. First the tile's input — the tile plus a halo of the radius r
// on every side, (TILE_W + 2r) × (TILE_H + 2r) pixels — is copied into shared memory, then, after a barrier, each
// thread reads its (2r + 1)² window from there instead of from global memory. Each input pixel is loaded from
// global memory about once per tile instead of (2r + 1)² times; the price is the barrier and the halo, which grows
// with r: the larger the filter, the more the tile saves, which is the filter-size study's first finding.
//
// Who loads the tile (TILE_LOADERS): every thread, striding through the tile in row-major order so that
// neighbouring threads load neighbouring pixels (coalesced) — or, as the prefetch case study tried first, a few
// threads, down to one thread loading all of it (TILE_LOADERS=1) while the others wait at the barrier.
// The taps come from constant memory, or are compiled in with LOCAL_PREDEFINED=1 (the study's "local +
// predefined"); a gradient kernel runs in one launch (PASS_WHOLE: the study's "local + double") or two.
// Launch shape: 2D grid of 32×8 blocks (exactly TILE_W × TILE_H threads; -DTILE_W=8 -DTILE_H=4 for the case
// study's work-groups), grid.z = planes.
// Equivalence contract: bytes identical to `filter --variant cpu-scalar` (see conv.cuh).
#include "sobel.cuh"
#include "conv.cuh"

#ifndef TILE_W
#define TILE_W 32
#endif
#ifndef TILE_H
#define TILE_H 8
#endif
#ifndef TILE_LOADERS
#define TILE_LOADERS (TILE_W * TILE_H)
#endif
#ifndef LOCAL_PREDEFINED
#define LOCAL_PREDEFINED 0
#endif
#define TILE_PITCH (TILE_W + 2 * CONV_R)
#define TILE_ROWS (TILE_H + 2 * CONV_R)

extern "C" __global__ void __launch_bounds__(TILE_W * TILE_H)
    conv_local(const u8* __restrict__ in, out_t* __restrict__ out, int* __restrict__ gx_plane, int width, int height,
               int border, int pass) {
    next_launch_may_start();  // conv.cuh: nothing unless CONV_OVERLAP
    __shared__ u8 tile[TILE_ROWS][TILE_PITCH];
    size_t plane = (size_t)width * height * blockIdx.z, all = (size_t)width * height * gridDim.z;
    const BorderFetch fetch_image{in + plane * CONV_IN_BYTES, width, height, border};
    int bx = blockIdx.x * TILE_W, by = blockIdx.y * TILE_H;
    int t = threadIdx.y * TILE_W + threadIdx.x;
    if (t < TILE_LOADERS) {
        for (int k = t; k < TILE_PITCH * TILE_ROWS; k += TILE_LOADERS) {
            int tx = k % TILE_PITCH, ty = k / TILE_PITCH;
            tile[ty][tx] = (u8)fetch_image(bx + tx - CONV_R, by + ty - CONV_R);
        }
    }
    __syncthreads();
    int x = bx + threadIdx.x, y = by + threadIdx.y;
    if (x >= width || y >= height) return;
    // Neighbour (x', y') of the tile's output (x, y) is tile[y' − by + r][x' − bx + r].
    auto fetch = [&](int sx, int sy) { return (int)tile[sy - by + CONV_R][sx - bx + CONV_R]; };
#if LOCAL_PREDEFINED
    auto tap = [](int i, int j, bool tr) { return compiled_tap(i, j, tr); };
#else
    auto tap = [](int i, int j, bool tr) { return tr ? c_taps[j * CONV_D + i] : c_taps[i * CONV_D + j]; };
#endif
    conv_pixel(pass, tap, fetch, x, y, out, gx_plane, plane + (size_t)y * width + x, all);
}
