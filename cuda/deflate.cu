// deflate.cu — pattern: HISTOGRAM, then SCAN and SCATTER of variable-length codes. Not a Sobel variant: the
// PNG encoding of an edge image, done on the GPU by batch mode (src/gpu/slots.rs) so that the CPU only writes
// the file.
//
// A PNG's image data is one zlib stream of deflate blocks (RFC 1951) over its rows, each row a filter byte
// and its pixels. Encoding it on the CPU (zlib level 5) took ~370 ms of a core per 4000×3000 photo's edges,
// most of the ~430 ms of CPU time each photo cost batch mode (docs/performance.md v0.27). What a CPU encoder spends most of that on
// is finding repeated strings (LZ77), and on a photo's edges there are almost none: sensor noise makes every
// neighbourhood different, and zlib's best effort comes out no smaller than coding each byte alone with a
// Huffman code fitted to the bytes' frequencies (measured on 4000×3000 photos: 7.29 MB against zlib level
// 5's 7.71 MB). Coding bytes alone is what a GPU does well: the bytes are independent once the code is known.
//
// So the image data is cut into segments of whole rows (about 64 kB), and each becomes one deflate block
// with a Huffman code of its own ("dynamic" block, BTYPE 2). Two kernels, one block of threads per segment:
//
//   deflate_plan   HISTOGRAM: the threads count the segment's byte values in shared memory (atomicAdd),
//                  once for each of PNG's five row filters. The filter whose bytes have the least entropy
//                  is the segment's — None on noisy edges, Average or Paeth on smooth ones — and its bytes
//                  are summed for the zlib checksum (Adler-32, combined on the host). Then one thread
//                  builds the code: the symbols sorted by frequency (each thread ranks one symbol), Moffat
//                  and Katajainen's in-place Huffman construction, lengths over deflate's 15-bit limit
//                  clipped and the Kraft sum repaired, canonical codes, and the block's header (the code
//                  lengths, themselves run-length and Huffman coded). It writes the header, the code and
//                  the block's length in bits.
//   deflate_write  SCAN and SCATTER: the block's first bit is the sum of the lengths of the blocks before
//                  it (the threads add them up). Each thread takes a contiguous run of the segment's bytes,
//                  counts the bits of their codes, an exclusive scan over the block's threads gives each
//                  its first bit, and each writes its codes there. Bits of one 32-bit output word can come
//                  from two threads (or two blocks), so a thread ORs its first and last word into memory
//                  (atomicOr, on a buffer cleared beforehand) and stores the words in between, which are
//                  its alone.
//
// Stitching: there is none to do afterwards. Every block's bit offset is known before it is written, the
// blocks are written at those offsets into one buffer, and only the last has its BFINAL bit set. (A
// general-purpose GPU deflate, nvCOMP, compresses chunks independently and does not report where each
// chunk's bits end, so its chunks cannot be joined into the one stream PNG needs without decoding them.)
//
// What this gives up: no LZ77 matches. On images with long repeats (the tiled test scene), zlib's files
// are 4–7× smaller; the host measures the stream's size after deflate_plan and hands such images to the CPU
// encoder (src/gpu/slots.rs, DEFLATE_MIN_RATIO).
//
// Report section: goes beyond the report (which wrote its images with OpenCV on the CPU).
// Launch shape: both kernels one block of DEFLATE_THREADS×1 threads per segment (grid = segments).
// Equivalence contract: the stream inflates (zlib, the png crate, Pillow, OpenCV) to rows of a filter byte
// (one filter per segment) and the row's `width` bytes of `edges` filtered with it, which a PNG decoder
// unfilters to exactly `edges`.

#define DEFLATE_THREADS 256      // threads of each segment's block
#define DEFLATE_SYMBOLS 257      // literal bytes 0..255, and 256: end of block
#define DEFLATE_MAX_BITS 15      // deflate's longest literal code
#define DEFLATE_CL_SYMBOLS 19    // the code-length alphabet: lengths 0..15, and repeats 16, 17, 18
#define DEFLATE_CL_MAX_BITS 7    // its longest code
#define DEFLATE_LENGTHS 259      // lengths sent: 257 literal codes, 2 distance codes
#define DEFLATE_HEADER_WORDS 64  // 2048 bits ≥ the largest header: 17 + 19·3 + 259·7
#define DEFLATE_FILTERS 5        // PNG's row filters: None, Sub, Up, Average, Paeth
#define ADLER_MOD 65521u

