// deflate.cu on the CPU: deflate_main IN OUT WIDTH HEIGHT, IN the edge image (WIDTH·HEIGHT bytes), OUT its PNG image
// data as one zlib stream. Launches the five kernels as src/gpu/patterns/deflate.rs does (a block after another, each
// block's threads as CPU threads: shim.h's EMU_BLOCK) and wraps the stream as src/gpu/slots.rs does: zlib's header,
// the blocks, the Adler-32 combined from the segments' sums. Built with -fsanitize=address by deflate_check.py, so
// a read or write outside a buffer ends the run.
#include <vector>
static unsigned adler32(const std::vector<unsigned>& sums, const std::vector<unsigned long long>& lengths) {
    const unsigned long long mod = 65521;
    unsigned long long a = 1, b = 0, after = 0;
    for (size_t s = lengths.size(); s-- > 0;) {
        unsigned long long sum = sums[2 * s], weighted = sums[2 * s + 1];
        a = (a + sum) % mod;
        b = (b + weighted + (after % mod) * sum) % mod;
        after += lengths[s];
    }
    b = (b + after) % mod;
    return (unsigned)(b << 16 | a);
}
int main(int argc, char** argv) {
    if (argc < 5) { fprintf(stderr, "args\n"); return 2; }
    const int w = atoi(argv[3]), h = atoi(argv[4]);
    const size_t pixels = (size_t)w * h, row = (size_t)w + 1, n = row * h;
    std::vector<unsigned char> edges(pixels);
    FILE* fi = fopen(argv[1], "rb"); if (fread(edges.data(), 1, pixels, fi) != pixels) return 3; fclose(fi);
    // As deflate.rs's Scratch: segments of whole rows, about 64 kB.
    const int rows_per_segment = (int)std::max<size_t>(65536 / row, 1);
    const int segments = (int)((h + rows_per_segment - 1) / rows_per_segment);
    const long long segment_bytes = (long long)row * rows_per_segment;
    const size_t words = (segments * (32 * DEFLATE_HEADER_WORDS + DEFLATE_MAX_BITS) + DEFLATE_MAX_BITS * n + 31) / 32 + 1;
    std::vector<Plan> plans(segments);
    std::vector<unsigned char> data(n);
    // Hashes and links start as garbage, as device memory does: a hash read before deflate_hash wrote it indexes
    // deflate_chain's table out of bounds (AddressSanitizer ends the run).
    std::vector<unsigned short> hashes(n, 0xFFFF), prev(n, 0xFFFF);
    std::vector<unsigned> adler(2 * segments), stream(words, 0);
    std::vector<unsigned long long> bits(segments);
    gridDim = {(unsigned)segments, 1, 1};
    auto launch = [&](unsigned threads, auto kernel) {
        blockDim = {threads, 1, 1};
        for (int s = 0; s < segments; ++s) emu_run_block(threads, [&, s] { blockIdx = {(unsigned)s, 0, 0}; kernel(); });
    };
    launch(DEFLATE_THREADS, [&] { deflate_filter(edges.data(), w, h, rows_per_segment, plans.data(), data.data(), adler.data()); });
    launch(DEFLATE_THREADS, [&] { deflate_hash(data.data(), (long long)n, segment_bytes, plans.data(), hashes.data()); });
    launch(32, [&] { deflate_chain(hashes.data(), (long long)n, segment_bytes, plans.data(), prev.data()); });
    launch(DEFLATE_THREADS, [&] {
        deflate_parse(data.data(), (long long)n, segment_bytes, w, prev.data(), hashes.data(), plans.data(), bits.data());
    });
    launch(DEFLATE_THREADS, [&] { deflate_write(data.data(), (long long)n, segment_bytes, hashes.data(), plans.data(), bits.data(), stream.data()); });
    unsigned long long total = 0;
    std::vector<unsigned long long> lengths;
    for (int s = 0; s < segments; ++s) {
        total += bits[s];
        lengths.push_back((unsigned long long)row * std::min(rows_per_segment, h - s * rows_per_segment));
    }
    const size_t bytes = (total + 7) / 8;
    if (bytes > 4 * words) { fprintf(stderr, "stream of %zu bytes past its buffer\n", bytes); return 4; }
    const unsigned a = adler32(adler, lengths);
    const unsigned char head[2] = {0x78, 0x01}, tail[4] = {(unsigned char)(a >> 24), (unsigned char)(a >> 16),
                                                          (unsigned char)(a >> 8), (unsigned char)a};
    FILE* fo = fopen(argv[2], "wb");
    fwrite(head, 1, 2, fo);
    fwrite(stream.data(), 1, bytes, fo);
    fwrite(tail, 1, 4, fo);
    fclose(fo);
    return 0;
}
