// What a kernel file needs to compile as ordinary C++ for the CPU (scripts/emulate/*_check.py): the CUDA
// qualifiers as nothing, the built-in indices as per-thread globals the driver sets, and the intrinsics the kernel
// files use, each as its documented arithmetic. conv_strip.cu's driver runs a warp's 32 lanes as 32 CPU threads that
// meet at each shuffle (`emu_run_warp`; no barrier, shared memory only in slots a thread alone touches); vec16.cu's
// runs each thread to completion in turn; the others (EMU_BLOCK, below) a block's threads together. It checks a kernel's indexing and arithmetic without a GPU; it says nothing about speed, and nothing about
// what only hardware does (memcheck does).
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <barrier>
#include <semaphore>
#include <functional>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
struct dim3 { unsigned x, y, z; };
static thread_local dim3 blockIdx, threadIdx;
static dim3 blockDim, gridDim;
struct alignas(8) uint2 { unsigned x, y; };  // aligned as CUDA's
struct alignas(16) uint4 { unsigned x, y, z, w; };
inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
// The bytes a kernel may read through __ldg, where the driver sets them (else unchecked): a read outside them ends the
// run with the byte's place, as memcheck reports one on the GPU (conv_strip.cu's edge strips once read before the
// image for columns whose outputs it never wrote: exact bytes, once found only by memcheck).
static const unsigned char *emu_read_from = nullptr, *emu_read_to = nullptr;
template <class T> inline T __ldg(const T* p) {
    const unsigned char* b = (const unsigned char*)p;
    if (emu_read_from && (b < emu_read_from || b + sizeof(T) > emu_read_to)) {
        fprintf(stderr, "read outside the input: %zu bytes at byte %td of %td\n", sizeof(T), b - emu_read_from,
                emu_read_to - emu_read_from);
        exit(5);
    }
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    uint64_t v = ((uint64_t)y << 32) | x; unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
    return r;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {  // four byte products, added to c
    for (int i = 0; i < 32; i += 8) c += ((a >> i) & 0xFF) * ((b >> i) & 0xFF);
    return c;
}
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
inline void __stcs(uint4* p, uint4 v) { *p = v; }
inline void __stcs(unsigned* p, unsigned v) { *p = v; }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned sh) { return (unsigned)((((uint64_t)hi << 32) | lo) >> (sh & 31)); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fdiv_rn(float a, float b) { return a / b; }
// Directed rounding, without changing the FPU's mode (the compiler may move arithmetic across fesetround): the
// exact result in long double (a 64-bit significand holds a float product and the sums the kernels form), rounded
// to nearest, then stepped one float towards the direction asked where that went the other way.
inline float __fmaf_rd(float a, float b, float c) {
    long double x = (long double)a * b + c;
    float r = (float)x;
    return (long double)r > x ? std::nextafterf(r, -INFINITY) : r;
}
inline float __frcp_ru(float a) {
    float r = 1.0f / a;
    return (long double)r * a < 1.0L ? std::nextafterf(r, INFINITY) : r;
}
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline float __int_as_float(int u) { float f; std::memcpy(&f, &u, 4); return f; }
inline float __uint2float_rn(unsigned u) { return (float)u; }  // round to nearest even, as the default mode
inline int min(int a, int b) { return a < b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
// Warp shuffles. `emu_run_warp` runs lanes 0 … 31 of a warp as threads; at a shuffle each lane posts its value and
// waits for the others (a lane that has returned leaves the barrier), then takes its source lane's. Reading a lane that
// has returned (undefined on the GPU: the kernel must keep whole warps in step through its shuffles) ends the run.
struct EmuWarp {
    std::barrier<>* meet;  // a warp's lanes at a shuffle (new for each warp: a returning lane drops out of it)
    unsigned value[32];
    bool returned[32];
};
static EmuWarp emu_warp;
// 32 lane threads, started once (a thread a lane a warp cost more than the kernels), each running the driver's warp
// body between two meetings with it.
template <class F> void emu_run_warp(F lane_body) {
    static std::barrier<> go(33), finished(33);
    static std::function<void(unsigned)> body;
    static std::vector<std::thread>* pool = nullptr;
    if (!pool) {
        pool = new std::vector<std::thread>;
        for (unsigned l = 0; l < 32; ++l)
            pool->emplace_back([l] {
                for (;;) {
                    go.arrive_and_wait();
                    body(l);
                    emu_warp.returned[l] = true;
                    emu_warp.meet->arrive_and_drop();
                    finished.arrive_and_wait();
                }
            })
                .detach();
    }
    std::barrier<> meet(32);
    emu_warp.meet = &meet;
    for (bool& r : emu_warp.returned) r = false;
    body = lane_body;
    go.arrive_and_wait();
    finished.arrive_and_wait();
}
inline unsigned emu_shuffle(unsigned v, int from) {
    int lane = threadIdx.x % 32;
    emu_warp.value[lane] = v;
    emu_warp.meet->arrive_and_wait();
    if (from < 0 || from > 31) from = lane;  // outside the warp: the lane's own value, as __shfl_up/down_sync
    if (emu_warp.returned[from]) {
        fprintf(stderr, "lane %d shuffled from lane %d, which had returned\n", lane, from);
        exit(6);
    }
    unsigned r = emu_warp.value[from];
    emu_warp.meet->arrive_and_wait();
    return r;
}
#ifndef EMU_BLOCK
// A thread at a time, no warp can step together: a kernel that reaches __syncwarp needs EMU_BLOCK.
inline void __syncwarp() {
    fprintf(stderr, "__syncwarp in a run of one thread at a time (build with -DEMU_BLOCK)\n");
    exit(8);
}
inline unsigned __shfl_up_sync(unsigned, unsigned v, unsigned d) { return emu_shuffle(v, (int)(threadIdx.x % 32) - (int)d); }
inline unsigned __shfl_down_sync(unsigned, unsigned v, unsigned d) { return emu_shuffle(v, (int)(threadIdx.x % 32 + d)); }
#endif
// Whole blocks (deflate_main.cpp and canny_main.cpp, built with -DEMU_BLOCK): `emu_run_block` runs a block's threads
// (blockDim.x × blockDim.y, a warp 32 consecutive ones in x-major order) as CPU threads that meet at each
// __syncthreads and __syncwarp (one barrier for the block: every kernel run this way keeps all its threads in step —
// a warp whose lanes do not all reach a shuffle deadlocks here as on the GPU — and a warp-wide kernel is launched as
// blocks of one warp); shared memory is static (one block runs at a time); shuffles, votes, __match_any_sync and
// atomics as their documented arithmetic.
#ifdef EMU_BLOCK
#undef __shared__
#define __shared__ static
#include <atomic>
struct EmuBlock {
    std::barrier<>* meet;
    unsigned long long value[1024];
    unsigned exchanges[1024];  // how many shuffles and votes each thread has taken part in
    int site[1024];            // and where in the kernel the last one was (its line)
    bool returned[1024];
};
static thread_local unsigned emu_exchanges;
static EmuBlock emu_block;
// The block's threads are a pool started once and grown to the largest block (a CPU thread for each of every
// block's threads made their creation most of a run: canny_check.py took 68 s on two cores, 26 with the pool);
// each waits for its turn, runs the block's body and reports done.
template <class F> void emu_run_block(unsigned threads, F body) {
    static std::vector<std::binary_semaphore*> start;
    static std::counting_semaphore<1024> done(0);
    static std::function<void()> job;
    while (start.size() < threads) {
        unsigned t = (unsigned)start.size();
        auto* go = new std::binary_semaphore(0);
        start.push_back(go);
        std::thread([t, go] {
            for (;;) {
                go->acquire();
                threadIdx = {t % blockDim.x, t / blockDim.x, 0};
                emu_exchanges = 0;
                job();
                emu_block.returned[t] = true;
                emu_block.meet->arrive_and_drop();
                done.release();
            }
        }).detach();
    }
    std::barrier<> meet(threads);
    emu_block.meet = &meet;
    for (unsigned t = 0; t < threads; ++t) emu_block.exchanges[t] = 0, emu_block.returned[t] = false;
    job = body;
    for (unsigned t = 0; t < threads; ++t) start[t]->release();
    for (unsigned t = 0; t < threads; ++t) done.acquire();
}
inline void __syncthreads() { emu_block.meet->arrive_and_wait(); }
inline void __syncwarp() { emu_block.meet->arrive_and_wait(); }
// The thread's place in its block, x fastest (its lane: the place mod 32).
inline unsigned emu_tid() { return threadIdx.y * blockDim.x + threadIdx.x; }
// Every thread posts its value, then, once all have, each checks that every lane of its warp still running is at
// the same shuffle or vote as itself (`site`: the line of the kernel's source that calls it, which the macros below
// pass — not a return address, which differs where the compiler copies a call into two branches) and has taken part
// in as many: on the GPU a lane that skips a full-mask shuffle or vote hangs its warp, while the block's one barrier
// here would let it through.
inline void emu_post(unsigned long long v, int site) {
    unsigned t = emu_tid();
    emu_block.value[t] = v;
    emu_block.exchanges[t] = ++emu_exchanges;
    emu_block.site[t] = site;
    __syncthreads();
    for (unsigned l = t & ~31u; l < (t & ~31u) + 32; ++l)
        if (!emu_block.returned[l] && (emu_block.exchanges[l] != emu_exchanges || emu_block.site[l] != site)) {
            fprintf(stderr, "thread %u of block (%u, %u) at a shuffle or vote (line %d) that lane %u of its warp is not "
                    "at (line %d)\n", t, blockIdx.x, blockIdx.y, site, l % 32, emu_block.site[l]);
            exit(7);
        }
}
// Every thread posts its value, then takes lane `from`'s of its warp.
inline unsigned long long emu_exchange(unsigned long long v, unsigned from, int site) {
    unsigned t = emu_tid();
    emu_post(v, site);
    unsigned long long r = emu_block.value[(t & ~31u) + from];
    __syncthreads();
    return r;
}
template <class T> T emu_shfl_xor_sync(int site, unsigned, T v, int mask) {
    return (T)emu_exchange((unsigned long long)v, (emu_tid() % 32) ^ (unsigned)mask, site);
}
template <class T> T emu_shfl_sync(int site, unsigned, T v, int from) {
    return (T)emu_exchange((unsigned long long)v, (unsigned)from % 32, site);
}
inline bool emu_all_sync(int site, unsigned, int predicate) {
    unsigned t = emu_tid();
    emu_post(predicate != 0, site);
    bool all = true;
    for (unsigned l = 0; l < 32; ++l) all = all && emu_block.value[(t & ~31u) + l] != 0;
    __syncthreads();
    return all;
}
inline unsigned emu_shfl_up_sync(int site, unsigned, unsigned v, unsigned d) {
    int lane = (int)(emu_tid() % 32), from = lane - (int)d;  // before lane 0: the lane's own value
    return (unsigned)emu_exchange(v, from < 0 ? lane : from, site);
}
inline unsigned emu_ballot_sync(int site, unsigned, int predicate) {
    unsigned t = emu_tid();
    emu_post(predicate != 0, site);
    unsigned votes = 0;
    for (unsigned l = 0; l < 32; ++l) votes |= (unsigned)emu_block.value[(t & ~31u) + l] << l;
    __syncthreads();
    return votes;
}
inline unsigned emu_match_any_sync(int site, unsigned, unsigned v) {
    unsigned t = emu_tid();
    emu_post(v, site);
    unsigned same = 0;
    for (unsigned l = 0; l < 32; ++l) same |= (emu_block.value[(t & ~31u) + l] == v ? 1u : 0u) << l;
    __syncthreads();
    return same;
}
#define __shfl_xor_sync(...) emu_shfl_xor_sync(__LINE__, __VA_ARGS__)
#define __shfl_sync(...) emu_shfl_sync(__LINE__, __VA_ARGS__)
#define __all_sync(...) emu_all_sync(__LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) emu_shfl_up_sync(__LINE__, __VA_ARGS__)
#define __ballot_sync(...) emu_ballot_sync(__LINE__, __VA_ARGS__)
#define __match_any_sync(...) emu_match_any_sync(__LINE__, __VA_ARGS__)
template <class T> T atomicAdd(T* p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> T atomicOr(T* p, T v) { return std::atomic_ref<T>(*p).fetch_or(v); }
template <class T> T atomicMin(T* p, T v) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (v < old && !a.compare_exchange_weak(old, v)) {
    }
    return old;
}
inline int __clz(unsigned x) { return x == 0 ? 32 : __builtin_clz(x); }
inline int __clz(int x) { return __clz((unsigned)x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline float __log2f(float x) { return std::log2(x); }
#endif