// u8 comes from sobel.cuh.
#include "sobel.cuh"

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// One segment's block, as deflate_plan leaves it for deflate_write.
struct Plan {
    u32 filter;  // the PNG row filter the segment's rows use (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth)
    u32 header_bits;
    u32 header[DEFLATE_HEADER_WORDS];
    // Each symbol's code, bit-reversed (deflate sends a code's high bit first but packs bits from the low
    // end of each byte), with its length in bits 16 and up.
    u32 code[DEFLATE_SYMBOLS];
};

// The rows of segment `s`: its first row, and how many.
__device__ void segment_rows(int s, int height, int rows_per_segment, long long* row0, int* rows) {
    *row0 = (long long)s * rows_per_segment;
    *rows = min((long long)rows_per_segment, height - *row0);
}

// Byte x of a row filtered with PNG filter `kind` (bpp 1; ISO/IEC 15948 section 9): the byte minus its
// prediction from the byte to its left (a), above (b) and above-left (c), each 0 outside the image.
__device__ u32 filtered(int kind, const u8* row, const u8* above, int x) {
    u32 v = row[x];
    u32 a = x > 0 ? row[x - 1] : 0u, b = above ? above[x] : 0u, c = above && x > 0 ? above[x - 1] : 0u;
    u32 p;
    switch (kind) {
        case 0: p = 0; break;
        case 1: p = a; break;
        case 2: p = b; break;
        case 3: p = (a + b) / 2; break;
        default: {
            int e = (int)a + (int)b - (int)c, pa = abs(e - (int)a), pb = abs(e - (int)b), pc = abs(e - (int)c);
            p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        }
    }
    return (v - p) & 0xffu;
}

// Byte k of a segment's image data: a row's filter byte, or a filtered pixel.
__device__ u32 data_byte(const u8* edges, int width, long long row, int c, int kind) {
    if (c == 0) return (u32)kind;
    const u8* r = edges + row * width;
    return filtered(kind, r, row > 0 ? r - width : (const u8*)0, c - 1);
}

// Sums `v` over the block (every thread gets the sum).
__device__ u64 block_sum(u64 v, u64* scratch) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // scratch may still be read from an earlier call
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    u64 sum = 0;
    for (int w = 0; w < DEFLATE_THREADS / 32; w++) sum += scratch[w];
    return sum;
}

// Code lengths, none over `max_bits`, for the `n` ≥ 2 symbols `order` lists by ascending `freq`, into `len`
// (`a`: n words of scratch). Moffat & Katajainen, "In-place calculation of minimum-redundancy codes" (1995):
// an optimal Huffman code in O(n) once the symbols are sorted, then lengths over the limit clipped and the
// Kraft sum brought back to 1 by lengthening the deepest codes that fit (the code stays complete).
__device__ void code_lengths(const u32* freq, const u16* order, int n, int max_bits, u32* a, u8* len) {
    for (int i = 0; i < n; i++) a[i] = freq[order[i]];
    // 1. The tree: internal node `next` takes the two lightest of the leaves left (from `leaf` on) and the
    //    internal nodes left (from `root` on); an internal node's weight is replaced by its parent's index.
    a[0] += a[1];
    int root = 0, leaf = 2;
    for (int next = 1; next < n - 1; next++) {
        if (leaf >= n || a[root] < a[leaf]) { a[next] = a[root]; a[root++] = next; }
        else a[next] = a[leaf++];
        if (leaf >= n || (root < next && a[root] < a[leaf])) { a[next] += a[root]; a[root++] = next; }
        else a[next] += a[leaf++];
    }
    // 2. Parent indices to depths of the internal nodes (the root, n − 2, at depth 0).
    a[n - 2] = 0;
    for (int next = n - 3; next >= 0; next--) a[next] = a[a[next]] + 1;
    // 3. Depths of the leaves: at each depth, the nodes not used as internal nodes are leaves, given to the
    //    most frequent symbols first (from the end of `a`).
    int available = 1, used = 0, depth = 0, next = n - 1;
    root = n - 2;
    while (available > 0) {
        while (root >= 0 && (int)a[root] == depth) { used++; root--; }
        while (available > used) { a[next--] = depth; available--; }
        available = 2 * used;
        depth++;
        used = 0;
    }
    // 4. The limit: count codes by length, clipped; while the Kraft sum is over 1, drop one code at the
    //    limit and split a shorter one in two. (Small arrays of one thread live in shared memory: indexed
    //    at run time, they would otherwise go to local memory.)
    __shared__ u32 count[DEFLATE_MAX_BITS + 1];
    for (int l = 0; l <= max_bits; l++) count[l] = 0;
    for (int i = 0; i < n; i++) count[min((int)a[i], max_bits)]++;
    u32 total = 0;
    for (int l = max_bits; l >= 1; l--) total += count[l] << (max_bits - l);
    while (total != (1u << max_bits)) {
        count[max_bits]--;
        for (int l = max_bits - 1; l > 0; l--) {
            if (count[l] != 0) { count[l]--; count[l + 1] += 2; break; }
        }
        total--;
    }
    // The least frequent symbols (the start of `order`) get the longest codes.
    int i = 0;
    for (int l = max_bits; l >= 1; l--)
        for (u32 c = count[l]; c > 0; c--) len[order[i++]] = (u8)l;
}

