// unfilter.cu — pattern: WAVEFRONT. Not a Sobel variant: the last step of decoding a PNG, done on the GPU
// by batch mode (src/gpu/slots.rs) so that the CPU only inflates.
//
// A PNG stores each row "filtered": every byte minus a prediction made from bytes already decoded — the
// byte one pixel to its left (a), the byte above it (b) and the byte above-left (c) — with the row's first
// byte saying which prediction (0 none, 1 a, 2 b, 3 the mean of a and b, 4 Paeth's choice among a, b, c).
// Undoing it is a recurrence in both directions: a byte needs its left neighbour in its own row, and the
// row above. No two pixels of a row can be done at once, and no row can start before the row above it
// has got ahead of it. On the CPU this is half of decoding a PNG on the H200 host, 63 % on the
// development machine (docs/performance.md v0.20), and decoding is the largest cost in batch mode.
//
// What can run at once: chunk k of row r needs only chunk k−1 of its own row and chunks k−1, k of row
// r−1. So every chunk on one anti-diagonal of the (row, chunk) grid is independent of the others. That is
// the wavefront: thread t owns row t and starts t steps after thread 0; at step s it does chunk s − t.
// After each step the block waits (__syncthreads), so that a row's chunk is written before the row below
// reads it at the next step. Threads start and finish at different steps: at most `chunks` of them are
// busy at once (a diagonal is no longer than that), which is why the host gives the block no more
// threads than a row has chunks. A thread that finishes its row starts on the row `threads` below it,
// so that after the first few steps every thread is busy: about height + chunks steps in all.
//
// One block per image: the recurrence crosses the whole image, and blocks cannot wait for each other
// within a launch. One SM per image is enough for batch mode, which keeps several images in flight on
// separate streams (one per slot).
//
// Memory access is what this kernel's speed is about. At each step the 32 threads of a warp touch 32
// rows, a row apart: no two share a cache line, so every access instruction costs 32 transactions. Read
// and written byte by byte in the file's layout (rows of 1 + width·bpp bytes, so at any alignment), a
// 2048×1024 image took 18.7–21.5 ms on the H200. So the image data is first laid out again (`unfilter_pad`, a map over every byte): the filter
// bytes apart, each row's bytes at a `pitch` that is a whole number of chunks, so that a thread moves its
// chunk with bpp 8-byte loads and stores (docs/performance.md v0.20). A last map (`unfilter_pack`) writes
// the RGB image gpu-strip reads. The two maps run on the whole GPU and cost microseconds.
//
// Report section: goes beyond the report (which read its images with OpenCV on the CPU).
// Launch shape: unfilter_pad and unfilter_pack: 2D grids of 256×1 blocks, a thread per byte written;
// unfilter_rgb / unfilter_rgba: one block of up to UNFILTER_MAX_THREADS×1 threads (the host's choice: a
// multiple of 32, no more than the row's chunks).
// Equivalence contract: the bytes of the PNG specification's unfiltering (ISO/IEC 15948, section 9), and
// so of the png crate's decoder: `packed` is the inflated image data (height rows of 1 + width·bpp bytes,
// every filter byte ≤ 4, checked by the host); `rgb` gets each pixel's first three bytes (alpha dropped,
// as the CPU decode drops it).

#define UNFILTER_CHUNK 8           // pixels a thread undoes per step (= CHUNK in src/gpu/patterns/unfilter.rs)
#define UNFILTER_MAX_THREADS 1024  // (= MAX_THREADS there)
#define UNFILTER_MAP_THREADS 256   // threads of a block of the two maps (= MAP_THREADS there)

// u8 comes from sobel.cuh.
#include "sobel.cuh"

// The prediction of a byte by filter `filter` from a (left), b (above) and c (above left). Paeth's is, as
// the specification writes it, of a, b and c the one nearest to p = a + b − c (ties to a, then b).
//
// Branch-free: the 32 threads of a warp are on 32 rows, each with a filter of its own, so a `switch` here
// made each warp run every filter's code one after another for every byte: 4.3 ms for 2048×1024 on the
// H200, against 2.2 ms so (docs/performance.md v0.20). All four predictions are computed, one is selected.
__device__ __forceinline__ int predict(int filter, int a, int b, int c) {
    const int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);  // |p − a|, |p − b|, |p − c|
    const int paeth = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
    const int avg = (a + b) >> 1;
    int predicted = filter == 1 ? a : 0;
    predicted = filter == 2 ? b : predicted;
    predicted = filter == 3 ? avg : predicted;
    return filter == 4 ? paeth : predicted;
}

