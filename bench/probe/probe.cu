// probe.cu — the kernel experiments of docs/performance.md v0.6, reproducible on the GPU machine:
//   bash bench/probe/run.sh [size-mask] ["name|name…"]     (nvcc; no Rust needed)
// Not part of cuda_sobel: candidates that lost (or that the real kernel absorbed) and data-movement
// floors, timed the way `cuda_sobel bench` times the variants — CUDA events around each launch, all
// launches queued behind a `spin` kernel, 20 warm-ups, median of 200, rotating over enough buffer copies
// to span 3× the L2 (PROBE_COPIES=1: one copy, so the data stay in L2) — at 2048×1024, 7680×4320,
// 16384² and 1040×777 (size-mask bits 0–3; default 7).
// Each candidate's output is compared with gpu-strip's (itself checked bit-exact against cpu-scalar
// by tests/gpu.rs) for every border mode: "exact" or "DIFF!" (the floors are expected to differ).
//
//   strip minR     the real gpu-strip (cuda/strip.cu), at least R rows a thread (the host uses 4)
//                  (the L2 prefetch distance is cuda/strip.cu's STRIP_PREFETCH: sweep it with
//                  PROBE_FLAGS=-DSTRIP_PREFETCH=D bash bench/probe/run.sh 6 " strip min4 ")
//   sshfl          strip_shuffle.cuh: neighbour words by warp shuffles instead of 4-byte loads
//   swS minR       warp_ring.cuh: each warp stages rows into shared memory with coalesced cp.async, S deep
//   sa4            thread_ring.cuh: each thread stages its own rows with cp.async (L1-bypassing)
//   vec16          cuda/vec16.cu
//   floor_rw       floor.cuh: read the 3 bytes and write 1 byte of every pixel, no arithmetic
//   noop_grid      floor.cuh: an empty kernel with gpu-strip's grid
// Also printed: an empty 1-thread kernel, a device-to-device cudaMemcpy of 4 bytes a pixel, and
// `magcheck`: magnitude_fast_sq against round(sqrt(s)) in doubles for every s < 2^26 (must be 0 bad).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <string>
#include <functional>
#include "../../cuda/strip.cu"
#include "../../cuda/vec16.cu"
#include "../../cuda/timing.cu"
#include "thread_ring.cuh"
#include "warp_ring.cuh"
#include "magcheck.cuh"
#include "floor.cuh"
#include "strip_shuffle.cuh"
#include "common.cuh"

typedef void (*KFn)(const u8*, u8*, int, int, int, int);

struct Launch { std::string name; std::function<void(const u8*, u8*, int, int, int)> go; };

void launch_strip_like(KFn f, int threads, const u8* in, u8* out, int w, int h, int border, int rows) {
    long nthreads = strip_threads(w, h, rows);
    f<<<(unsigned)((nthreads + threads - 1) / threads), threads>>>(in, out, w, h, border, rows);
}

void launch_warp_like(KFn f, const u8* in, u8* out, int w, int h, int border, int minrows) {
    int per_sm; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void*)f, 128, 0);
    long groups = ((w + 15) / 16 + 31) / 32 * 32; long resident = (long)per_sm * 128 * device_sms();
    long bands = std::max(1L, std::min((long)h, resident / groups));
    long rows = std::max((long)minrows, (h + bands - 1) / bands);
    long warps = groups / 32 * ((h + rows - 1) / rows);
    f<<<(unsigned)((warps + 3) / 4), 128>>>(in, out, w, h, border, (int)rows);
}