// Canonical codes (RFC 1951 3.2.2) for the lengths `len` of `n` symbols, bit-reversed, length in bits 16+.
__device__ void canonical_codes(const u8* len, int n, u32* code) {
    __shared__ u32 count[DEFLATE_MAX_BITS + 1], next[DEFLATE_MAX_BITS + 1];
    for (int l = 0; l <= DEFLATE_MAX_BITS; l++) count[l] = 0;
    for (int s = 0; s < n; s++) count[len[s]]++;
    count[0] = 0;
    u32 c = 0;
    for (int l = 1; l <= DEFLATE_MAX_BITS; l++) { c = (c + count[l - 1]) << 1; next[l] = c; }
    for (int s = 0; s < n; s++) {
        int l = len[s];
        code[s] = l == 0 ? 0u : (__brev(next[l]++) >> (32 - l)) | ((u32)l << 16);
    }
}

// Appends the low `count` ≤ 16 bits of `value` to the header being built in `words` (cleared beforehand).
__device__ void put_bits(u32* words, u32* n, u32 value, int count) {
    u32 at = *n % 32, w = *n / 32;
    words[w] |= value << at;
    if (at + count > 32) words[w + 1] |= value >> (32 - at);
    *n += count;
}

__device__ void put_code(u32* words, u32* n, u32 code) { put_bits(words, n, code & 0xffffu, code >> 16); }

// The order RFC 1951 sends the code-length code's lengths in, and the extra bits of repeats 16, 17, 18.
__constant__ u8 cl_order[DEFLATE_CL_SYMBOLS] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
__constant__ u8 cl_extra_bits[3] = {2, 3, 7};

