// thread_ring.cuh — LOST (docs/performance.md v0.6). gpu-strip with each thread staging its own next rows
// in shared memory with cp.async (16-byte .cg copies, which bypass L1, and 4-byte .ca copies for the
// neighbours), STAGES rows deep: the whole band's rows in flight at once, no registers held for them.
// Measured: 11.3 / 69 / 460 µs at 2048×1024 / 7680×4320 / 16384² against gpu-strip's 8.9 / 45.5 / 316
// then. Each warp instruction copies 16 bytes at a 48-byte stride, so every 128-byte line is fetched
// from L2 three times (L1 bypassed), and shared-memory traffic is added to the same loads.
#include "../../cuda/row16.cuh"
#define ASYNC_THREADS 128

__device__ __forceinline__ void cp16(void* smem, const void* g, bool valid) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp4(void* smem, const void* g, bool valid) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(g), "r"(valid ? 4 : 0) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait_pending() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

template <int STAGES>
struct Ring {
    uint4 v[STAGES][3][ASYNC_THREADS];
    unsigned w[STAGES][2][ASYNC_THREADS];
};

template <int STAGES>
__device__ __forceinline__ void issue_row(Ring<STAGES>& ring, int slot, const u8* __restrict__ rgb, int width, int height,
                                          int border, int yy, int y_last, int x0) {
    if (yy <= y_last) {
        int sy = resolve(yy, height, border);
        bool valid = sy >= 0;
        const u8* p = valid ? rgb + ((size_t)sy * width + x0) * 3 : rgb + 4;
        int t = threadIdx.x;
        cp16(&ring.v[slot][0][t], p, valid);
        cp16(&ring.v[slot][1][t], p + 16, valid);
        cp16(&ring.v[slot][2][t], p + 32, valid);
        cp4(&ring.w[slot][0][t], x0 > 0 ? p - 4 : p, valid && x0 > 0);
        cp4(&ring.w[slot][1][t], x0 + GROUP < width ? p + 48 : p, valid && x0 + GROUP < width);
    }
    commit();
}

template <int STAGES>
__device__ __forceinline__ void take_row(Ring<STAGES>& ring, int slot, int width, int border, int x0, int g[GROUP + 2]) {
    int t = threadIdx.x;
    Raw16 r;
    r.v0 = ring.v[slot][0][t], r.v1 = ring.v[slot][1][t], r.v2 = ring.v[slot][2][t];
    r.left = ring.w[slot][0][t], r.right = ring.w[slot][1][t];
    grey_from_raw16(r, width, border, x0, g);
}

template <int STAGES>
__device__ __forceinline__ void async_step(Ring<STAGES>& ring, int& slot, const u8* __restrict__ rgb, u8* __restrict__ out,
                                           int width, int height, int border, int y, int y_end, int x0,
                                           const int a[GROUP + 2], const int m[GROUP + 2], int b[GROUP + 2]) {
    // row y+1 is in `slot`
    wait_pending<STAGES - 1>();
    take_row(ring, slot, width, border, x0, b);
    issue_row(ring, slot, rgb, width, height, border, y + 1 + STAGES, y_end, x0);
    slot = slot + 1 == STAGES ? 0 : slot + 1;
    sobel_row16<true>(a, m, b, out + (size_t)y * width, x0, width);
}

template <int STAGES>
__device__ __forceinline__ void strip_async(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height,
                                            int border, int rows) {
    __shared__ Ring<STAGES> ring;
    int groups = (width + GROUP - 1) / GROUP;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    int x0 = (int)(t % groups) * GROUP, y = (int)(t / groups) * rows;
    if (y >= height) return;
    int y_end = min(y + rows, height);
    // rows y-1 .. y_end are needed; slot k holds row y-1+k (mod STAGES)
#pragma unroll
    for (int k = 0; k < STAGES; ++k) issue_row(ring, k, rgb, width, height, border, y - 1 + k, y_end, x0);
    int r0[GROUP + 2], r1[GROUP + 2], r2[GROUP + 2];
    wait_pending<STAGES - 1>();
    take_row(ring, 0, width, border, x0, r0);
    issue_row(ring, 0, rgb, width, height, border, y - 1 + STAGES, y_end, x0);
    wait_pending<STAGES - 1>();
    take_row(ring, 1, width, border, x0, r1);
    issue_row(ring, 1, rgb, width, height, border, y + STAGES, y_end, x0);
    int slot = 2 % STAGES;
    for (; y + 3 <= y_end; y += 3) {
        async_step(ring, slot, rgb, out, width, height, border, y, y_end, x0, r0, r1, r2);
        async_step(ring, slot, rgb, out, width, height, border, y + 1, y_end, x0, r1, r2, r0);
        async_step(ring, slot, rgb, out, width, height, border, y + 2, y_end, x0, r2, r0, r1);
    }
    if (y < y_end) async_step(ring, slot, rgb, out, width, height, border, y, y_end, x0, r0, r1, r2);
    if (y + 1 < y_end) async_step(ring, slot, rgb, out, width, height, border, y + 1, y_end, x0, r1, r2, r0);
}

extern "C" __global__ void __launch_bounds__(ASYNC_THREADS) sa4(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) { strip_async<4>(rgb, out, width, height, border, rows); }
extern "C" __global__ void __launch_bounds__(ASYNC_THREADS) sa6(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) { strip_async<6>(rgb, out, width, height, border, rows); }
extern "C" __global__ void __launch_bounds__(ASYNC_THREADS) sa5(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) { strip_async<5>(rgb, out, width, height, border, rows); }
