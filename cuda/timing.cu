// timing.cu — not a variant: kernels that measuring uses.
//
// CUDA events time what the GPU does between them, including any time it sits idle waiting for the
// host to submit the next launch. So before timed runs the host enqueues `spin`, which keeps the GPU
// busy while the host queues every timed launch and event behind it: then each pair of events brackets
// only device work. `noop` is timed that way to measure the GPU-side cost of a launch itself.
#include "sobel.cuh"

extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

extern "C" __global__ void noop() {}