// The block header (BFINAL on the last block): the literal code's lengths and the unused distance code's,
// run-length coded with the code-length alphabet, whose own code comes first.
__device__ void write_header(const u8* lit_len, bool last, u32* words, u32* nbits) {
    __shared__ u8 lengths[DEFLATE_LENGTHS];
    __shared__ u8 sym[DEFLATE_LENGTHS], extra[DEFLATE_LENGTHS];
    for (int s = 0; s < DEFLATE_SYMBOLS; s++) lengths[s] = lit_len[s];
    // Deflate needs a distance code though no block here uses one: two codes of one bit (a complete code).
    lengths[DEFLATE_SYMBOLS] = lengths[DEFLATE_SYMBOLS + 1] = 1;
    // Run-length coding: 17 and 18 for runs of zeros (3–10, 11–138), 16 for 3–6 repeats of the last length.
    int m = 0;
    for (int i = 0; i < DEFLATE_LENGTHS;) {
        int v = lengths[i], run = 1;
        while (i + run < DEFLATE_LENGTHS && lengths[i + run] == v) run++;
        int r = run;
        if (v == 0) {
            while (r >= 11) { int k = min(r, 138); sym[m] = 18; extra[m++] = (u8)(k - 11); r -= k; }
            if (r >= 3) { sym[m] = 17; extra[m++] = (u8)(r - 3); r = 0; }
        } else {
            sym[m] = (u8)v; extra[m++] = 0; r--;
            while (r >= 3) { int k = min(r, 6); sym[m] = 16; extra[m++] = (u8)(k - 3); r -= k; }
        }
        for (; r > 0; r--) { sym[m] = (u8)v; extra[m++] = 0; }
        i += run;
    }
    // The code-length alphabet's code: at most 7 bits, and at least two codes (zlib refuses an incomplete
    // code-length code).
    __shared__ u32 freq[DEFLATE_CL_SYMBOLS], a[DEFLATE_CL_SYMBOLS], code[DEFLATE_CL_SYMBOLS];
    __shared__ u16 order[DEFLATE_CL_SYMBOLS];
    __shared__ u8 len[DEFLATE_CL_SYMBOLS];
    for (int s = 0; s < DEFLATE_CL_SYMBOLS; s++) { freq[s] = 0; len[s] = 0; }
    for (int j = 0; j < m; j++) freq[sym[j]]++;
    int n = 0;
    for (int s = 0; s < DEFLATE_CL_SYMBOLS; s++) n += freq[s] != 0;
    if (n < 2) { freq[freq[0] != 0 ? 1 : 0] = 1; n = 2; }
    // Insertion sort by (frequency, symbol): 19 symbols.
    n = 0;
    for (int s = 0; s < DEFLATE_CL_SYMBOLS; s++) {
        if (freq[s] == 0) continue;
        int j = n++;
        while (j > 0 && freq[order[j - 1]] > freq[s]) { order[j] = order[j - 1]; j--; }
        order[j] = (u16)s;
    }
    code_lengths(freq, order, n, DEFLATE_CL_MAX_BITS, a, len);
    canonical_codes(len, DEFLATE_CL_SYMBOLS, code);
    // The code-length code's lengths, trailing zeros left out (at least 4 sent).
    int sent = DEFLATE_CL_SYMBOLS;
    while (sent > 4 && len[cl_order[sent - 1]] == 0) sent--;
    put_bits(words, nbits, last ? 1 : 0, 1);  // BFINAL
    put_bits(words, nbits, 2, 2);             // BTYPE: dynamic Huffman codes
    put_bits(words, nbits, DEFLATE_SYMBOLS - 257, 5);  // HLIT
    put_bits(words, nbits, 2 - 1, 5);                  // HDIST
    put_bits(words, nbits, sent - 4, 4);               // HCLEN
    for (int j = 0; j < sent; j++) put_bits(words, nbits, len[cl_order[j]], 3);
    for (int j = 0; j < m; j++) {
        put_code(words, nbits, code[sym[j]]);
        if (sym[j] >= 16) put_bits(words, nbits, extra[j], cl_extra_bits[sym[j] - 16]);
    }
}

