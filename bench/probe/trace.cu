// trace.cu — where gpu-strip's time goes inside one launch (docs/performance.md v0.8), on the GPU machine:
//   nvcc -arch=sm_90 -O3 -o /tmp/trace trace.cu && /tmp/trace [width height [min_rows]]
// Builds cuda/strip.cu with STRIP_HOOK recording, for lane 0 of every warp, the SM clock and the global
// timer at: 0 start, 1 first row converted (its bytes have arrived), 2 second row converted, 3+k output
// row k stored. Launches on cold data (rotating over buffer copies spanning 3× the L2, as the bench does),
// then prints, per hook, the spread over warps of (time − the earliest start on the same SM) and of
// (global time − the kernel's earliest start).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define TRACE_SLOTS 32  // per warp: clock64 at slots 0..11, globaltimer at 12..23, SM id at 31
__device__ unsigned long long* g_trace;
__device__ __forceinline__ void trace_hook(int p) {
    if (g_trace == nullptr || (threadIdx.x & 31) != 0 || p >= 12) return;
    unsigned long long* w = g_trace + ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * TRACE_SLOTS;
    unsigned long long c = clock64(), g;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
    w[p] = c;
    w[12 + p] = g;
    if (p == 0) {
        unsigned sm;
        asm("mov.u32 %0, %%smid;" : "=r"(sm));
        w[31] = sm + 1;
    }
}
#define STRIP_HOOK(p) trace_hook(p)
#include "../../cuda/strip.cu"

#include "common.cuh"

static double pct(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(q * v.size()))];
}

int main(int argc, char** argv) {
    int w = argc > 2 ? atoi(argv[1]) : 2048, h = argc > 2 ? atoi(argv[2]) : 1024, min_rows = argc > 3 ? atoi(argv[3]) : 4;
    int sms = device_sms(), l2, per_sm;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void*)sobel_strip_aligned, STRIP_THREADS, 0));
    int rows = strip_rows(sobel_strip_aligned, STRIP_THREADS, w, h, min_rows);
    long threads = strip_threads(w, h, rows);
    unsigned blocks = (unsigned)((threads + STRIP_THREADS - 1) / STRIP_THREADS);
    long warps = (long)blocks * STRIP_THREADS / 32;
    size_t px = (size_t)w * h;
    int copies = (int)std::min<size_t>(64, (3 * (size_t)l2 + 4 * px - 1) / (4 * px));
    std::vector<u8*> in(copies), out(copies);
    for (int c = 0; c < copies; ++c) {
        CK(cudaMalloc(&in[c], 3 * px));
        CK(cudaMalloc(&out[c], px));
        fill<<<1024, 256>>>(in[c], 3 * px, 77 + c);
    }
    unsigned long long* trace;
    CK(cudaMalloc(&trace, warps * TRACE_SLOTS * 8));
    printf("%dx%d rows %d, %u blocks of %d, %ld warps on %d SMs (%d blocks/SM resident), %d copies\n", w, h, rows, blocks,
           STRIP_THREADS, warps, sms, per_sm, copies);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const int names = 3 + 8;
    const char* name[names] = {"start", "row 1 grey", "row 2 grey", "out 0", "out 1", "out 2", "out 3", "out 4", "out 5", "out 6", "out 7"};
    std::vector<std::vector<double>> local(names), global(names);
    std::vector<double> ns_per_clock, event_us;
    const int launches = 12;
    unsigned long long* none = nullptr;
    for (int k = 0; k < 3 * copies + launches; ++k) {
        bool traced = k >= 3 * copies;
        CK(cudaMemcpyToSymbol(g_trace, traced ? &trace : &none, sizeof(trace)));
        if (traced) CK(cudaMemset(trace, 0, warps * TRACE_SLOTS * 8));
        CK(cudaEventRecord(e0));
        sobel_strip_aligned<<<blocks, STRIP_THREADS>>>(in[k % copies], out[k % copies], w, h, 0, rows);
        CK(cudaEventRecord(e1));
        CK(cudaDeviceSynchronize());
        if (!traced) continue;
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        event_us.push_back(ms * 1000);
        std::vector<unsigned long long> t(warps * TRACE_SLOTS);
        CK(cudaMemcpy(t.data(), trace, t.size() * 8, cudaMemcpyDeviceToHost));
        std::vector<unsigned long long> sm_start(sms, ~0ull);
        unsigned long long g0 = ~0ull;
        for (long i = 0; i < warps; ++i) {
            const unsigned long long* x = &t[i * TRACE_SLOTS];
            if (!x[31]) continue;
            sm_start[x[31] - 1] = std::min(sm_start[x[31] - 1], x[0]);
            g0 = std::min(g0, x[12]);
        }
        for (long i = 0; i < warps; ++i) {
            const unsigned long long* x = &t[i * TRACE_SLOTS];
            if (!x[31]) continue;
            int last = 0;
            for (int p = 0; p < names; ++p)
                if (x[p]) {
                    local[p].push_back((double)(x[p] - sm_start[x[31] - 1]));
                    global[p].push_back((double)(x[12 + p] - g0));
                    last = p;
                }
            if (last > 0 && x[12 + last] > x[12]) ns_per_clock.push_back((double)(x[12 + last] - x[12]) / (double)(x[last] - x[0]));
        }
    }
    double npc = pct(ns_per_clock, 0.5);
    // The traced launches' event times include the host's work between launches (no spin kernel queues
    // them): only the timeline below is meant to be read.
    printf("%d traced launches (event time %.2f us, host gaps included); %.3f ns a clock (%.2f GHz)\n", launches,
           pct(event_us, 0.5), npc, 1 / npc);
    printf("%-11s %8s | ns since the SM's first warp started: p10 p50 p90 | ns since the kernel's first warp: p10 p50 p90 max\n",
           "hook", "warps");
    for (int p = 0; p < names; ++p) {
        if (local[p].empty()) continue;
        printf("%-11s %8zu | %7.0f %7.0f %7.0f | %7.0f %7.0f %7.0f %7.0f\n", name[p], local[p].size() / launches,
               pct(local[p], 0.1) * npc, pct(local[p], 0.5) * npc, pct(local[p], 0.9) * npc, pct(global[p], 0.1),
               pct(global[p], 0.5), pct(global[p], 0.9), pct(global[p], 1.0));
    }
}
