// canny.cu — pattern: CONNECTED COMPONENTS BY UNION-FIND (hysteresis), after a TILED STENCIL (non-maximum
// suppression).
//
// Canny's last step is not a stencil: whether a weak pixel is an edge depends on whether any chain of weak
// pixels, however long, joins it to a strong one — a one-pixel spiral joins one seed to millions of pixels. Relaxing
// to a fixpoint (each launch spreads "edge" one pixel further) would need as many launches as the longest chain.
// Instead, the candidates are the nodes of a forest kept in one array of parents, and three launches, however long
// the chains, give every pixel its answer. A node is a 2×2 block of pixels, not a pixel: any two pixels of a 2×2
// block touch (8-connected), so its candidates always share one set — four times fewer nodes to join, and a forest
// of a byte a pixel that the GPU's L2 cache holds for a 7680×4320 image.
//  0. before it, the gradient kernel (any variant, OUTPUT_SECTORS) writes a word a pixel: OpenCV's magnitude and the
//     sector of the gradient's direction (sobel.cuh's sector_of).
//  1. canny_suppress — a 3×3 stencil on those words, tiled in shared memory: OpenCV's non-maximum
//     suppression, and the first unions: a warp's 32 blocks of a row find, by vote, their runs of blocks touching
//     left to right, and a block with a candidate points at node 0 (one node standing for "joined to a strong pixel")
//     if its run holds a strong one, else at the run's first block. A state byte a block (below) lets the later
//     launches skip the rest of the image.
//  2. canny_link — every block with a candidate unites its set with those of the blocks to its left (where that is
//     another warp's), above-left, above and above-right wherever a candidate of theirs touches one of its own (the
//     other four blocks do the same from their side): union-find on the parents, linking the larger root under the
//     smaller with atomicMin, so node 0, the smallest, ends as the root of every set that holds a strong pixel.
//  3. canny_edges — a weak pixel is an edge exactly when its block's root is node 0 (a thread 4 blocks of a row).
// Union-find gives the same sets whatever order the threads run in, so the bytes are the reference's
// (core/src/canny.rs), which follows the chains one pixel at a time from a stack.
//
// Why it is safe without locks: a parent only ever moves to a smaller node of the same set (atomicMin on a root,
// or a find that points a node at its grandparent), so the forest has no cycles and every parent a thread reads,
// however stale, is still an ancestor. A link whose root had meanwhile been linked elsewhere (atomicMin returns
// something else) retries from what it returned, which keeps both unions.
//
// Measured against a node a pixel (H200, aperture 3, thresholds 50/150, `bench --canny 50,150`): 0.050 → 0.047 ms at
// 2048×1024, 0.565 → 0.495 ms at 7680×4320, a one-pixel spiral at 4096² 1.01 → 0.46 ms. Measured against a fixpoint
// inside each block's 32×8 tile in shared memory first (union-find then only across the tiles' seams): the rounds of
// barriers cost more than the shorter chains saved, 1.3–1.4× slower at every size.
//
// Launch shape: 2D grid of 32×8 blocks over the image's 2×2 blocks, a thread a 2×2 block (a warp covers 64 pixels
// of two rows: the gradient reads are coalesced, and its 32 state bytes are one); node n + 1 is the n-th 2×2 block in
// row order, node 0 "strong", and a parent is written only for a block holding a candidate. The edges take 4
// consecutive blocks a thread (a warp 128 of a row: canny_edges). A block's row as one 16-bit word instead of its
// two bytes was slower, 0.310 → 0.337 ms at 7680×4320 (H200, aperture 3), for the alignment test and the packing it
// added to every thread of a block; over four blocks, 8-byte words pay for them.
//
// Launches: the three may each start while the one before finishes (programmatic dependent launch, sm_90 and later;
// sobel.cuh): a kernel lets the next one's blocks be placed once all of its own have started, and waits for the one
// before to have finished, its writes visible, before it reads or writes anything — so each kernel's first blocks
// are in place when the one before ends, instead of being launched then.
//
// The state: a byte a 2×2 block (block n at n), not a pixel — bit 2r + c set when the block's pixel in row r, column c
// is a candidate, bit 4 + 2r + c when it is a strong one. The link reads one byte for each block it looks at (a warp's
// 32 in one access) instead of the pixels along its side, and the state is a quarter of the bytes to write and read.
// Measured against a state byte a pixel (H200, aperture 3, 7680×4320, ncu): the link 93 → 83 µs, the edges 52 → 39,
// the suppression 132 → 139 (it packs the bits); the whole Canny 0.314 → 0.291 ms.
//
// Equivalence contract: the words are sector_of the stencil's exact gradients (OpenCV's Canny sees them clamped to
// 16 bits, or for aperture 7 divided by 16 rounded half to even; the magnitude in the build's norm); magnitudes
// outside the image are 0; thresholds arrive as `Canny::thresholds` gives them (swapped, squared for L2, floored), clamped to int by the host,
// which changes no comparison (every magnitude is at most 2·12240² < 2^31).
#include "sobel.cuh"