// deflate_plan: one block per segment (rows [s·rows_per_segment, …) of the `width × height` image `edges`).
// Writes plans[s], bits[s] (the block's length in bits) and adler[2s], adler[2s + 1] (Σ d and Σ (n − i)·d of
// the segment's n bytes d_i, filter bytes included, mod 65521).
extern "C" __global__ void deflate_plan(const u8* edges, int width, int height, int rows_per_segment, Plan* plans,
                                        u64* bits, u32* adler) {
    __shared__ u32 hists[DEFLATE_FILTERS][DEFLATE_SYMBOLS];
    __shared__ u16 order[DEFLATE_SYMBOLS];
    __shared__ u32 a[DEFLATE_SYMBOLS];
    __shared__ u8 len[DEFLATE_SYMBOLS];
    __shared__ u32 code[DEFLATE_SYMBOLS];
    __shared__ u32 header[DEFLATE_HEADER_WORDS];
    __shared__ u64 scratch[DEFLATE_THREADS / 32];
    __shared__ float cost[DEFLATE_FILTERS];
    __shared__ int used, kind;
    const int s = blockIdx.x, t = threadIdx.x;
    long long row0;
    int rows;
    segment_rows(s, height, rows_per_segment, &row0, &rows);
    const long long n = (long long)rows * (width + 1);

    for (int i = t; i < DEFLATE_FILTERS * DEFLATE_SYMBOLS; i += DEFLATE_THREADS) hists[i / DEFLATE_SYMBOLS][i % DEFLATE_SYMBOLS] = 0;
    for (int i = t; i < DEFLATE_SYMBOLS; i += DEFLATE_THREADS) len[i] = 0;
    for (int i = t; i < DEFLATE_HEADER_WORDS; i += DEFLATE_THREADS) header[i] = 0;
    if (t == 0) used = 0;
    __syncthreads();
    // HISTOGRAM, one per filter: thread t reads bytes t, t + 256, … of each row — neighbouring threads
    // neighbouring bytes, so the reads coalesce.
    for (int r = 0; r < rows; r++) {
        for (int c = t; c <= width; c += DEFLATE_THREADS) {
            for (int k = 0; k < DEFLATE_FILTERS; k++) atomicAdd(&hists[k][data_byte(edges, width, row0 + r, c, k)], 1u);
        }
    }
    __syncthreads();
    // Each segment takes the filter whose bytes have the least entropy (what a Huffman code approaches):
    // None for noisy edges, Average or Paeth for smooth ones (docs/performance.md v0.27).
    if (t < DEFLATE_FILTERS) {
        float bits = 0.0f;
        for (int d = 0; d < 256; d++) {
            u32 h = hists[t][d];
            if (h != 0) bits -= h * __log2f((float)h / (float)n);
        }
        cost[t] = bits;
    }
    __syncthreads();
    if (t == 0) {
        kind = 0;
        for (int k = 1; k < DEFLATE_FILTERS; k++)
            if (cost[k] < cost[kind]) kind = k;
    }
    __syncthreads();
    u32* hist = hists[kind];
    // The checksum's sums of the chosen filter's bytes (a second pass: the segment is in the L2 cache).
    u64 sum = 0, weighted = 0;
    for (int r = 0; r < rows; r++) {
        const long long first = (long long)r * (width + 1);  // the row's filter byte
        for (int c = t; c <= width; c += DEFLATE_THREADS) {
            u32 d = data_byte(edges, width, row0 + r, c, kind);
            sum += d;
            weighted += (u64)(n - (first + c)) * d;
        }
    }
    sum = block_sum(sum, scratch);
    weighted = block_sum(weighted, scratch);
    if (t == 0) {
        hist[256] = 1;  // the end of block
        adler[2 * s] = (u32)(sum % ADLER_MOD);
        adler[2 * s + 1] = (u32)(weighted % ADLER_MOD);
        plans[s].filter = (u32)kind;
    }
    __syncthreads();
    // Each used symbol's place when sorted by (frequency, symbol): thread t ranks symbols t and t + 256.
    for (int sym = t; sym < DEFLATE_SYMBOLS; sym += DEFLATE_THREADS) {
        u32 f = hist[sym];
        if (f == 0) continue;
        int rank = 0;
        for (int o = 0; o < DEFLATE_SYMBOLS; o++) {
            u32 g = hist[o];
            rank += g != 0 && (g < f || (g == f && o < sym));
        }
        order[rank] = (u16)sym;
        atomicAdd(&used, 1);
    }
    __syncthreads();
    if (t == 0) {
        // At least two symbols: the filter bytes' 0 and the end of block.
        code_lengths(hist, order, used, DEFLATE_MAX_BITS, a, len);
        canonical_codes(len, DEFLATE_SYMBOLS, code);
        u32 nbits = 0;
        write_header(len, s == (int)gridDim.x - 1, header, &nbits);
        u64 total = nbits;
        for (int sym = 0; sym < DEFLATE_SYMBOLS; sym++) total += (u64)hist[sym] * len[sym];
        bits[s] = total;
        plans[s].header_bits = nbits;
    }
    __syncthreads();
    for (int i = t; i < DEFLATE_HEADER_WORDS; i += DEFLATE_THREADS) plans[s].header[i] = header[i];
    for (int i = t; i < DEFLATE_SYMBOLS; i += DEFLATE_THREADS) plans[s].code[i] = code[i];
}

