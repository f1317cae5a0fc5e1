// unfilter.cu — pattern: WAVEFRONT. Not a Sobel variant: the last step of decoding a PNG, done on the GPU
// by batch mode (core/src/gpu/slots.rs) so that the CPU only inflates.
//
// A PNG stores each row "filtered": every byte minus a prediction made from bytes already decoded — the
// byte one pixel to its left (a), the byte above it (b) and the byte above-left (c) — with the row's first
// byte saying which prediction (0 none, 1 a, 2 b, 3 the mean of a and b, 4 Paeth's choice among a, b, c).
// Undoing it is a recurrence in both directions: a byte needs its left neighbour in its own row, and the
// row above. No two pixels of a row can be done at once, and no row can start before the row above it
// has got ahead of it. On the CPU this is half of decoding a PNG on the H200 host, 63 % on the
// development machine, and decoding is the largest cost in batch mode.
//
// What can run at once: chunk k of row r needs only chunk k−1 of its own row and chunks k−1, k of row
// r−1. So every chunk on one anti-diagonal of the (row, chunk) grid is independent of the others. That is
// the wavefront: thread t owns row t and starts t steps after thread 0; at step s it does chunk s − t.
// After each step the block waits (__syncthreads), so that a row's chunk is written before the row below
// reads it at the next step — from shared memory, where the thread above left it (see `unfilter` below).
// Threads start and finish at different steps: at most `chunks` of them are busy at once (a diagonal is no
// longer than that), which is why the host gives the block no more threads than a row has chunks. A thread
// that finishes its row starts on the row `threads` below it, so that after the first few steps every
// thread is busy: about height + chunks steps in all.
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
// chunk with bpp 8-byte loads and stores. A last map (`unfilter_pack`) writes
// the RGB image gpu-strip reads. The two maps run on the whole GPU and cost microseconds. Then the steps
// themselves: a step that waited for memory (its chunk and the one above) is a step the whole block waited
// for, so no step waits for memory (H100, 2048×1024: 1.94–1.99 against 2.05–2.10 ms alone; in
// batch, where the slots' other work fills the memory system, a slot holds a scene 6.1–6.5 ms against
// 7.1–7.5). What is left is the bytes' arithmetic, one SM's worth.
//
// Report section: goes beyond the report (which read its images with OpenCV on the CPU).
// Launch shape: unfilter_pad and unfilter_pack: 2D grids of 256×1 blocks, a thread per byte written;
// unfilter_rgb / unfilter_rgba: one block of up to UNFILTER_MAX_THREADS×1 threads (the host's choice: a
// multiple of 32, no more than the row's chunks).
// Equivalence contract: the bytes of the PNG specification's unfiltering (ISO/IEC 15948, section 9), and
// so of the png crate's decoder: `packed` is the inflated image data (height rows of 1 + width·bpp bytes,
// every filter byte ≤ 4, checked by the host); `rgb` gets each pixel's first three bytes (alpha dropped,
// as the CPU decode drops it).

#define UNFILTER_CHUNK 8           // pixels a thread undoes per step (= CHUNK in core/src/gpu/patterns/unfilter.rs)
#define UNFILTER_MAX_THREADS 512   // (= MAX_THREADS there; `passed` in shared memory is 2 · WORDS · this)
#define UNFILTER_MAP_THREADS 256   // threads of a block of the two maps (= MAP_THREADS there)

// u8 comes from sobel.cuh.
#include "sobel.cuh"

// The prediction of a byte by filter `filter` from a (left), b (above) and c (above left). Paeth's is, as
// the specification writes it, of a, b and c the one nearest to p = a + b − c (ties to a, then b).
//
// Branch-free: the 32 threads of a warp are on 32 rows, each with a filter of its own, so a `switch` here
// made each warp run every filter's code one after another for every byte: 4.3 ms for 2048×1024 on the
// H200, against 2.2 ms so. All four predictions are computed, one is selected.
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

// The 32-bit words of a chunk: UNFILTER_CHUNK pixels of BPP bytes.
template <int BPP>
struct Chunk {
    static constexpr int WORDS = UNFILTER_CHUNK * BPP / 4;
    unsigned w[WORDS];
};

// Loads (or stores) the chunk at `p` as 8-byte words: the rows are laid out at a pitch of whole chunks, so
// every chunk is 8-byte aligned.
template <int BPP>
__device__ __forceinline__ Chunk<BPP> load_chunk(const u8* p) {
    Chunk<BPP> c;
#pragma unroll
    for (int i = 0; i < Chunk<BPP>::WORDS / 2; ++i) {
        const uint2 v = ((const uint2*)p)[i];
        c.w[2 * i] = v.x;
        c.w[2 * i + 1] = v.y;
    }
    return c;
}
template <int BPP>
__device__ __forceinline__ void store_chunk(u8* p, const Chunk<BPP>& c) {
#pragma unroll
    for (int i = 0; i < Chunk<BPP>::WORDS / 2; ++i) ((uint2*)p)[i] = make_uint2(c.w[2 * i], c.w[2 * i + 1]);
}

// Undoes chunk `x` (its filtered bytes, alpha left as it is) with `b`, the same chunk of the row above, undone
// already. `a` (the pixel to its left) and `c` (the pixel above that) come in from the chunk before and go out
// for the next.
template <int BPP>
__device__ __forceinline__ void unfilter_chunk(Chunk<BPP>& x, const Chunk<BPP>& b, int filter, int a[BPP],
                                               int c[BPP]) {
    // The words seen as the chunk's bytes, in memory order.
    u8* xs = (u8*)x.w;
    const u8* bs = (const u8*)b.w;
#pragma unroll
    for (int j = 0; j < UNFILTER_CHUNK * BPP; ++j) {
        const int i = j % BPP;
        // Alpha is left filtered: a byte depends only on bytes of its own channel, and unfilter_pack drops alpha
        // (the scene as RGBA, H100: 2.23 ms, against 2.61 when alpha was undone too; as RGB 1.97).
        if (i == 3) continue;
        const int above = bs[j];
        const int raw = (xs[j] + predict(filter, a[i], above, c[i])) & 0xff;
        xs[j] = (u8)raw;
        a[i] = raw;
        c[i] = above;
    }
}

