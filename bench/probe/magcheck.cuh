// magcheck.cuh — row16.cuh's magnitude_fast_sq against min(255, round(sqrt(s))) in doubles for every s < n
// (the probe uses n = 2^26; tests/gpu.rs checks every reachable s through the selftest kernel).
__global__ void magcheck(unsigned n, unsigned* bad) {
    for (unsigned s = blockIdx.x * blockDim.x + threadIdx.x; s < n; s += gridDim.x * blockDim.x) {
        double r = sqrt((double)s); unsigned want = (unsigned)floor(r + 0.5); if (want > 255) want = 255;
        unsigned got = magnitude_fast_sq(s) & 0xFF;
        if (got != want) atomicAdd(bad, 1u);
    }
}