// Writes bits into `out` from bit `at` on: the first and last words ORed in atomically (another thread may
// write the rest of them), the words between stored.
struct BitWriter {
    u32* out;
    u64 word;     // the output word being filled
    u64 acc;      // its bits (from bit 0), and the next word's once it spills over
    int filled;   // bits of `acc` in use
    bool first;
    __device__ BitWriter(u32* o, u64 at) : out(o), word(at / 32), acc(0), filled((int)(at % 32)), first(true) {}
    __device__ void put(u32 code) {  // a symbol's code from a Plan: reversed code, length in bits 16+
        acc |= (u64)(code & 0xffffu) << filled;
        filled += code >> 16;
        if (filled >= 32) {
            if (first) atomicOr(out + word, (u32)acc);
            else out[word] = (u32)acc;
            first = false;
            word++;
            acc >>= 32;
            filled -= 32;
        }
    }
    __device__ void finish() {
        if (filled > 0) atomicOr(out + word, (u32)acc);
    }
};

// deflate_write: one block per segment, after deflate_plan; `out` cleared. Writes the segment's block at its
// offset in the stream: the bits of the blocks before it.
extern "C" __global__ void deflate_write(const u8* edges, int width, int height, int rows_per_segment,
                                         const Plan* plans, const u64* bits, u32* out) {
    __shared__ u32 code[DEFLATE_SYMBOLS];
    __shared__ u64 scratch[DEFLATE_THREADS / 32];
    __shared__ u64 offsets[DEFLATE_THREADS];
    const int s = blockIdx.x, t = threadIdx.x;
    long long row0;
    int rows;
    segment_rows(s, height, rows_per_segment, &row0, &rows);
    const long long n = (long long)rows * (width + 1);
    const Plan* plan = plans + s;
    const int kind = (int)plan->filter;

    u64 before = 0;
    for (int o = t; o < s; o += DEFLATE_THREADS) before += bits[o];
    before = block_sum(before, scratch);
    for (int i = t; i < DEFLATE_SYMBOLS; i += DEFLATE_THREADS) code[i] = plan->code[i];
    // The header, a word a thread.
    const u32 header_bits = plan->header_bits;
    for (u32 w = t; w * 32 < header_bits; w += DEFLATE_THREADS) {
        BitWriter writer(out, before + 32ull * w);
        u32 v = plan->header[w], count = min(32u, header_bits - 32 * w);
        // Two 16-bit puts: BitWriter takes codes of at most 16 bits.
        u32 low = min(count, 16u);
        writer.put((v & 0xffffu & ((1u << low) - 1)) | (low << 16));
        if (count > 16) writer.put(((v >> 16) & ((1u << (count - 16)) - 1)) | ((count - 16) << 16));
        writer.finish();
    }
    __syncthreads();
    // Thread t's bytes: [k0, k1) of the segment's n; the last thread also writes the end of block.
    const long long per = (n + DEFLATE_THREADS - 1) / DEFLATE_THREADS;
    const long long k0 = min(n, t * per), k1 = min(n, k0 + per);
    const long long r0 = k0 / (width + 1);
    const int c0 = (int)(k0 % (width + 1));
    u64 mine = 0;
    {
        long long r = r0;
        int c = c0;
        for (long long k = k0; k < k1; k++) {
            u32 d = data_byte(edges, width, row0 + r, c, kind);
            mine += code[d] >> 16;
            if (++c > width) { c = 0; r++; }
        }
    }
    if (t == DEFLATE_THREADS - 1) mine += code[256] >> 16;
    // SCAN: an exclusive prefix sum of the threads' bit counts (Hillis–Steele over 256 values).
    offsets[t] = mine;
    __syncthreads();
    for (int o = 1; o < DEFLATE_THREADS; o *= 2) {
        u64 v = t >= o ? offsets[t - o] : 0;
        __syncthreads();
        offsets[t] += v;
        __syncthreads();
    }
    const u64 at = before + header_bits + offsets[t] - mine;
    // SCATTER: the codes at their bits.
    BitWriter writer(out, at);
    long long r = r0;
    int c = c0;
    for (long long k = k0; k < k1; k++) {
        u32 d = data_byte(edges, width, row0 + r, c, kind);
        writer.put(code[d]);
        if (++c > width) { c = 0; r++; }
    }
    if (t == DEFLATE_THREADS - 1) writer.put(code[256]);
    writer.finish();
}