// Where a thread is in the wavefront: chunk `k` of row `r` at its step `since` (counted from its first
// chunk; before that, negative). Thread t does chunk k of its n-th row (row n·threads + t) at block step
// n·period + t + k.
struct Place {
    int since, r, k;
    __device__ bool busy(int height, int chunks) const { return since >= 0 && r < height && k < chunks; }
    __device__ Place next(int threads, int period) const {
        Place n = *this;
        if (since >= 0 && ++n.k == period) {
            n.k = 0;
            n.r += threads;
        }
        ++n.since;
        return n;
    }
};

// The width does not appear: a row is `pitch` bytes of whole chunks, and the padding's bytes are undone with
// the rest and never read.
//
// What a step waits for is the speed of the whole kernel (height + chunks steps, one after another), so a
// step touches global memory only where it does not wait for it (2.05–2.10 ms for
// a 2048×1024 image alone on the H100 when every step loaded its own chunk and the one above from memory):
//   - the chunk above comes from the thread above, which undid it at the step before: it leaves it in shared
//     memory (`passed`, two buffers, alternating steps, so that it is not overwritten while read);
//   - a thread's own filtered chunk, and its row's filter byte, are loaded one step before they are needed;
//   - thread 0's row lies below the last thread's row of the round before. Its chunk above is read from
//     memory, written there at least two steps before (period ≥ threads + 1), so it too is loaded a step
//     early.
// Undone chunks go to memory as well (for unfilter_pack); nothing waits for those stores.
template <int BPP>
__device__ void unfilter(u8* rows, const u8* filters, int height, int pitch) {
    constexpr int WORDS = Chunk<BPP>::WORDS;
    constexpr int CHUNK_BYTES = UNFILTER_CHUNK * BPP;
    // [step parity][word][thread]: a warp's 32 threads read 32 consecutive words, one a bank.
    __shared__ unsigned passed[2][WORDS][UNFILTER_MAX_THREADS];
    const int chunks = pitch / CHUNK_BYTES;
    const int threads = blockDim.x, t = threadIdx.x;
    // Thread 0's next row, below the last thread's, starts `period` steps after its last: at least
    // threads + 1 (so the last thread's chunk is in memory a step before thread 0 loads it) and at least
    // chunks (a thread finishes one row before starting the next). Every thread is busy at every step but
    // the first and last few.
    const int period = max(chunks, threads + 1);
    const int rounds = (height + threads - 1) / threads;
    const int steps = (rounds - 1) * period + threads - 1 + chunks;

    Place at = {-t, t, 0};
    Chunk<BPP> x = {}, above = {};  // this step's filtered chunk; thread 0's chunk above
    int filter = 0;
    if (at.busy(height, chunks)) {  // thread 0's first chunk (the others' first step is later)
        x = load_chunk<BPP>(rows + (size_t)at.r * pitch);
        filter = filters[at.r];
    }
    int a[BPP], c[BPP];
    for (int step = 0; step < steps; ++step) {
        // The next step's loads, issued now and waited for then.
        const Place next = at.next(threads, period);
        Chunk<BPP> next_x = {}, next_above = {};
        int next_filter = filter;
        if (next.busy(height, chunks)) {
            u8* at_next = rows + (size_t)next.r * pitch + (size_t)next.k * CHUNK_BYTES;
            next_x = load_chunk<BPP>(at_next);
            if (t == 0 && next.r > 0) next_above = load_chunk<BPP>(at_next - pitch);
            if (next.k == 0) next_filter = filters[next.r];
        }
        const int parity = step & 1;
        if (at.busy(height, chunks)) {
            if (at.k == 0) {  // a new row: its first pixel has nothing to its left
#pragma unroll
                for (int i = 0; i < BPP; ++i) a[i] = c[i] = 0;
            }
            if (t > 0) {  // the thread above undid this chunk of its row at the step before
#pragma unroll
                for (int w = 0; w < WORDS; ++w) above.w[w] = passed[parity ^ 1][w][t - 1];
            }  // (thread 0: loaded at the step before; zero above row 0)
            unfilter_chunk<BPP>(x, above, filter, a, c);
            store_chunk<BPP>(rows + (size_t)at.r * pitch + (size_t)at.k * CHUNK_BYTES, x);
#pragma unroll
            for (int w = 0; w < WORDS; ++w) passed[parity][w][t] = x.w[w];
        }
        // Every thread reaches every barrier (the loop's bounds are the same for the whole block): what this
        // step wrote, to shared memory and to memory, is visible to the rest of the block after it.
        __syncthreads();
        at = next;
        x = next_x;
        above = next_above;
        filter = next_filter;
    }
}

// One image per block: `rows` and `filters` as unfilter_pad left them; the filters are undone in place.
extern "C" __global__ void __launch_bounds__(UNFILTER_MAX_THREADS)
    unfilter_rgb(u8* rows, const u8* filters, int height, int pitch) {
    unfilter<3>(rows, filters, height, pitch);
}

// The same for RGBA rows (4 bytes a pixel): alpha is neither undone here nor packed by unfilter_pack.
extern "C" __global__ void __launch_bounds__(UNFILTER_MAX_THREADS)
    unfilter_rgba(u8* rows, const u8* filters, int height, int pitch) {
    unfilter<4>(rows, filters, height, pitch);
}