// Map: the file's layout (a filter byte, then width·bpp bytes, each row) → `filters` (one byte a row) and
// `rows` (each row's bytes at `pitch`, the padding zero). A thread per byte of `rows`: x across, and rows
// y, y + gridDim.y, … down (grid.y is at most 65535).
extern "C" __global__ void unfilter_pad(const u8* packed, u8* rows, u8* filters, int width, int height, int bpp,
                                       int pitch) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= pitch) return;
    const size_t row_bytes = (size_t)width * bpp;
    for (int r = blockIdx.y; r < height; r += gridDim.y) {
        const u8* src = packed + (size_t)r * (1 + row_bytes);
        rows[(size_t)r * pitch + j] = j < row_bytes ? src[1 + j] : 0;
        if (j == 0) filters[r] = src[0];
    }
}

// Map: `rows` (undone) → the packed RGB image, alpha dropped. A thread per byte of `rgb`.
extern "C" __global__ void unfilter_pack(const u8* rows, u8* rgb, int width, int height, int bpp, int pitch) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;  // byte of the RGB row
    if (j >= 3 * width) return;
    for (int r = blockIdx.y; r < height; r += gridDim.y) {
        rgb[(size_t)r * width * 3 + j] = rows[(size_t)r * pitch + (j / 3) * bpp + j % 3];
    }
}

// Undoes chunk `k` of row `r` in place: UNFILTER_CHUNK pixels of BPP bytes, moved as BPP 8-byte words.
// `a` (the pixel to its left) and `c` (the pixel above that) come in from the chunk before and go out for
// the next, so a thread loads only its own chunk and the one above it.
template <int BPP>
__device__ __forceinline__ void unfilter_chunk(u8* rows, int pitch, int filter, int r, int k, int a[BPP],
                                               int c[BPP]) {
    const int words = UNFILTER_CHUNK * BPP / 8;
    uint2* cur = (uint2*)(rows + (size_t)r * pitch) + k * words;
    const uint2* up = (const uint2*)(rows + (size_t)(r - 1) * pitch) + k * words;
    uint2 x[words], b[words];
#pragma unroll
    for (int w = 0; w < words; ++w) {
        x[w] = cur[w];
        b[w] = r > 0 ? up[w] : make_uint2(0, 0);
    }
    // The words seen as the chunk's bytes, in memory order.
    u8* xs = (u8*)x;
    const u8* bs = (const u8*)b;
#pragma unroll
    for (int j = 0; j < UNFILTER_CHUNK * BPP; ++j) {
        const int i = j % BPP;
        const int above = bs[j];
        const int raw = (xs[j] + predict(filter, a[i], above, c[i])) & 0xff;
        xs[j] = (u8)raw;
        a[i] = raw;
        c[i] = above;
    }
#pragma unroll
    for (int w = 0; w < words; ++w) cur[w] = x[w];
}

// The width does not appear: a row is `pitch` bytes of whole chunks, and the padding's bytes are undone with
// the rest and never read.
template <int BPP>
__device__ void unfilter(u8* rows, const u8* filters, int height, int pitch) {
    const int chunks = pitch / (UNFILTER_CHUNK * BPP);
    const int threads = blockDim.x;
    // Thread t does chunk k of its n-th row (row n·threads + t) at step n·period + t + k. Its next row
    // starts `period` steps after its last; thread 0's next row, below the last thread's, may start once
    // that row is one step ahead of it, so period ≥ threads; and a thread finishes one row before starting
    // the next, so period ≥ chunks. So every thread is busy at every step but the first and last few.
    const int period = max(chunks, threads);
    const int rounds = (height + threads - 1) / threads;
    const int steps = (rounds - 1) * period + threads - 1 + chunks;
    int a[BPP], c[BPP], filter = 0;
    for (int step = 0; step < steps; ++step) {
        const int since = step - (int)threadIdx.x;  // steps since this thread's first chunk
        const int r = (since / period) * threads + threadIdx.x;
        const int k = since % period;  // this thread's chunk at this step
        if (since >= 0 && r < height && k < chunks) {
            if (k == 0) {  // a new row: its filter; its first pixel has nothing to its left
                filter = filters[r];
#pragma unroll
                for (int i = 0; i < BPP; ++i) a[i] = c[i] = 0;
            }
            unfilter_chunk<BPP>(rows, pitch, filter, r, k, a, c);
        }
        // Every thread reaches every barrier (the loop's bounds are the same for the whole block): what this
        // step wrote is visible to the row below at the next step.
        __syncthreads();
    }
}

// One image per block: `rows` and `filters` as unfilter_pad left them; the filters are undone in place.
extern "C" __global__ void __launch_bounds__(UNFILTER_MAX_THREADS)
    unfilter_rgb(u8* rows, const u8* filters, int height, int pitch) {
    unfilter<3>(rows, filters, height, pitch);
}

// The same for RGBA rows (4 bytes a pixel); unfilter_pack leaves alpha out.
extern "C" __global__ void __launch_bounds__(UNFILTER_MAX_THREADS)
    unfilter_rgba(u8* rows, const u8* filters, int height, int pitch) {
    unfilter<4>(rows, filters, height, pitch);
}
