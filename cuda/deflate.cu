// deflate.cu — pattern: HISTOGRAM, a per-warp HASH CHAIN, then SCAN and SCATTER of variable-length codes. Not
// a Sobel variant: the PNG encoding of an edge image, done on the GPU by batch mode (core/src/gpu/slots.rs) and the
// image command, so that the CPU only writes the file.
//
// A PNG's image data is one zlib stream of deflate blocks (RFC 1951) over its rows, each row a filter byte
// and its pixels. Encoding it on the CPU (zlib level 5) took ~370 ms of a core per 4000×3000 photo's edges
// and ~9 ms per 2048×1024 test scene: most of what a CPU encoder spends is
// finding repeated strings (LZ77). On a photo's edges there are almost none (sensor noise), and coding each
// byte alone with a Huffman code fitted to its segment is as small as zlib's; on images with repeats (the tiled
// test scene, drawings, screenshots) the strings are most of the saving: Huffman alone came out 4–7× larger.
// So both are done here, the string search too.
//
// The image data is cut into segments of whole rows (about 64 kB), and each becomes one deflate block with
// codes of its own ("dynamic" block, BTYPE 2). Five kernels:
//
//   deflate_filter  HISTOGRAM (a block per segment): the threads count the segment's byte values in shared
//                   memory, once for each of PNG's five row filters; the filter whose bytes have the least
//                   entropy is the segment's (None on noisy edges, Sub or Paeth on smooth ones). Its bytes are
//                   written out (the stream's uncompressed data, `data`) and summed for the zlib checksum.
//                   Where those bytes alone would code to half their size or more (noise: photos' edges, ~0.59),
//                   the segment is coded byte by byte — string matching found nothing there that paid, and cost
//                   most of the time — and the kernels below skip it but for its
//                   code and its bytes' scatter.
//   deflate_hash    MAP: each position's hash of its next 4 bytes.
//   deflate_chain   HASH CHAIN (a warp per segment): for every position, the nearest earlier position within
//                   deflate's 32 kB window whose next 4 bytes hash alike — what zlib keeps in its `prev` array,
//                   as distances. The warp walks its segment 32 positions at a time (after the 32 kB before it,
//                   to fill its table), keeping the last position of each hash in shared memory;
//                   `__match_any_sync` finds the lanes of a step that share a hash, so each lane's link is the
//                   nearest lane below it with its hash, or the table's entry — the same chains a sequential
//                   encoder builds.
//   deflate_parse   LZ77 and HISTOGRAM (a block per segment): each thread parses its own run of the segment
//                   (~256 bytes) from its start: at each position the longest match among the first
//                   DEFLATE_CHAIN links of the chain and three distances images repeat at (1, a row, the
//                   thread's last match), one step of lazy matching as zlib does, a match of DEFLATE_MIN_MATCH
//                   or more bytes taken. A match stops at the run's end, so the runs are independent; each
//                   token (a byte, or a length and distance) is stored where it starts. The tokens' symbols
//                   are counted, and one thread builds the block's two codes (literals and lengths, distances):
//                   the symbols sorted by frequency, Moffat and Katajainen's in-place Huffman construction,
//                   lengths over deflate's 15-bit limit clipped and the Kraft sum repaired, canonical codes,
//                   and the block's header (the code lengths, themselves run-length and Huffman coded). It
//                   writes the header, the codes and the block's length in bits.
//   deflate_write   SCAN and SCATTER (a block per segment): the block's first bit is the sum of the lengths of
//                   the blocks before it. Each thread counts its tokens' bits, an exclusive scan over the block
//                   gives each its first bit, and each writes its codes there. Bits of one 32-bit output word
//                   can come from two threads (or two blocks), so a thread ORs its first and last word into
//                   memory (atomicOr, on a buffer cleared beforehand) and stores the words in between.
//
// Stitching: there is none to do afterwards. Every block's bit offset is known before it is written, the
// blocks are written at those offsets into one buffer, and only the last has its BFINAL bit set. A match may
// reach back into the segment before (the window is the stream's, not the block's). (A general-purpose GPU
// deflate, nvCOMP, compresses chunks independently and does not report where each chunk's bits end, so its
// chunks cannot be joined into the one stream PNG needs without decoding them.)
//
// What this gives up against zlib: a run's first bytes cannot continue the run before's match, and 16 links
// of a chain are tried where zlib level 5 tries up to 32. Measured on the test scene's edges: 1.01× the CPU
// encoder's file.
//
// Report section: goes beyond the report (which wrote its images with OpenCV on the CPU).
// Launch shape: deflate_filter, deflate_parse and deflate_write one block of DEFLATE_THREADS×1 threads per
// segment, deflate_chain one block of 32 threads per segment, deflate_hash one of DEFLATE_THREADS (grid =
// segments).
// Equivalence contract: the stream inflates (zlib, the png crate, Pillow, OpenCV) to rows of a filter byte
// (one filter per segment) and the row's `width` bytes of `edges` filtered with it, which a PNG decoder
// unfilters to exactly `edges`.

