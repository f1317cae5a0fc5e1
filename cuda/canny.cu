// canny.cu — pattern: CONNECTED COMPONENTS BY UNION-FIND (hysteresis), after a STENCIL (non-maximum suppression).
//
// Canny's last step is not a stencil: whether a weak pixel is an edge depends on whether any chain of weak
// pixels, however long, joins it to a strong one — a one-pixel spiral joins one seed to millions of pixels. Relaxing
// to a fixpoint (each launch spreads "edge" one pixel further) would need as many launches as the longest chain.
// Instead, every candidate pixel is a node of a forest kept in one array of parents, and three launches, however
// long the chains, give every pixel its answer:
//  1. canny_suppress — a 3×3 stencil on the gradients: OpenCV's magnitude, its non-maximum suppression, and each
//     candidate's node: a strong one points at node 0 (one node standing for "joined to a strong pixel"), a weak one
//     at itself. State bytes (0 none, 1 weak, 2 strong) let the later launches skip the rest of the image.
//  2. canny_link — every candidate unites its set with each candidate among its four neighbours above and to the
//     left (the other four do the same from their side): union-find on the parents, linking the larger root under the
//     smaller with atomicMin, so node 0, the smallest, ends as the root of every set that holds a strong pixel.
//  3. canny_edges — a weak pixel is an edge exactly when its root is node 0.
// Union-find gives the same sets whatever order the threads run in, so the bytes are the reference's
// (core/src/canny.rs), which follows the chains one pixel at a time from a stack.
//
// Why it is safe without locks: a parent only ever moves to a smaller node of the same set (atomicMin on a root,
// or a find that points a node at its grandparent), so the forest has no cycles and every parent a thread reads,
// however stale, is still an ancestor. A link whose root had meanwhile been linked elsewhere (atomicMin returns
// something else) retries from what it returned, which keeps both unions.
//
// Measured against a fixpoint inside each block's 32×8 tile in shared memory first (union-find then only across the
// tiles' seams): the rounds of barriers cost more than the shorter chains saved, 1.3–1.4× slower at every size. And
// against canny_suppress taking four pixels a thread (their gradient loads overlapped): 2–3 % faster at 7680×4320 and
// 16384², 1–2 % slower at 2048×1024 — not worth the longer kernel.
//
// Launch shape: 2D grid of 32×8 blocks over the image (a warp a row segment: the gradient and state reads are
// coalesced); the parents are one int a pixel plus node 0, touched only at candidates.
//
// Equivalence contract: the gradients are the stencil's exact ones (grad_t below); OpenCV's Canny sees them clamped
// to 16 bits, or for aperture 7 (RADIUS 3) divided by 16 rounded half to even; magnitudes outside the image are 0;
// thresholds arrive as `Canny::thresholds` gives them (swapped, squared for L2, floored), clamped to int by the host,
// which changes no comparison (every magnitude is at most 2·12240² < 2^31).
#include "sobel.cuh"

// The exact gradients as the gradients output stores them for this stencil (map.cu's grad_t): 16 bits where the
// stencil's bound allows (apertures 3 and 5), else 32.
#if GRADIENT_BOUND > 32767
typedef int grad_t;
#else
typedef short grad_t;
#endif

#define CANNY_NONE 0
#define CANNY_WEAK 1
#define CANNY_STRONG 2

// The gradient OpenCV's Canny sees (`Canny::opencv_gradient`).
__device__ __forceinline__ int opencv_gradient(int g) {
#if RADIUS == 3
    int q = g >> 4, r = g & 15;  // floor division by 16 and its remainder, for negative g too
    return q + (r > 8 || (r == 8 && (q & 1)));
#else
    return max(-32768, min(32767, g));
#endif
}

__device__ __forceinline__ int canny_magnitude(int gx, int gy, int l2) {
    return l2 ? gx * gx + gy * gy : abs(gx) + abs(gy);
}

// The magnitude at (x, y) from the gradient planes, 0 outside the image.
__device__ __forceinline__ int magnitude_at(const grad_t* g, size_t plane, int x, int y, int width, int height, int l2) {
    if (x < 0 || y < 0 || x >= width || y >= height) return 0;
    size_t i = (size_t)y * width + x;
    return canny_magnitude(opencv_gradient(g[i]), opencv_gradient(g[plane + i]), l2);
}

extern "C" __global__ void canny_suppress(const grad_t* g, u8* state, int* parent, int width, int height, int l2,
                                          int low, int high) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t plane = (size_t)width * height, i = (size_t)y * width + x;
    int gx = opencv_gradient(g[i]), gy = opencv_gradient(g[plane + i]);
    int m = canny_magnitude(gx, gy, l2);
    u8 s = CANNY_NONE;
    if (m > low) {
        // The two neighbours across the edge, in the sector direction4 gives; ties go to the first (left, above).
        int d = direction4_of(gx, gy);
        int dx = d == 2 ? 0 : -1, dy = d == 0 ? 0 : -1;
        if (d == 3) dx = 1;
        int before = magnitude_at(g, plane, x + dx, y + dy, width, height, l2);
        int after = magnitude_at(g, plane, x - dx, y - dy, width, height, l2);
        bool peak = m > before && ((d == 0 || d == 2) ? m >= after : m > after);
        if (peak) {
            s = m > high ? CANNY_STRONG : CANNY_WEAK;
            parent[i + 1] = s == CANNY_STRONG ? 0 : (int)(i + 1);
        }
    }
    state[i] = s;
    if (i == 0) parent[0] = 0;
}

// The root of node n's tree, pointing each node it passes at its grandparent on the way (path halving).
__device__ __forceinline__ int find_root(int* parent, int n) {
    while (true) {
        int p = parent[n];
        if (p == n) return n;
        int q = parent[p];
        if (q == p) return p;
        parent[n] = q;
        n = q;
    }
}

// Joins the sets of nodes a and b: the larger root goes under the smaller.
__device__ __forceinline__ void unite(int* parent, int a, int b) {
    while (true) {
        a = find_root(parent, a);
        b = find_root(parent, b);
        if (a == b) return;
        if (a > b) {
            int t = a;
            a = b;
            b = t;
        }
        int old = atomicMin(&parent[b], a);
        if (old == b) return;  // b was still a root: linked
        b = old;               // b had been linked meanwhile: join a with where it went
    }
}

extern "C" __global__ void canny_link(const u8* state, int* parent, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t i = (size_t)y * width + x;
    u8 s = state[i];
    if (s == CANNY_NONE) return;
    // Left, then the three above: each 8-connected pair is joined once, by its later pixel. Two strong pixels are
    // already in one set (node 0's).
    const int dxs[4] = {-1, -1, 0, 1}, dys[4] = {0, -1, -1, -1};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        int nx = x + dxs[k], ny = y + dys[k];
        if (nx < 0 || ny < 0 || nx >= width) continue;
        size_t n = (size_t)ny * width + nx;
        u8 t = state[n];
        if (t != CANNY_NONE && !(s == CANNY_STRONG && t == CANNY_STRONG)) unite(parent, (int)(i + 1), (int)(n + 1));
    }
}

extern "C" __global__ void canny_edges(const u8* state, int* parent, u8* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t i = (size_t)y * width + x;
    u8 s = state[i];
    bool edge = s == CANNY_STRONG || (s == CANNY_WEAK && find_root(parent, (int)(i + 1)) == 0);
    out[i] = edge ? 255 : 0;
}
