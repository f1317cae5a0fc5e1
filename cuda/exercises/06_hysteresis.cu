// 06_hysteresis.cu — exercise 6: CONNECTED COMPONENTS BY UNION-FIND, Canny's hysteresis. The first pattern here
// that is not a stencil: whether a weak pixel is an edge depends on a chain of weak pixels of any length joining it
// to a strong one, so no fixed window answers it.
//
// Run:    cuda_sobel imgs_in/2048x1024.png --kernel-file cuda/exercises/06_hysteresis.cu --output canny \
//           --low 50 --high 150 --sweep
// Around your kernel the harness runs cuda/canny.cu's other launches: the gradients and the non-maximum suppression
// before it (they write `state`, a byte a 2×2 block of pixels whose bits say which of its pixels are candidates —
// `candidate` below reads them; and `parent`: a node a 2×2 block of pixels — node n + 1 is the n-th block in row
// order — of each block with a candidate, pointing at node 0 when its run holds a strong pixel, else at the run's
// first block: the suppression has already joined each run of blocks touching left to right among 32 of a row), and
// canny_edges after it (a weak pixel is an edge exactly when its block's
// root is node 0). Its bytes are checked against cv2.Canny's definition (core/src/canny.rs).
// Your kernel: a thread a 2×2 block (any two pixels of a block touch, so its candidates are one set already); each
// block with a candidate joins its set with those of the blocks to its left, above-left, above and above-right where
// a candidate of theirs touches one of its own (the other four blocks do the same from their side). Threads of the
// whole grid do this at once, in any order (joining again what the suppression joined does no harm). As given,
// `unite` joins nothing (the TODO): only the runs holding a strong pixel come out as edges.
// TODO:   in `unite`, find both roots; if they differ, link the larger root under the smaller with atomicMin, so
//         node 0 ends as the root of every set holding a strong pixel. atomicMin returns what was there: if it is
//         not b, another thread linked b meanwhile — retry with b = what it returned, or a union is lost.
// Why it is safe without locks: a parent only ever moves to a smaller node of the same set, so there are no
// cycles, and a stale parent a thread reads is still an ancestor.
// Worked solution: cuda/canny.cu's canny_link (launched, like yours, on 32×8 blocks over the image's 2×2 blocks; it
// skips the left joins the suppression made); the
// harness times the whole Canny with yours and with it. Then try: skip a union whose two nodes already have the same
// parent (one read each, before any find), and time it on a scene and on a one-pixel spiral (`cuda_sobel generate
// 4096x4096 --spiral --out spiral.png`). canny_link skips only where both parents are node 0: why is the wider skip
// slower on the spiral? (Whose finds were halving the paths the other threads then walk?)

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

// Whether pixel (x, y) is a candidate; outside the image, none is. Block n's state byte is state[n] (row by row, as the
// nodes), with bit 2r + c set when its pixel in row r, column c is a candidate (bits 4–7: strong ones).
__device__ bool candidate(const unsigned char* state, int x, int y, int width, int height) {
    if (x < 0 || y < 0 || x >= width || y >= height) return false;
    return (state[(size_t)(y / 2) * ((width + 1) / 2) + x / 2] >> (2 * (y % 2) + x % 2)) & 1;
}

extern "C" __global__ void link(const unsigned char* state, int* parent, int width, int height) {
    int bx = blockIdx.x * blockDim.x + threadIdx.x, by = blockIdx.y * blockDim.y + threadIdx.y;
    int blocks_across = (width + 1) / 2;
    if (bx >= blocks_across || 2 * by >= height) return;
    int x = 2 * bx, y = 2 * by, node = by * blocks_across + bx + 1;
    // The block's pixels: a b on its first row, c d on its second.
    bool a = candidate(state, x, y, width, height), b = candidate(state, x + 1, y, width, height);
    bool c = candidate(state, x, y + 1, width, height), d = candidate(state, x + 1, y + 1, width, height);
    if (!(a || b || c || d)) return;
    // Left: its right column touches this block's left one. Above: its bottom row this block's top one. Above-left:
    // its bottom-right pixel touches a alone. Above-right: its bottom-left pixel touches b alone.
    if ((a || c) && (candidate(state, x - 1, y, width, height) || candidate(state, x - 1, y + 1, width, height)))
        unite(parent, node, node - 1);
    if ((a || b) && (candidate(state, x, y - 1, width, height) || candidate(state, x + 1, y - 1, width, height)))
        unite(parent, node, node - blocks_across);
    if (a && candidate(state, x - 1, y - 1, width, height)) unite(parent, node, node - blocks_across - 1);
    if (b && candidate(state, x + 2, y - 1, width, height)) unite(parent, node, node - blocks_across + 1);
}