#define DEFLATE_THREADS 256      // threads of each segment's block (deflate_filter, deflate_parse, deflate_write)
#define DEFLATE_LITLEN 286       // the literal/length alphabet: bytes 0..255, 256 the end of block, 257..285 lengths
#define DEFLATE_DISTS 30         // the distance alphabet
#define DEFLATE_MAX_BITS 15      // deflate's longest code
#define DEFLATE_CL_SYMBOLS 19    // the code-length alphabet: lengths 0..15, and repeats 16, 17, 18
#define DEFLATE_CL_MAX_BITS 7    // its longest code
#define DEFLATE_LENGTHS 316      // code lengths a header sends at most: 286 literal/length codes, 30 distance codes
#define DEFLATE_HEADER_WORDS 72  // 2304 bits ≥ the largest header: 17 + 19·3 + 316·7
#define DEFLATE_FILTERS 5        // PNG's row filters: None, Sub, Up, Average, Paeth
#define DEFLATE_WINDOW 32768     // deflate's farthest distance
// The string search's settings, each overridable with -D to measure another (sizes were compared that way, the
// file built for the CPU by scripts/emulate/build.sh; the defaults below are what was kept, and why).
#ifndef DEFLATE_HASH_BITS
#define DEFLATE_HASH_BITS 12     // deflate_chain's table: 4096 last positions (16 kB of shared memory)
#endif
#ifndef DEFLATE_CHAIN
#define DEFLATE_CHAIN 16         // links of a chain deflate_parse tries (zlib level 5: up to 32)
#endif
#ifndef DEFLATE_MIN_MATCH
#define DEFLATE_MIN_MATCH 5      // the shortest match taken: 4-byte ones cost photos' edges 3–4 %
#endif
#define DEFLATE_MAX_MATCH 258    // deflate's longest
#ifndef DEFLATE_LAZY
#define DEFLATE_LAZY 32          // a match shorter than this is checked against the next position's (zlib: 16 at level 5)
#endif
#ifndef DEFLATE_GIVE_UP
#define DEFLATE_GIVE_UP 16       // after this many positions in a row without a match, a thread tries one link
#endif
#ifndef DEFLATE_STRINGS_BELOW
#define DEFLATE_STRINGS_BELOW 0.5f  // strings are looked for where bytes alone would code to less than this share
#endif
#ifndef DEFLATE_NICE
#define DEFLATE_NICE 128         // a chain's walk stops at a match this long (zlib level 5: 32)
#endif
#define ADLER_MOD 65521u

// u8 comes from sobel.cuh.
#include "sobel.cuh"

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// One segment's block, as deflate_filter and deflate_parse leave it for deflate_write.
struct Plan {
    u32 filter;   // the PNG row filter the segment's rows use (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth)
    u32 strings;  // whether deflate_parse looks for repeated strings in the segment (else bytes alone)
    u32 counts[256];  // how often each byte value occurs in the segment's data (deflate_filter's histogram)
    u32 header_bits;
    u32 header[DEFLATE_HEADER_WORDS];
    // Each symbol's code, bit-reversed (deflate sends a code's high bit first but packs bits from the low
    // end of each byte), with its length in bits 16 and up: literals and lengths, then distances.
    u32 code[DEFLATE_LITLEN];
    u32 dist_code[DEFLATE_DISTS];
};