// What the suppression reads: a word a pixel (sobel.cuh's sector_t), its magnitude << 2 | its sector, as the
// gradient kernels write it for Canny (OUTPUT_SECTORS).
#define SECTOR_MAGNITUDE(w) ((int)(w) >> 2)
#define SECTOR_DIRECTION(w) ((int)(w) & 3)

#define CANNY_NONE 0
#define CANNY_WEAK 1
#define CANNY_STRONG 2

// The magnitude at (x, y), 0 outside the image.
__device__ __forceinline__ int magnitude_at(const sector_t* words, int x, int y, int width, int height) {
    if (x < 0 || y < 0 || x >= width || y >= height) return 0;
    return SECTOR_MAGNITUDE(words[(size_t)y * width + x]);
}

// A launch block's pixels: 32×8 threads, a 2×2 block of pixels each.
#define TILE_W 64
#define TILE_H 16

// The state bits of a block's pixels: a b on its first row, c d on its second; STRONG(bits) the same for strong ones.
#define PIXEL_A 1
#define PIXEL_B 2
#define PIXEL_C 4
#define PIXEL_D 8
#define STRONG(bits) ((bits) << 4)

// Whether a block's candidates (state bits `own`) touch those of the block to its left (`left`): its left column
// (a, c) against that block's right one (b, d). The suppression joins a warp's row of blocks with it, the link the
// rest of the image's.
__device__ __forceinline__ bool touches_left(unsigned own, unsigned left) {
    return (own & (PIXEL_A | PIXEL_C)) && (left & (PIXEL_B | PIXEL_D));
}

// The blocks a warp of canny_suppress covers: 32 consecutive ones of a row (its launch blocks are 32 threads wide).
#define ROW_RUN 32
// The blocks a thread of canny_edges takes: 4 consecutive ones of a row (core/src/gpu/patterns/canny.rs's
// EDGE_BLOCKS).
#define EDGE_BLOCKS 4

