// floor.cuh — data-movement floors for docs/performance.md v0.6: `floor_rw` moves exactly gpu-strip's bytes
// (48 read, 16 written per 16-pixel group, one row a thread, all loads at once) with no arithmetic;
// `noop_grid` launches gpu-strip's grid and does nothing. Measured (event time, median):
// floor_rw 6.75 µs at 2048×1024 and 34.0 µs at 7680×4320; noop_grid 3.7 µs (1.8 µs by ncu's duration).
extern "C" __global__ void floor_rw(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {
    int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 16, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x0 >= width || y >= height) return;
    const uint4* p = reinterpret_cast<const uint4*>(rgb + ((size_t)y * width + x0) * 3);
    uint4 a = __ldg(p), b = __ldg(p + 1), c = __ldg(p + 2);
    *reinterpret_cast<uint4*>(out + (size_t)y * width + x0) = make_uint4(a.x ^ b.y ^ c.z, a.y ^ b.z ^ c.w, a.z ^ b.w ^ c.x, a.w ^ b.x ^ c.y);
}
extern "C" __global__ void noop_grid(const u8* __restrict__ rgb, u8* __restrict__ out, int width, int height, int border, int rows) {}
