// strip_shuffle.cuh — LOST (docs/performance.md v0.6). gpu-strip with each lane's neighbour words taken from
// the adjacent lanes' loaded bytes by warp shuffles (only lanes 0 and 31 load them), so 3 load
// instructions a row instead of 5; bands are padded to whole warps so that every warp is in one band.
// Measured: 9.0 / 41.5 / 272 µs against gpu-strip's 8.8 / 41.0 / 268 (2048×1024 / 7680×4320 / 16384²):
// the 4-byte loads hit L1 and cost less than the shuffles and selects that replace them.
#include "../../cuda/row16.cuh"



// How many rows beyond the next one each thread prefetches into L2. Measured on the H200 (gpu-strip,
// 7680×4320 / 16384², µs): 0 rows 43.6 / 298; 1 row 40.7 / 270; 2 rows 41.5 / 274; 4 rows 45.7 / 326:
// more look-ahead than the latency needs only crowds the L2 (docs/performance.md v0.6).


// Ask the L2 cache for the 48 bytes of row y at group x0 (no register is written, nothing waits). One
// address per thread covers every 128-byte line of its warp's 1536-byte row segment.
__device__ __forceinline__ void prefetch_l2s(const u8* __restrict__ rgb, int width, int y, int x0) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(rgb + ((size_t)y * width + x0) * 3));
}

__device__ __forceinline__ Raw16 load_sh(const u8* __restrict__ rgb, int width, int height, int border, int y, int x0, int lane, bool active) {
    Raw16 r = {make_uint4(0, 0, 0, 0), make_uint4(0, 0, 0, 0), make_uint4(0, 0, 0, 0), 0u, 0u};
    int sy = resolve(y, height, border);
    if (sy >= 0 && active) {
        const u8* p = rgb + ((size_t)sy * width + x0) * 3;
        const uint4* v = reinterpret_cast<const uint4*>(p);
        r.v0 = __ldg(v), r.v1 = __ldg(v + 1), r.v2 = __ldg(v + 2);
        if (lane == 0 && x0 > 0) r.left = __ldg(reinterpret_cast<const unsigned*>(p - 4));
        if (lane == 31 && x0 + GROUP < width) r.right = __ldg(reinterpret_cast<const unsigned*>(p + 3 * GROUP));
    }
    return r;
}
__device__ __forceinline__ void grey_sh(Raw16 r, int width, int border, int x0, int lane, int g[GROUP + 2]) {
    unsigned up = __shfl_up_sync(0xffffffffu, r.v2.w, 1), down = __shfl_down_sync(0xffffffffu, r.v0.x, 1);
    if (lane != 0) r.left = up;
    if (lane != 31) r.right = down;
    grey_from_raw16(r, width, border, x0, g);
}
// One step down the strip: row y+1 (its bytes already loaded into `next`) becomes grey row b, and output
// row y is written. Once `next` is converted its registers take the loads of row y+2 (issued before this
// step's arithmetic, so their latency overlaps it: software pipelining), and row y+2+STRIP_PREFETCH is
// prefetched into L2 so that a later step's loads find it there. Converting before loading reuses the
// registers instead of copying a row (measured: 14 moves a step fewer).
__device__ __forceinline__ void sh_step(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                           int border, int y, int y_end, int x0, const int a[GROUP + 2],
                                           const int m[GROUP + 2], int b[GROUP + 2], Raw16& next, int lane, bool active) {
    Raw16 cur = next;
    if (active && y + 2 + STRIP_PREFETCH <= min(y_end, height - 1)) prefetch_l2s(rgb, width, y + 2 + STRIP_PREFETCH, x0);
    if (y + 1 < y_end) next = load_sh(rgb, width, height, border, y + 2, x0, lane, active);
    grey_sh(cur, width, border, x0, lane, b);
    if (active) sobel_row16<true>(a, m, b, out + (size_t)y * width, x0, width);
}

// The general form (width not a multiple of 16): the same march, byte loads, no prefetch.
__device__ __forceinline__ void sh_step_general(const u8* __restrict__ rgb, u8* __restrict__ out, int width,
                                                   int height, int border, int y, int x0, const int a[GROUP + 2],
                                                   const int m[GROUP + 2], int b[GROUP + 2]) {
    grey_row18<false>(rgb, width, height, border, y + 1, x0, b);
    sobel_row16<false>(a, m, b, out + (size_t)y * width, x0, width);
}

// Thread t owns group t mod groups (16 pixels wide) of band t / groups (`rows` rows high): threads are
// numbered across whole rows of groups, so no thread idles however the width divides by the block size.
template <bool ALIGNED>
__device__ __forceinline__ void strip_sh(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                      int border, int rows) {
    int groups = ((width + GROUP - 1) / GROUP + 31) / 32 * 32;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    int x0 = (int)(t % groups) * GROUP, y = (int)(t / groups) * rows;
    int lane = threadIdx.x % 32; bool active = x0 < width;
    if (y >= height) return;
    int y_end = min(y + rows, height);
    int r0[GROUP + 2], r1[GROUP + 2], r2[GROUP + 2];
    if (ALIGNED) {
        // All three first rows' loads (and the prefetches of the next ones) are in flight before any is
        // converted: one memory round trip.
        for (int k = y + 2; active && k <= min(y + 1 + STRIP_PREFETCH, min(y_end, height - 1)); ++k) prefetch_l2s(rgb, width, k, x0);
        Raw16 above = load_sh(rgb, width, height, border, y - 1, x0, lane, active);
        Raw16 here = load_sh(rgb, width, height, border, y, x0, lane, active);
        Raw16 next = load_sh(rgb, width, height, border, y + 1, x0, lane, active);
        grey_sh(above, width, border, x0, lane, r0);
        grey_sh(here, width, border, x0, lane, r1);
        // Unrolled by three so that the rows' roles rotate by renaming registers instead of copying.
        for (; y + 3 <= y_end; y += 3) {
            sh_step(rgb, out, width, height, border, y, y_end, x0, r0, r1, r2, next, lane, active);
            sh_step(rgb, out, width, height, border, y + 1, y_end, x0, r1, r2, r0, next, lane, active);
            sh_step(rgb, out, width, height, border, y + 2, y_end, x0, r2, r0, r1, next, lane, active);
        }
        if (y < y_end) sh_step(rgb, out, width, height, border, y, y_end, x0, r0, r1, r2, next, lane, active);
        if (y + 1 < y_end) sh_step(rgb, out, width, height, border, y + 1, y_end, x0, r1, r2, r0, next, lane, active);
    } else {
        grey_row18<false>(rgb, width, height, border, y - 1, x0, r0);
        grey_row18<false>(rgb, width, height, border, y, x0, r1);
        for (; y + 3 <= y_end; y += 3) {
            sh_step_general(rgb, out, width, height, border, y, x0, r0, r1, r2);
            sh_step_general(rgb, out, width, height, border, y + 1, x0, r1, r2, r0);
            sh_step_general(rgb, out, width, height, border, y + 2, x0, r2, r0, r1);
        }
        if (y < y_end) sh_step_general(rgb, out, width, height, border, y, x0, r0, r1, r2);
        if (y + 1 < y_end) sh_step_general(rgb, out, width, height, border, y + 1, x0, r1, r2, r0);
    }
}

extern "C" __global__ void __launch_bounds__(STRIP_THREADS)
    sshfl(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {
    strip_sh<true>(rgb, out, width, height, border, rows);
}