// canny_suppress is a TILED STENCIL: a launch block's magnitudes, with the one-pixel ring around them that the
// suppression compares with, go to shared memory first, each read once, and every pixel reads its two
// neighbours there, its addresses counted from its 2×2 block's first pixel. Each pixel computing its neighbours'
// magnitudes again from the gradients, a 64-bit index a load, took 1.5× the instructions and 1.9× the time (H200,
// 7680×4320, ncu: 0.307 → 0.165 ms). It reads a word a pixel (`words`) that the gradient kernel wrote: computing the
// magnitude and the sector here from the two gradient planes took 138 µs and 90 million warp instructions, against 103
// µs and 61 million (H200, 7680×4320, aperture 3, ncu); with L1 the words are 16 bits, half the gradients' bytes.
extern "C" __global__ void canny_suppress(const sector_t* words, u8* state, int* parent, int width, int height, int low,
                                          int high) {
    __shared__ int mag[TILE_H + 2][TILE_W + 2];  // the tile's magnitudes at [1 + y][1 + x], the ring around them
    allow_next_launch();         // the link's blocks may take the SMs this launch's tail leaves idle ("Launches")
    wait_for_previous_launch();  // the words, and the last image's link and edges done with the states
    int bx = blockIdx.x * blockDim.x + threadIdx.x, by = blockIdx.y * blockDim.y + threadIdx.y;
    int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;  // the tile's first pixel
    // The thread's own four words: their magnitudes, and their sectors for the direction.
    int x = 2 * bx, y = 2 * by;
    size_t first = (size_t)y * width + x;  // read and written only where inside the image
    int sector[2][2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
#pragma unroll
        for (int c = 0; c < 2; c++) {
            int w = x + c < width && y + r < height ? words[first + (r * width + c)] : 0;
            sector[r][c] = SECTOR_DIRECTION(w);
            mag[1 + 2 * threadIdx.y + r][1 + 2 * threadIdx.x + c] = SECTOR_MAGNITUDE(w);
        }
    }
    // The ring: 2·(TILE_W + 2) cells above and below, 2·TILE_H at the sides, a thread a cell.
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    if (t < 2 * (TILE_W + 2)) {
        int row = t < TILE_W + 2 ? 0 : TILE_H + 1, col = t % (TILE_W + 2);
        mag[row][col] = magnitude_at(words, x0 + col - 1, y0 + row - 1, width, height);
    } else if (t < 2 * (TILE_W + 2) + 2 * TILE_H) {
        int k = t - 2 * (TILE_W + 2), row = 1 + k % TILE_H, col = k < TILE_H ? 0 : TILE_W + 1;
        mag[row][col] = magnitude_at(words, x0 + col - 1, y0 + row - 1, width, height);
    }
    __syncthreads();
    // A thread outside the image keeps its state at 0 (every pixel below is skipped) and stays for its warp's votes.
    unsigned bits = 0;  // the block's state byte
#pragma unroll
    for (int r = 0; r < 2; r++) {
#pragma unroll
        for (int c = 0; c < 2; c++) {
            if (x + c >= width || y + r >= height) continue;
            const int* m = &mag[1 + 2 * threadIdx.y + r][1 + 2 * threadIdx.x + c];
            // The two neighbours across the edge, in the sector direction4 gives, are m[-off] and m[off]: left and
            // right (sector 0), above-left and below-right (1), above and below (2), above-right and below-left (3).
            // Ties go to the first (left, above). Every pixel takes the same steps, a candidate or not: testing
            // `m > low` first, then the sector, left a third of each warp's lanes idle on a photo (H200, 7680×4320,
            // ncu: 22.5 → 30.9 of 32 lanes active, 0.165 → 0.133 ms).
            int d = sector[r][c];
            int off = d == 0 ? 1 : (TILE_W + 2) + 2 - d;  // a row of the tile is TILE_W + 2 wide
            int before = m[-off], after = m[off];
            bool peak = (*m > low) & (*m > before) & ((*m > after) | (((d & 1) == 0) & (*m == after)));
            int s = !peak ? CANNY_NONE : *m > high ? CANNY_STRONG : CANNY_WEAK;
            bits |= ((s != CANNY_NONE ? 1u : 0u) | (s == CANNY_STRONG ? STRONG(1u) : 0u)) << (2 * r + c);
        }
    }
    // The row's runs, by WARP VOTE: a warp holds 32 consecutive blocks of a row, so which of them touch the block to
    // their left is one 32-bit ballot, and each block's run of touching blocks — one set — is found with bit
    // operations: its first lane is the last one at or before it that does not join its left, its end the next one
    // after it that does not. Each block with a candidate then points at node 0 if its run holds a strong pixel, else
    // at the run's first block, and the link skips the joins to the left inside a warp's row. No shared memory, no
    // barrier, nothing for two threads to race on. Measured against every block pointing at itself (H200, aperture 3,
    // thresholds 50/150): the whole Canny 0.0286 → 0.0268 ms at 2048×1024, 0.243 → 0.239 ms at 7680×4320 (ncu: the
    // link 80 → 74 µs, the suppression 104 → 106), and the one-pixel spiral at 4096² 0.358 → 0.186 ms, its chain's
    // unions along a row made here in a few instructions instead of by the link's atomics.
    unsigned lane = threadIdx.x;  // blocks bx - lane … bx - lane + 31 of the row are this warp's
    unsigned left = __shfl_up_sync(~0u, bits, 1);  // every lane takes part (lane 0 gets its own: unused)
    bool joins = lane > 0 && touches_left(bits, left);
    unsigned joined = __ballot_sync(~0u, joins), strong = __ballot_sync(~0u, (bits >> 4) != 0);
    unsigned upto = (2u << lane) - 1;               // lanes 0 … lane (all 32 for lane 31: 2u << 31 wraps to 0)
    int lead = 31 - __clz(~joined & upto);          // the run's first lane: lane 0 never joins, so there is one
    unsigned later = ~joined & ~upto;               // the lanes after this one that start a run
    unsigned run = (later ? (later & (0u - later)) - 1 : ~0u) & ~((1u << lead) - 1);  // lanes lead … the run's end
    if (x >= width || y >= height) return;
    int node = by * ((width + 1) / 2) + bx + 1;
    state[node - 1] = (u8)bits;
    if (bits & 15) parent[node] = (strong & run) != 0 ? 0 : node - (int)(lane - lead);
    if (node == 1) parent[0] = 0;
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
    allow_next_launch();
    wait_for_previous_launch();  // every state and parent written
    int bx = blockIdx.x * blockDim.x + threadIdx.x, by = blockIdx.y * blockDim.y + threadIdx.y;
    int blocks_across = (width + 1) / 2;
    if (bx >= blocks_across || 2 * by >= height) return;
    int i = by * blocks_across + bx, node = i + 1;
    unsigned own = state[i] & 15;  // the block's candidates
    if (own == 0) return;
    // The blocks to the left, above, above-left and above-right, each where one of its candidates touches one of
    // this block's (the other four blocks around do the same from their side). Two blocks both pointing at node 0
    // (both hold strong pixels) are in one set already: no union. Skipping every pair with one parent instead made
    // the spiral's link 2.6× slower (H200, ncu, 0.28 → 0.72 ms): the finds it skipped were halving the paths that
    // the other threads then walked.
    auto join = [&](int other) {
        if (parent[node] != 0 || parent[other] != 0) unite(parent, node, other);
    };
    // This block's left column (a, c) touches the left block's right one (b, d); its top row (a, b) the bottom row
    // (c, d) of the block above; a the above-left block's d; b the above-right block's c.
    if (bx % ROW_RUN == 0 && bx > 0 && touches_left(own, state[i - 1])) join(node - 1);  // inside a warp's row: joined
    if (by > 0) {
        const u8* up = state + i - blocks_across;
        if ((own & (PIXEL_A | PIXEL_B)) && (up[0] & (PIXEL_C | PIXEL_D))) join(node - blocks_across);
        if ((own & PIXEL_A) && bx > 0 && (up[-1] & PIXEL_D)) join(node - blocks_across - 1);
        if ((own & PIXEL_B) && bx + 1 < blocks_across && (up[1] & PIXEL_C)) join(node - blocks_across + 1);
    }
}

