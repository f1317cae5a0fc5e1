// A syntax error on line 6.
#include "sobel.cuh"

extern "C" __global__ void my_sobel(const u8* rgb, u8* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) out[(size_t)y * width + x] = 0;
}
