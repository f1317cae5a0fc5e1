// n_per_thread.cu — pattern: WORK GRANULARITY (n:1), n output pixels per thread.
//
// The report's n:1 kernels gave each thread n pixels, but started each thread at |tid − n| so that
// neighbouring threads overlapped: every pixel was computed about n times, time grew linearly with n, and
// the last threads wrote past the buffer. Here each thread owns n *distinct* pixels, and the mapping is
// chosen so that memory accesses stay coalesced: block b covers the n·B consecutive pixels starting at
// b·n·B (B = threads per block, 256), and in step k its thread t handles pixel b·n·B + k·B + t. In every step
// the 32 threads of a warp touch 32 consecutive pixels. The total work is the same for every n; what
// changes is how many threads share it: with large n too few threads remain to fill the GPU.
//
// Per pixel the computation is fused.cu's (RGB → output in one kernel, any stencil).
// Launch shape: 1D grid of ceil(width·height / (n·B)) blocks of B threads.
// Equivalence contract: bytes identical to cpu-scalar (see sobel.cuh).
//
// `sobel_n_report_mapping` (`--mapping report`) is the report's mapping, kept to measure it: one thread
// per pixel, each starting at pixel |t − n| and computing the n pixels from there. Neighbouring threads'
// ranges overlap in n − 1 pixels, so every pixel is computed (and written, with the same value) about n
// times: n times the work of the correct mapping, which is why the report's time grew linearly with n.
// Two repairs, neither changing that cost: writes past the last pixel are skipped (the report's went past
// the buffer's end), and the grid has n threads more than pixels so that the last pixel is reached (thread
// t < P + n starts at t − n ≤ P − 1; with exactly P threads the last pixel would never be written).
#include "sobel.cuh"

extern "C" __global__ void sobel_n_per_thread(const u8* rgb, out_t* out, int width, int height, int border, int n) {
    size_t total = (size_t)width * height;
    size_t first = (size_t)blockIdx.x * blockDim.x * n + threadIdx.x;
    for (int k = 0; k < n; ++k) {
        size_t i = first + (size_t)k * blockDim.x;
        if (i >= total) return;
        int y = (int)(i / width), x = (int)(i % width);
        sobel_pixel_from_rgb(rgb, out, total, x, y, width, height, border);
    }
}

extern "C" __global__ void sobel_n_report_mapping(const u8* rgb, out_t* out, int width, int height, int border, int n) {
    long long total = (long long)width * height;
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total + n) return;
    long long start = t >= n ? t - n : n - t;  // |t − n|
    for (int k = 0; k < n; ++k) {
        long long i = start + k;
        if (i >= total) return;
        int y = (int)(i / width), x = (int)(i % width);
        sobel_pixel_from_rgb(rgb, out, (size_t)total, x, y, width, height, border);
    }
}