// The four bits of a row of two blocks' edges (bit k: pixel k) as four bytes, 0 or 255: bit k moves to bit 8k (the
// multiplier's terms n, n << 7, n << 14 and n << 21 never overlap, so there is no carry), then × 255.
__device__ __forceinline__ unsigned edge_bytes(unsigned nibble) {
    return ((nibble * 0x204081u) & 0x01010101u) * 255u;
}

// canny_edges is WORK PER THREAD: a thread takes 4 consecutive 2×2 blocks of a row (8 × 2 pixels), their states one
// 4-byte load and each of its two rows of edges one 8-byte store where aligned, so a warp reads 128 consecutive
// states and stores 256 consecutive bytes of each row. Against a thread a block with a byte a store (H200, aperture
// 3, thresholds 50/150): the edges 41.0 → 24.2 µs under ncu at 7680×4320 (20.1 → 10.8 million warp instructions;
// four blocks 32 apart with byte stores: 29.2 µs), the whole Canny 0.238 → 0.226 ms there and 1.76 → 1.65 ms at
// 16384², the same at 2048×1024 — but 0.035 → 0.037 ms there with aperture 5, whose many weak blocks a thread finds
// the roots of one after the other.
static_assert(EDGE_BLOCKS == 4, "canny_edges packs its 4 blocks' 8 pixels of a row in one 8-byte word");
extern "C" __global__ void canny_edges(const u8* state, int* parent, u8* out, int width, int height) {
    wait_for_previous_launch();  // every union made
    int bx = EDGE_BLOCKS * (blockIdx.x * blockDim.x + threadIdx.x), by = blockIdx.y * blockDim.y + threadIdx.y;
    int blocks_across = (width + 1) / 2;
    if (bx >= blocks_across || 2 * by >= height) return;
    int first = by * blocks_across + bx, blocks = min(EDGE_BLOCKS, blocks_across - bx);  // node first + 1 on
    unsigned states = 0;  // block j's state in byte j
    if (blocks == EDGE_BLOCKS && ((size_t)(state + first) & 3) == 0) {
        states = *(const unsigned*)(state + first);
    } else {
        for (int j = 0; j < blocks; j++) states |= (unsigned)state[first + j] << (8 * j);
    }
    unsigned row[2] = {0, 0};  // bit k: the pixel x + k of the row an edge
#pragma unroll
    for (int j = 0; j < EDGE_BLOCKS; j++) {
        unsigned bits = states >> (8 * j) & 0xff, strong = bits >> 4, weak = bits & 15 & ~strong;
        // A weak pixel is an edge exactly when the block's root is node 0.
        unsigned edges = strong | (weak != 0 && find_root(parent, first + j + 1) == 0 ? weak : 0u);
        row[0] |= (edges & 3) << (2 * j);
        row[1] |= (edges >> 2 & 3) << (2 * j);
    }
    int x = 2 * bx, y = 2 * by, columns = min(2 * EDGE_BLOCKS, width - x), rows = min(2, height - y);
    for (int r = 0; r < rows; r++) {
        u8* o = out + (size_t)(y + r) * width + x;
        if (columns == 2 * EDGE_BLOCKS && ((size_t)o & 7) == 0) {
            *(uint2*)o = make_uint2(edge_bytes(row[r] & 15), edge_bytes(row[r] >> 4));
        } else {
            for (int c = 0; c < columns; c++) o[c] = (row[r] >> c & 1) ? 255 : 0;
        }
    }
}
