// What the filter's overlapped launches (Tuning::overlap, cuda/conv.cuh `next_launch_may_start`) rely on, checked
// on the GPU machine: a launch made with programmatic stream serialization, after a
// kernel that allows it at its start, (1) does start before that kernel has finished on a created stream, and (2)
// an event recorded after it (and after a second such launch) still completes only once the kernel before has finished — though the launch never
// waits for it (no griddepcontrol.wait). The same on the legacy default stream: (1) does not hold there.
//   nvcc -arch=sm_90 -o /tmp/pdl scripts/pdl_order_check.cu && /tmp/pdl
#include <cstdio>
#include <cuda_runtime.h>
__global__ void primary(volatile int* flag, long long cycles) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    __threadfence_system();
    *flag = 1;
}
__global__ void secondary(volatile int* flag2) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    atomicAdd((int*)flag2, 1);
}
int main() {
    for (int use_stream = 0; use_stream < 2; ++use_stream) {
        cudaStream_t s = 0;
        if (use_stream) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        int *h; cudaHostAlloc(&h, 8, cudaHostAllocMapped); h[0] = h[1] = 0;
        int *d; cudaHostGetDevicePointer(&d, h, 0);
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
        cudaEventRecord(e0, s);
        primary<<<1, 32, 0, s>>>(d, 2000LL * 1000 * 1000);  // ~1 s at ~2 GHz
        cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 32; cfg.stream = s;
        cudaLaunchAttribute a[1]; a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        a[0].val.programmaticStreamSerializationAllowed = 1; cfg.attrs = a; cfg.numAttrs = 1;
        // Two overlapping launches after the long one, as the study's pyramid chains sixteen.
        cudaError_t err = cudaLaunchKernelEx(&cfg, secondary, d + 1);
        if (err == cudaSuccess) err = cudaLaunchKernelEx(&cfg, secondary, d + 1);
        cudaEventRecord(e1, s);
        // poll: when does the secondary's flag appear, and is the primary's there when the event completes?
        while (((volatile int*)h)[1] < 2) {}
        int primary_done_when_secondary = ((volatile int*)h)[0];
        cudaEventSynchronize(e1);
        int primary_done_at_event = ((volatile int*)h)[0];
        float ms; cudaEventElapsedTime(&ms, e0, e1);
        cudaStreamSynchronize(s);
        printf("stream=%s launch=%s both secondaries ran before primary finished: %s; primary finished when the event after the secondary completed: %s; event span %.1f ms\n",
               use_stream ? "created" : "legacy NULL", cudaGetErrorString(err), primary_done_when_secondary ? "no" : "yes",
               primary_done_at_event ? "yes" : "NO", ms);
    }
}
