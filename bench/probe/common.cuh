// common.cuh — what probe.cu and trace.cu share: error checks, input filling, and gpu-strip's launch
// shape as src/gpu/patterns/strip.rs picks it (one wave of threads, at least `min_rows` rows a thread).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <algorithm>

#define CK(x) do { cudaError_t ck_ = (x); if (ck_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(ck_)); exit(1);} } while (0)

__global__ void fill(u8* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995; x ^= x >> 15;
        p[i] = (u8)x;
    }
}

inline int device_sms() {
    static int sms = 0;
    if (!sms) CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return sms;
}

// Rows a thread for kernel f with `threads`-thread blocks: all threads resident at once, at least min_rows.
template <class F>
int strip_rows(F f, int threads, int w, int h, int min_rows) {
    int per_sm; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void*)f, threads, 0));
    long groups = (w + 15) / 16; long resident = (long)per_sm * threads * device_sms();
    long bands = std::max(1L, std::min((long)h, resident / groups));
    return (int)std::max((long)min_rows, (h + bands - 1) / bands);
}

// Threads of a strip launch: one per 16-pixel group of every band.
inline long strip_threads(int w, int h, int rows) { return (long)(w + 15) / 16 * ((h + rows - 1) / rows); }
