// A student's own border handling, wrong for reflect101: it mirrors WITH the edge pixel (…b a | a b c),
// which is OpenCV's BORDER_REFLECT, not BORDER_REFLECT_101.
#include "sobel.cuh"

__device__ int mirror(int i, int n) {
    if (i < 0) return -i - 1;
    if (i >= n) return 2 * n - i - 1;
    return i;
}

extern "C" __global__ void my_sobel(const u8* rgb, u8* out, int width, int height, int border) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int g[3][3];
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx) {
            int sx = mirror(x + dx - 1, width), sy = mirror(y + dy - 1, height);
            size_t i = 3 * ((size_t)sy * width + sx);
            g[dy][dx] = grey_of(rgb[i], rgb[i + 1], rgb[i + 2]);
        }
    out[(size_t)y * width + x] = magnitude_of(sobel_x(g), sobel_y(g));
}
