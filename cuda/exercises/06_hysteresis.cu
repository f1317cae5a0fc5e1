// 06_hysteresis.cu — exercise 6: CONNECTED COMPONENTS BY UNION-FIND, Canny's hysteresis. The first pattern here
// that is not a stencil: whether a weak pixel is an edge depends on a chain of weak pixels of any length joining it
// to a strong one, so no fixed window answers it.
//
// Run:    cuda_sobel imgs_in/2048x1024.png --kernel-file cuda/exercises/06_hysteresis.cu --output canny \
//           --low 50 --high 150 --sweep
// Around your kernel the harness runs cuda/canny.cu's other launches: the gradients and the non-maximum suppression
// before it (they write `state`, a byte a pixel: 0 no candidate, 1 weak, 2 strong; and `parent`: node i + 1 is
// pixel i, a strong candidate points at node 0, a weak one at itself), and canny_edges after it (a weak pixel is an
// edge exactly when its root is node 0). Its bytes are checked against cv2.Canny's definition (core/src/canny.rs).
// Your kernel: each candidate joins its set with those of the candidates among its four neighbours above and to the
// left (the other four do the same from their side). Threads of the whole grid do this at once, in any order.
// As given, `unite` joins nothing (the TODO): only the strong pixels come out as edges.
// TODO:   in `unite`, find both roots; if they differ, link the larger root under the smaller with atomicMin, so
//         node 0 ends as the root of every set holding a strong pixel. atomicMin returns what was there: if it is
//         not b, another thread linked b meanwhile — retry with b = what it returned, or a union is lost.
// Why it is safe without locks: a parent only ever moves to a smaller node of the same set, so there are no
// cycles, and a stale parent a thread reads is still an ancestor.
// Worked solution: cuda/canny.cu's canny_link (launched, like yours, on 32×8 blocks over the image); the harness
// times the whole Canny with yours and with it. Then try: skip the up-left and up-right neighbours when the pixel
// above is a candidate (they are joined through it already), and time the difference.

#define CANNY_NONE 0
#define CANNY_STRONG 2

// The root of node n's tree, pointing each node it passes at its grandparent on the way (path halving).
__device__ int find_root(int* parent, int n) {
    while (true) {
        int p = parent[n];
        if (p == n) return n;
        int q = parent[p];
        if (q == p) return p;
        parent[n] = q;
        n = q;
    }
}

// Joins the sets of nodes a and b.
__device__ void unite(int* parent, int a, int b) {
    // TODO: join the two sets (see the top of the file).
}

extern "C" __global__ void link(const unsigned char* state, int* parent, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t i = (size_t)y * width + x;
    unsigned char s = state[i];
    if (s == CANNY_NONE) return;
    // Left, then the three above: each 8-connected pair is joined once, by its later pixel.
    const int dxs[4] = {-1, -1, 0, 1}, dys[4] = {0, -1, -1, -1};
    for (int k = 0; k < 4; k++) {
        int nx = x + dxs[k], ny = y + dys[k];
        if (nx < 0 || ny < 0 || nx >= width) continue;
        size_t n = (size_t)ny * width + nx;
        unsigned char t = state[n];
        // Two strong pixels are in one set already (node 0's).
        if (t != CANNY_NONE && !(s == CANNY_STRONG && t == CANNY_STRONG)) unite(parent, (int)(i + 1), (int)(n + 1));
    }
}