int main(int argc, char** argv) {
    int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    int sizes[][2] = {{2048, 1024}, {7680, 4320}, {16384, 16384}, {1040, 777}};
    int nsizes = 4; int mask = argc > 1 ? atoi(argv[1]) : 7;
    { unsigned* bad; CK(cudaMallocManaged(&bad, 4)); *bad = 0; magcheck<<<1024, 256>>>(1u << 26, bad); CK(cudaDeviceSynchronize()); printf("magcheck bad=%u\n", *bad); }
    std::string filt = argc > 2 ? argv[2] : "";
    int reps = 200;
    cudaEvent_t ev[2 * 400]; for (auto& e : ev) CK(cudaEventCreate(&e));
    for (int si = 0; si < nsizes; ++si) {
        if (!(mask & (1 << si))) continue;
        int w = sizes[si][0], h = sizes[si][1];
        size_t px = (size_t)w * h, set = 4 * px;
        int copies = getenv("PROBE_COPIES") ? atoi(getenv("PROBE_COPIES")) : (int)std::min<size_t>(64, (3 * (size_t)l2 + set - 1) / set);
        std::vector<u8*> in(copies), out(copies);
        for (int c = 0; c < copies; ++c) { CK(cudaMalloc(&in[c], 3 * px)); CK(cudaMalloc(&out[c], px)); fill<<<1024, 256>>>(in[c], 3 * px, 77 + c); }
        u8 *ref; CK(cudaMalloc(&ref, px));
        std::vector<Launch> ls;
        for (int mr : {1, 2, 3, 4, 5, 6, 8}) {
            ls.push_back({"strip min" + std::to_string(mr), [=](const u8* i, u8* o, int w, int h, int b) {
                launch_strip_like(sobel_strip_aligned, STRIP_THREADS, i, o, w, h, b, strip_rows(sobel_strip_aligned, STRIP_THREADS, w, h, mr)); }});
        }
        for (int mr : {4}) ls.push_back({"sshfl min" + std::to_string(mr), [=](const u8* i, u8* o, int w, int h, int b) {
            int rows = strip_rows((KFn)sobel_strip_aligned, STRIP_THREADS, w, h, mr);
            long groups = ((w + 15) / 16 + 31) / 32 * 32; long nthreads = groups * ((h + rows - 1) / rows);
            sshfl<<<(unsigned)((nthreads + STRIP_THREADS - 1) / STRIP_THREADS), STRIP_THREADS>>>(i, o, w, h, b, rows); }});
        ls.push_back({"floor_rw", [=](const u8* i, u8* o, int w, int h, int b) {
            dim3 blk(32, 4); dim3 g((w / 16 + 31) / 32, (h + 3) / 4); floor_rw<<<g, blk>>>(i, o, w, h, b, 0); }});
        ls.push_back({"noop_grid", [=](const u8* i, u8* o, int w, int h, int b) {
            launch_strip_like(noop_grid, 128, i, o, w, h, b, 4); }});
        ls.push_back({"vec16", [=](const u8* i, u8* o, int w, int h, int b) {
            dim3 blk(32, 4); dim3 g((w / 16 + 31) / 32, (h + 3) / 4); sobel_vec16_aligned<<<g, blk>>>(i, o, w, h, b); }});
        struct { const char* n; KFn f; } as[] = {{"sa4", sa4}};
        struct { const char* n; KFn f; } ws[] = {{"sw4", sw4}, {"sw6", sw6}};
        for (auto& a : ws) for (int mr : {2, 3, 4, 6, 8, 16}) {
            KFn f = a.f;
            ls.push_back({std::string(a.n) + " min" + std::to_string(mr), [=](const u8* i, u8* o, int w, int h, int b) {
                launch_warp_like(f, i, o, w, h, b, mr); }});
        }
        for (auto& a : as) for (int mr : {4}) {
            KFn f = a.f;
            ls.push_back({std::string(a.n) + " min" + std::to_string(mr), [=](const u8* i, u8* o, int w, int h, int b) {
                launch_strip_like(f, 128, i, o, w, h, b, strip_rows(f, 128, w, h, mr)); }});
        }
        // reference: strip, border replicate, zero, reflect on copy 0
        std::vector<u8> r(px), t(px);
        printf("== %dx%d copies %d\n", w, h, copies);
        for (auto& l : ls) {
            if (!filt.empty()) { bool hit = false; size_t a = 0; std::string nm = " " + l.name + " ";
                while (a <= filt.size()) { size_t b2 = filt.find('|', a); if (b2 == std::string::npos) b2 = filt.size();
                    if (nm.find(filt.substr(a, b2 - a)) != std::string::npos) hit = true; a = b2 + 1; }
                if (!hit) continue; }
            bool okall = true;
            for (int b = 0; b < 3; ++b) {
                launch_strip_like(sobel_strip_aligned, 128, in[0], ref, w, h, b, strip_rows(sobel_strip_aligned, 128, w, h, 4));
                CK(cudaMemset(out[0], 0xAB, px));
                l.go(in[0], out[0], w, h, b);
                CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(r.data(), ref, px, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(t.data(), out[0], px, cudaMemcpyDeviceToHost));
                if (r != t) okall = false;
            }
            // timing
            for (int k = 0; k < 20; ++k) l.go(in[k % copies], out[k % copies], w, h, 0);
            spin<<<1, 1>>>(20000000ull);
            for (int k = 0; k < reps; ++k) {
                CK(cudaEventRecord(ev[2 * k])); l.go(in[k % copies], out[k % copies], w, h, 0); CK(cudaEventRecord(ev[2 * k + 1]));
            }
            CK(cudaDeviceSynchronize());
            std::vector<float> ms(reps);
            for (int k = 0; k < reps; ++k) CK(cudaEventElapsedTime(&ms[k], ev[2 * k], ev[2 * k + 1]));
            std::sort(ms.begin(), ms.end());
            double us = ms[reps / 2] * 1000;
            printf("%-14s %s  median %8.2f us  p10 %8.2f  GB/s %7.0f\n", l.name.c_str(), okall ? "exact" : "DIFF!", us, ms[reps / 10] * 1000, set / us / 1e3);
        }
        // noop & copy
        {
            spin<<<1, 1>>>(20000000ull);
            for (int k = 0; k < reps; ++k) { CK(cudaEventRecord(ev[2 * k])); noop<<<1, 1>>>(); CK(cudaEventRecord(ev[2 * k + 1])); }
            CK(cudaDeviceSynchronize());
            std::vector<float> ms(reps); for (int k = 0; k < reps; ++k) CK(cudaEventElapsedTime(&ms[k], ev[2 * k], ev[2 * k + 1]));
            std::sort(ms.begin(), ms.end()); printf("noop           median %8.2f us\n", ms[reps / 2] * 1000);
            spin<<<1, 1>>>(20000000ull);
            for (int k = 0; k < reps; ++k) { CK(cudaEventRecord(ev[2 * k])); CK(cudaMemcpyAsync(in[(k + 1) % copies], in[k % copies], 3 * px / 2 + px / 2, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(ev[2 * k + 1])); }
            CK(cudaDeviceSynchronize());
            for (int k = 0; k < reps; ++k) CK(cudaEventElapsedTime(&ms[k], ev[2 * k], ev[2 * k + 1]));
            std::sort(ms.begin(), ms.end()); printf("d2d copy 2B/px median %8.2f us (%0.f GB/s r+w)\n", ms[reps / 2] * 1000, set / (ms[reps / 2] * 1e6));
        }
        for (int c = 0; c < copies; ++c) { cudaFree(in[c]); cudaFree(out[c]); }
        cudaFree(ref);
    }
}
