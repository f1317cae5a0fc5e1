// warp_ring.cuh — LOST (docs/performance.md v0.6). A warp-cooperative version of thread_ring.cuh: each
// warp copies its 1536-byte row segment (plus 16 bytes each side for the neighbours) into a shared-memory
// ring STAGES rows deep with coalesced 16-byte cp.async, then each lane reads its 48 bytes back.
// Memory stalls nearly vanished (ncu long-scoreboard 2.74 → 0.18 per instruction at 7680×4320), but
// the staging adds ~19 % instructions to a kernel that is close to issue-bound: sw4 51.1 / 331 µs
// against gpu-strip's 45.7 / 315 then (7680×4320 / 16384²).
#include "../../cuda/row16.cuh"
#ifndef ASYNC_THREADS
#define ASYNC_THREADS 128
#endif
#define WARPS (ASYNC_THREADS / 32)
#define SPAN (32 * GROUP * 3)  // bytes of one warp's row segment: 1536
#define SLOT (SPAN + 32)       // plus 16 bytes each side (the 1-pixel neighbours live in them)

__device__ __forceinline__ void cpw16(void* smem, const void* g, bool valid) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void commitw() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void waitw() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Issue row yy of this warp's span into `slot` (bytes: [16 left][1536][16 right]).
__device__ __forceinline__ void wissue(u8* slot, const u8* __restrict__ rgb, int width, int height, int border, int yy,
                                       int y_last, int xw, int lane) {
    if (yy <= y_last) {
        int sy = resolve(yy, height, border);
        const u8* row = rgb + (size_t)max(sy, 0) * width * 3;
        long row_bytes = (long)width * 3;
        long b0 = (long)xw * 3;  // first byte of the span
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            long off = b0 + 16 * (lane + 32 * k);
            bool valid = sy >= 0 && off < row_bytes;
            cpw16(slot + 16 + 16 * (lane + 32 * k), valid ? row + off : rgb, valid);
        }
        if (lane == 0) {
            bool valid = sy >= 0 && xw > 0;
            cpw16(slot, valid ? row + b0 - 16 : rgb, valid);
        } else if (lane == 1) {
            bool valid = sy >= 0 && b0 + SPAN < row_bytes;
            cpw16(slot + 16 + SPAN, valid ? row + b0 + SPAN : rgb, valid);
        }
    }
    commitw();
}

__device__ __forceinline__ void wtake(const u8* slot, int width, int border, int x0, int lane, int g[GROUP + 2]) {
    const u8* p = slot + 16 + 48 * lane;
    Raw16 r;
    r.v0 = *reinterpret_cast<const uint4*>(p);
    r.v1 = *reinterpret_cast<const uint4*>(p + 16);
    r.v2 = *reinterpret_cast<const uint4*>(p + 32);
    r.left = *reinterpret_cast<const unsigned*>(p - 4);
    r.right = *reinterpret_cast<const unsigned*>(p + 48);
    grey_from_raw16(r, width, border, x0, g);
}

template <int STAGES>
__device__ __forceinline__ void wstep(u8* ring, int& slot, const u8* __restrict__ rgb, u8* __restrict__ out, int width,
                                      int height, int border, int y, int y_end, int xw, int x0, int lane, bool active,
                                      const int a[GROUP + 2], const int m[GROUP + 2], int b[GROUP + 2]) {
    waitw<STAGES - 1>();
    __syncwarp();
    wtake(ring + slot * SLOT, width, border, x0, lane, b);
    __syncwarp();
    wissue(ring + slot * SLOT, rgb, width, height, border, y + 1 + STAGES, y_end, xw, lane);
    slot = slot + 1 == STAGES ? 0 : slot + 1;
    if (active) sobel_row16<true>(a, m, b, out + (size_t)y * width, x0, width);
}

template <int STAGES>
__device__ __forceinline__ void strip_warp(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                           int border, int rows) {
    __shared__ __align__(16) u8 rings[WARPS][STAGES * SLOT];
    int lane = threadIdx.x % 32, wib = threadIdx.x / 32;
    u8* ring = rings[wib];
    int groups = (width + GROUP - 1) / GROUP;
    int warps_per_band = (groups + 31) / 32;
    unsigned wg = blockIdx.x * WARPS + wib;
    int band = wg / warps_per_band;
    int xw = (int)(wg % warps_per_band) * 32 * GROUP;
    int x0 = xw + lane * GROUP;
    int y = band * rows;
    if (y >= height) return;  // whole warp
    bool active = x0 < width;
    int y_end = min(y + rows, height);
#pragma unroll
    for (int k = 0; k < STAGES; ++k) wissue(ring + k * SLOT, rgb, width, height, border, y - 1 + k, y_end, xw, lane);
    int r0[GROUP + 2], r1[GROUP + 2], r2[GROUP + 2];
    waitw<STAGES - 1>();
    __syncwarp();
    wtake(ring, width, border, x0, lane, r0);
    __syncwarp();
    wissue(ring, rgb, width, height, border, y - 1 + STAGES, y_end, xw, lane);
    waitw<STAGES - 1>();
    __syncwarp();
    wtake(ring + SLOT, width, border, x0, lane, r1);
    __syncwarp();
    wissue(ring + SLOT, rgb, width, height, border, y + STAGES, y_end, xw, lane);
    int slot = 2 % STAGES;
    for (; y + 3 <= y_end; y += 3) {
        wstep<STAGES>(ring, slot, rgb, out, width, height, border, y, y_end, xw, x0, lane, active, r0, r1, r2);
        wstep<STAGES>(ring, slot, rgb, out, width, height, border, y + 1, y_end, xw, x0, lane, active, r1, r2, r0);
        wstep<STAGES>(ring, slot, rgb, out, width, height, border, y + 2, y_end, xw, x0, lane, active, r2, r0, r1);
    }
    if (y < y_end) wstep<STAGES>(ring, slot, rgb, out, width, height, border, y, y_end, xw, x0, lane, active, r0, r1, r2);
    if (y + 1 < y_end) wstep<STAGES>(ring, slot, rgb, out, width, height, border, y + 1, y_end, xw, x0, lane, active, r1, r2, r0);
}

extern "C" __global__ void __launch_bounds__(ASYNC_THREADS) sw4(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) { strip_warp<4>(rgb, out, width, height, border, rows); }
extern "C" __global__ void __launch_bounds__(ASYNC_THREADS) sw6(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) { strip_warp<6>(rgb, out, width, height, border, rows); }