// The bytes [*k0, *k1) of the stream's `n` that segment `s` holds (`segment_bytes` each, the last fewer).
__device__ void segment_span(int s, long long n, long long segment_bytes, long long* k0, long long* k1) {
    *k0 = (long long)s * segment_bytes;
    *k1 = min(n, *k0 + segment_bytes);
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

// Byte c of a row's image data: its filter byte (c = 0), or a filtered pixel.
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

// The block header (BFINAL on the last block): the `nlit` literal/length code lengths and the `ndist`
// distance code lengths, run-length coded together with the code-length alphabet, whose own code comes first.
__device__ void write_header(const u8* lit_len, int nlit, const u8* dist_len, int ndist, bool last, u32* words,
                             u32* nbits) {
    __shared__ u8 lengths[DEFLATE_LENGTHS];
    __shared__ u8 sym[DEFLATE_LENGTHS], extra[DEFLATE_LENGTHS];
    const int total = nlit + ndist;
    for (int s = 0; s < nlit; s++) lengths[s] = lit_len[s];
    for (int s = 0; s < ndist; s++) lengths[nlit + s] = dist_len[s];
    // Run-length coding: 17 and 18 for runs of zeros (3–10, 11–138), 16 for 3–6 repeats of the last length.
    // (The two codes' lengths are one sequence: a run may cross from one into the other.)
    int m = 0;
    for (int i = 0; i < total;) {
        int v = lengths[i], run = 1;
        while (i + run < total && lengths[i + run] == v) run++;
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
    put_bits(words, nbits, nlit - 257, 5);    // HLIT
    put_bits(words, nbits, ndist - 1, 5);     // HDIST
    put_bits(words, nbits, sent - 4, 4);      // HCLEN
    for (int j = 0; j < sent; j++) put_bits(words, nbits, len[cl_order[j]], 3);
    for (int j = 0; j < m; j++) {
        put_code(words, nbits, code[sym[j]]);
        if (sym[j] >= 16) put_bits(words, nbits, extra[j], cl_extra_bits[sym[j] - 16]);
    }
}

// deflate_filter: one block per segment (rows [s·rows_per_segment, …) of the `width × height` image `edges`).
// Chooses the segment's row filter (plans[s].filter), writes its image data into `data` (the stream's
// uncompressed bytes, at the segment's offset) and adler[2s], adler[2s + 1] (Σ d and Σ (n − i)·d of the
// segment's n bytes d_i, filter bytes included, mod 65521).
extern "C" __global__ void deflate_filter(const u8* edges, int width, int height, int rows_per_segment, Plan* plans,
                                          u8* data, u32* adler) {
    __shared__ u32 hists[DEFLATE_FILTERS][256];
    __shared__ u64 scratch[DEFLATE_THREADS / 32];
    __shared__ float cost[DEFLATE_FILTERS];
    __shared__ int kind;
    const int s = blockIdx.x, t = threadIdx.x;
    const long long row0 = (long long)s * rows_per_segment;
    const int rows = (int)min((long long)rows_per_segment, height - row0);
    const long long n = (long long)rows * (width + 1);
    u8* out = data + row0 * (width + 1);

    for (int i = t; i < DEFLATE_FILTERS * 256; i += DEFLATE_THREADS) hists[i / 256][i % 256] = 0;
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
    // None for noisy edges, Average or Paeth for smooth ones.
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
        plans[s].filter = (u32)kind;
        // Bytes that a Huffman code alone takes to half their size or more are noise (photos' edges: ~0.59);
        // string matching finds nothing there that pays (0.4 % on photos' edges) and costs most of the
        // GPU's time, so deflate_parse codes them byte by byte. Images with repeats (the tiled scene: 0.37)
        // and smooth ones come out under it.
        plans[s].strings = cost[kind] < DEFLATE_STRINGS_BELOW * 8.0f * (float)n;
    }
    __syncthreads();
    // The chosen filter's counts: the literal code of a segment coded byte by byte, without a second count.
    for (int i = t; i < 256; i += DEFLATE_THREADS) plans[s].counts[i] = hists[kind][i];
    // The chosen filter's bytes, written out and summed for the checksum (a second pass: the segment is in the
    // L2 cache).
    u64 sum = 0, weighted = 0;
    for (int r = 0; r < rows; r++) {
        const long long first = (long long)r * (width + 1);  // the row's filter byte
        for (int c = t; c <= width; c += DEFLATE_THREADS) {
            u32 d = data_byte(edges, width, row0 + r, c, kind);
            out[first + c] = (u8)d;
            sum += d;
            weighted += (u64)(n - (first + c)) * d;
        }
    }
    sum = block_sum(sum, scratch);
    weighted = block_sum(weighted, scratch);
    if (t == 0) {
        adler[2 * s] = (u32)(sum % ADLER_MOD);
        adler[2 * s + 1] = (u32)(weighted % ADLER_MOD);
    }
}

// The hash of the 4 bytes of `data` (n bytes) from `i` on, those past the end taken as 0.
__device__ u32 hash4(const u8* data, long long n, long long i) {
    u32 key = 0;
    for (int k = 0; k < 4; k++) key |= (i + k < n ? (u32)data[i + k] : 0u) << (8 * k);
    return (key * 2654435761u) >> (32 - DEFLATE_HASH_BITS);
}

// Whether segment s or one of the `ahead` after it looks for strings (of `segments`). A segment's matches reach
// back into the segment before it at most (a segment holds more than the 32 kB window: 64 kB of whole rows, or
// one longer row), so deflate_parse on segment s reads the chain links (prev) of segments s − 1 and s, which
// deflate_chain writes where wants_strings(…, 1) holds; deflate_chain on segment s reads the hashes of s − 1 and
// s, which deflate_hash writes where wants_strings(…, 2) holds. Elsewhere neither runs (photos' edges).
__device__ bool wants_strings(const Plan* plans, int segments, long long s, int ahead) {
    for (long long t = s; t <= s + ahead && t < segments; t++)
        if (plans[t].strings) return true;
    return false;
}

// deflate_hash: MAP, a block per segment that wants_strings(…, 2), after deflate_filter: hashes[i] = hash4 at i
// for the segment's positions. Computed apart so that deflate_chain's sequential walk reads one coalesced word a
// lane a step, loaded ahead.
extern "C" __global__ void deflate_hash(const u8* __restrict__ data, long long n, long long segment_bytes,
                                        const Plan* plans, u16* __restrict__ hashes) {
    const int s = blockIdx.x;
    if (!wants_strings(plans, gridDim.x, s, 2)) return;  // the whole block returns
    long long k0, k1;
    segment_span(s, n, segment_bytes, &k0, &k1);
    for (long long i = k0 + threadIdx.x; i < k1; i += blockDim.x) hashes[i] = (u16)hash4(data, n, i);
}

// deflate_chain: one warp per segment that wants_strings(…, 1), after deflate_hash. prev[i], for each of the
// segment's positions i:
// the distance back to the nearest earlier position with the same hash, or 0 when there is none within the
// window. Positions [k0 − window, k0) are walked first to fill the table (their links are their own segment's).
// The walk is sequential, 32 positions a step: the hashes of DEFLATE_AHEAD steps are loaded at once, so that one
// load's latency is paid per DEFLATE_AHEAD steps (measured: 1.75 → 0.98 ms a 2048×1024 scene, H100).
#define DEFLATE_AHEAD 8
extern "C" __global__ void deflate_chain(const u16* __restrict__ hashes, long long n, long long segment_bytes,
                                         const Plan* plans, u16* __restrict__ prev) {
    __shared__ int table[1 << DEFLATE_HASH_BITS];  // per hash: the last position seen, from `from`, or −1
    const int s = blockIdx.x, lane = threadIdx.x;
    if (!wants_strings(plans, gridDim.x, s, 1)) return;  // the whole block (one warp) returns
    long long k0, k1;
    segment_span(s, n, segment_bytes, &k0, &k1);
    const long long from = max(0LL, k0 - DEFLATE_WINDOW);
    for (int i = lane; i < (1 << DEFLATE_HASH_BITS); i += 32) table[i] = -1;
    __syncwarp();
    for (long long r0 = from; r0 < k1; r0 += 32 * DEFLATE_AHEAD) {
        u32 ahead[DEFLATE_AHEAD];
#pragma unroll
        for (int k = 0; k < DEFLATE_AHEAD; k++) {
            const long long i = r0 + 32 * k + lane;
            ahead[k] = i < k1 ? hashes[i] : 0u;
        }
#pragma unroll
        for (int k = 0; k < DEFLATE_AHEAD; k++) {
            const long long r = r0 + 32 * k, i = r + lane;
            const bool valid = i < k1;
            const u32 h = ahead[k];
            // The lanes of this step with the same hash (the others' keys are distinct, above any hash).
            const u32 same = __match_any_sync(0xffffffffu, valid ? h : (1u << 31) | (u32)lane);
            const u32 below = same & ((1u << lane) - 1);
            if (valid && i >= k0) {
                long long p = below != 0 ? r + (31 - __clz(below)) : table[h] >= 0 ? from + table[h] : -1;
                long long d = p >= 0 ? i - p : 0;
                prev[i] = d <= DEFLATE_WINDOW ? (u16)d : (u16)0;  // 32768 fits 16 bits
            }
            __syncwarp();
            if (valid && (same >> lane) == 1u) table[h] = (int)(i - from);  // the highest lane of its hash
            __syncwarp();
        }
    }
}

// A match's length as deflate codes it: its symbol (257–285), extra bits and their value.
__device__ void length_symbol(int length, u32* sym, u32* nbits, u32* value) {
    const int l = length - 3;
    if (length == DEFLATE_MAX_MATCH) { *sym = 285; *nbits = 0; *value = 0; }
    else if (l < 8) { *sym = 257 + l; *nbits = 0; *value = 0; }
    else {
        const int e = 29 - __clz(l);  // ⌊log2 l⌋ − 2
        *sym = 257 + 4 * (e + 1) + ((l >> e) & 3); *nbits = e; *value = l & ((1 << e) - 1);
    }
}

// A match's distance as deflate codes it: its symbol (0–29), extra bits and their value.
__device__ void distance_symbol(int distance, u32* sym, u32* nbits, u32* value) {
    const int x = distance - 1;
    if (x < 4) { *sym = x; *nbits = 0; *value = 0; }
    else {
        const int e = 30 - __clz(x);  // ⌊log2 x⌋ − 1
        *sym = 2 * e + 2 + ((x >> e) & 1); *nbits = e; *value = x & ((1 << e) - 1);
    }
}

// How many bytes from `p` on repeat those `d` back, at most `most`.
__device__ int match_length(const u8* data, long long p, int d, int most) {
    int length = 0;
    while (length < most && __ldg(data + p - d + length) == __ldg(data + p + length)) length++;
    return length;
}

// The longest match at `p` that ends by `end` (0 when under DEFLATE_MIN_MATCH): tried at distances 1, a row
// (`row`), the thread's last match's (`last`), and the first DEFLATE_CHAIN links of p's hash chain, until one of
// DEFLATE_NICE bytes is found. The nearest of equally long ones is kept (the first tried).
__device__ int longest_match(const u8* data, const u16* prev, long long p, long long end, int row, int last, int depth,
                             int* dist) {
    const int most = (int)min((long long)DEFLATE_MAX_MATCH, end - p);
    int best = 0;
    *dist = 0;
    if (most < DEFLATE_MIN_MATCH) return 0;
    auto consider = [&](long long d) {
        if (d <= 0 || d > p || d > DEFLATE_WINDOW || best >= most) return;
        if (__ldg(data + p - d + best) != __ldg(data + p + best)) return;  // cannot be longer (zlib's quick test)
        const int length = match_length(data, p, (int)d, most);
        if (length > best) { best = length; *dist = (int)d; }
    };
    consider(1);
    consider(row);
    consider(last);
    long long j = p;
    for (int k = 0; k < depth && best < most && best < DEFLATE_NICE; k++) {
        const u32 d = __ldg(prev + j);
        if (d == 0 || d > j) break;  // (d > j only for a link never written: wants_strings says there is none)
        j -= d;
        if (p - j > DEFLATE_WINDOW) break;
        consider(p - j);
    }
    return best >= DEFLATE_MIN_MATCH ? best : 0;
}

// Thread t's run of the segment [k0, k1): [*c0, *c1), the same in deflate_parse and deflate_write.
__device__ void thread_run(long long k0, long long k1, int t, long long* c0, long long* c1) {
    const long long per = (k1 - k0 + DEFLATE_THREADS - 1) / DEFLATE_THREADS;
    *c0 = min(k1, k0 + t * per);
    *c1 = min(k1, *c0 + per);
}

// A token as deflate_parse stores it, 16 bits at its first byte: a literal byte (bit 15 clear), or bit 15 and the
// length − 3, with the distance − 1 in the next byte's entry (a match covers 5 bytes or more, so that entry is
// never a token's own). The tokens reuse deflate_hash's buffer, whose hashes deflate_chain has finished with.
#define MATCH_FLAG 0x8000u

// Ranks the used symbols of `freq` (n of them) by (frequency, symbol) into `order`, counting them in `used`.
__device__ void rank_symbols(const u32* freq, int n, u16* order, int* used) {
    for (int sym = threadIdx.x; sym < n; sym += DEFLATE_THREADS) {
        u32 f = freq[sym];
        if (f == 0) continue;
        int rank = 0;
        for (int o = 0; o < n; o++) {
            u32 g = freq[o];
            rank += g != 0 && (g < f || (g == f && o < sym));
        }
        order[rank] = (u16)sym;
        atomicAdd(used, 1);
    }
}

// deflate_parse: one block per segment, after deflate_chain. Each thread parses its run of the segment's bytes
// of `data` (the stream's n) into `tokens` (each at its first byte), the symbols are counted, and thread 0
// builds the block's codes and header into plans[s] and its length in bits into bits[s].
extern "C" __global__ void deflate_parse(const u8* __restrict__ data, long long n, long long segment_bytes, int width,
                                         const u16* __restrict__ prev, u16* __restrict__ tokens, Plan* plans, u64* bits) {
    __shared__ u32 lit_freq[DEFLATE_LITLEN], dist_freq[DEFLATE_DISTS];
    __shared__ u16 lit_order[DEFLATE_LITLEN], dist_order[DEFLATE_DISTS];
    __shared__ u32 a[DEFLATE_LITLEN];
    __shared__ u8 lit_len[DEFLATE_LITLEN], dist_len[DEFLATE_DISTS];
    __shared__ u32 lit_code[DEFLATE_LITLEN], dist_code[DEFLATE_DISTS];
    __shared__ u32 header[DEFLATE_HEADER_WORDS];
    __shared__ u64 scratch[DEFLATE_THREADS / 32];
    __shared__ int lit_used, dist_used, fake[2];
    const int s = blockIdx.x, t = threadIdx.x;
    long long k0, k1;
    segment_span(s, n, segment_bytes, &k0, &k1);
    for (int i = t; i < DEFLATE_LITLEN; i += DEFLATE_THREADS) { lit_freq[i] = 0; lit_len[i] = 0; }
    for (int i = t; i < DEFLATE_DISTS; i += DEFLATE_THREADS) { dist_freq[i] = 0; dist_len[i] = 0; }
    for (int i = t; i < DEFLATE_HEADER_WORDS; i += DEFLATE_THREADS) header[i] = 0;
    if (t == 0) { lit_used = 0; dist_used = 0; fake[0] = fake[1] = -1; }
    __syncthreads();

    // LZ77: greedy, with one step of lazy matching — a short match is given up for a literal when the next
    // position starts a longer one.
    long long c0, c1;
    thread_run(k0, k1, t, &c0, &c1);
    u64 extra_bits = 0;
    if (!plans[s].strings) {
        // A segment coded byte by byte has its counts from deflate_filter and no tokens (deflate_write reads its
        // bytes).
        for (int i = t; i < 256; i += DEFLATE_THREADS) lit_freq[i] = plans[s].counts[i];
    } else {
        auto literal = [&](long long p) {
            tokens[p] = data[p];
            atomicAdd(&lit_freq[data[p]], 1u);
        };
        int last = 0, misses = 0;
        for (long long p = c0; p < c1;) {
            const int depth = misses < DEFLATE_GIVE_UP ? DEFLATE_CHAIN : 1;
            int dist, length = longest_match(data, prev, p, c1, width + 1, last, depth, &dist);
            if (length != 0 && length < DEFLATE_LAZY && p + 1 < c1) {
                int next_dist, next = longest_match(data, prev, p + 1, c1, width + 1, last, depth, &next_dist);
                if (next > length) {
                    literal(p++);
                    length = next;
                    dist = next_dist;
                }
            }
            if (length == 0) {
                misses++;
                literal(p++);
                continue;
            }
            tokens[p] = (u16)(MATCH_FLAG | (u32)(length - 3));
            tokens[p + 1] = (u16)(dist - 1);
            u32 sym, nbits, value;
            length_symbol(length, &sym, &nbits, &value);
            atomicAdd(&lit_freq[sym], 1u);
            extra_bits += nbits;
            distance_symbol(dist, &sym, &nbits, &value);
            atomicAdd(&dist_freq[sym], 1u);
            extra_bits += nbits;
            last = dist;
            misses = 0;
            p += length;
        }
    }
    extra_bits = block_sum(extra_bits, scratch);  // (its barriers also order the counts before what follows)
    if (t == 0) {
        lit_freq[256] = 1;  // the end of block
        // Huffman codes need two symbols at least: a block with fewer than two distances used (none, on noisy
        // edges) gets one-count stand-ins, left out of the block's length below.
        int used = 0;
        for (int d = 0; d < DEFLATE_DISTS; d++) used += dist_freq[d] != 0;
        for (int d = 0; d < 2 && used < 2; d++)
            if (dist_freq[d] == 0) { dist_freq[d] = 1; fake[d] = d; used++; }
    }
    __syncthreads();
    rank_symbols(lit_freq, DEFLATE_LITLEN, lit_order, &lit_used);
    rank_symbols(dist_freq, DEFLATE_DISTS, dist_order, &dist_used);
    __syncthreads();
    if (t == 0) {
        // At least two literal/length symbols: the end of block and the segment's first byte.
        code_lengths(lit_freq, lit_order, lit_used, DEFLATE_MAX_BITS, a, lit_len);
        code_lengths(dist_freq, dist_order, dist_used, DEFLATE_MAX_BITS, a, dist_len);
        canonical_codes(lit_len, DEFLATE_LITLEN, lit_code);
        canonical_codes(dist_len, DEFLATE_DISTS, dist_code);
        int nlit = DEFLATE_LITLEN, ndist = DEFLATE_DISTS;
        while (lit_len[nlit - 1] == 0) nlit--;  // ≥ 257: the end of block has a code
        while (dist_len[ndist - 1] == 0) ndist--;
        u32 nbits = 0;
        write_header(lit_len, nlit, dist_len, ndist, s == (int)gridDim.x - 1, header, &nbits);
        u64 total = nbits + extra_bits;
        for (int sym = 0; sym < DEFLATE_LITLEN; sym++) total += (u64)lit_freq[sym] * lit_len[sym];
        for (int sym = 0; sym < DEFLATE_DISTS; sym++)
            if (fake[0] != sym && fake[1] != sym) total += (u64)dist_freq[sym] * dist_len[sym];
        bits[s] = total;
        plans[s].header_bits = nbits;
    }
    __syncthreads();
    for (int i = t; i < DEFLATE_HEADER_WORDS; i += DEFLATE_THREADS) plans[s].header[i] = header[i];
    for (int i = t; i < DEFLATE_LITLEN; i += DEFLATE_THREADS) plans[s].code[i] = lit_code[i];
    for (int i = t; i < DEFLATE_DISTS; i += DEFLATE_THREADS) plans[s].dist_code[i] = dist_code[i];
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
    __device__ void put(u32 code) {  // a code from a Plan: reversed code, length in bits 16+ (at most 16)
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

// Calls emit(code) for the codes and extra bits (value | bits << 16) of [c0, c1), in order: the tokens, or where
// the segment has no `strings`, its bytes.
template <class Emit>
__device__ void each_code(const u8* data, const u16* tokens, bool strings, long long c0, long long c1,
                          const u32* lit_code, const u32* dist_code, Emit emit) {
    if (!strings) {
        for (long long p = c0; p < c1; p++) emit(lit_code[data[p]]);
        return;
    }
    for (long long p = c0; p < c1;) {
        const u32 token = tokens[p];
        if (token < MATCH_FLAG) { emit(lit_code[token]); p++; continue; }
        const int length = (int)(token & 0xffu) + 3, dist = (int)tokens[p + 1] + 1;
        u32 sym, nbits, value;
        length_symbol(length, &sym, &nbits, &value);
        emit(lit_code[sym]);
        if (nbits != 0) emit(value | nbits << 16);
        distance_symbol(dist, &sym, &nbits, &value);
        emit(dist_code[sym]);
        if (nbits != 0) emit(value | nbits << 16);
        p += length;
    }
}

// deflate_write: one block per segment, after deflate_parse; `out` cleared. Writes the segment's block at its
// offset in the stream: the bits of the blocks before it.
extern "C" __global__ void deflate_write(const u8* __restrict__ data, long long n, long long segment_bytes,
                                         const u16* __restrict__ tokens, const Plan* plans, const u64* bits, u32* out) {
    __shared__ u32 lit_code[DEFLATE_LITLEN], dist_code[DEFLATE_DISTS];
    __shared__ u64 scratch[DEFLATE_THREADS / 32];
    __shared__ u64 offsets[DEFLATE_THREADS];
    const int s = blockIdx.x, t = threadIdx.x;
    long long k0, k1;
    segment_span(s, n, segment_bytes, &k0, &k1);
    const Plan* plan = plans + s;

    u64 before = 0;
    for (int o = t; o < s; o += DEFLATE_THREADS) before += bits[o];
    before = block_sum(before, scratch);
    for (int i = t; i < DEFLATE_LITLEN; i += DEFLATE_THREADS) lit_code[i] = plan->code[i];
    for (int i = t; i < DEFLATE_DISTS; i += DEFLATE_THREADS) dist_code[i] = plan->dist_code[i];
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
    // Thread t's tokens: those of its run; the last thread also writes the end of block.
    long long c0, c1;
    thread_run(k0, k1, t, &c0, &c1);
    u64 mine = 0;
    const bool strings = plan->strings != 0;
    each_code(data, tokens, strings, c0, c1, lit_code, dist_code, [&](u32 code) { mine += code >> 16; });
    if (t == DEFLATE_THREADS - 1) mine += lit_code[256] >> 16;
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
    each_code(data, tokens, strings, c0, c1, lit_code, dist_code, [&](u32 code) { writer.put(code); });
    if (t == DEFLATE_THREADS - 1) writer.put(lit_code[256]);
    writer.finish();
}
