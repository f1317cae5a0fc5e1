//! `cuda/deflate.cu` — HISTOGRAM, a per-warp HASH CHAIN, then SCAN and SCATTER of variable-length codes: an
//! edge image's PNG image data filtered and deflated on the GPU (repeated strings found as zlib finds them), a
//! block with a row filter and codes of its own per segment of rows, written at known bit offsets into one
//! stream (no stitching afterwards). Not a Sobel variant: batch mode's slots
//! ([`crate::gpu::slots`]) run it after gpu-strip, so that the CPU only writes the file.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

use super::{Dims, KernelSource};
use crate::gpu::GpuError;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "deflate", source: include_str!("../../../../cuda/deflate.cu") };

/// deflate.cu's DEFLATE_THREADS: threads of each segment's block.
pub const THREADS: u32 = 256;
/// deflate.cu's DEFLATE_LITLEN: the literal/length alphabet (bytes, the end of block, match lengths).
pub const LITLEN: usize = 286;
/// deflate.cu's DEFLATE_DISTS: the distance alphabet.
pub const DISTS: usize = 30;
/// deflate.cu's DEFLATE_HEADER_WORDS: 32-bit words of a block's largest header.
pub const HEADER_WORDS: usize = 72;
/// deflate.cu's DEFLATE_MAX_BITS: the longest code.
pub const MAX_BITS: usize = 15;
/// Bytes of deflate.cu's `struct Plan`: the filter, whether strings are matched, the byte counts, header_bits,
/// the header, the two codes.
pub const PLAN_BYTES: usize = 4 * (3 + 256 + HEADER_WORDS + LITLEN + DISTS);
/// Threads of deflate_chain's blocks: one warp per segment.
pub const CHAIN_THREADS: u32 = 32;
/// Bytes of image data (rows of a filter byte and the pixels) a segment holds at most, unless one row is
/// longer: zlib's window, and the block size GPU deflate implementations choose (nvCOMP's default).
pub const SEGMENT_BYTES: usize = 1 << 16;

/// The loaded kernels.
pub struct Deflate {
    filter: CudaFunction,
    hash: CudaFunction,
    chain: CudaFunction,
    parse: CudaFunction,
    write: CudaFunction,
}

/// How an image is cut into segments, and the device buffers for it.
pub struct Scratch {
    d: Dims,
    rows_per_segment: i32,
    segments: usize,
    plans: CudaSlice<u8>,
    /// The stream's uncompressed bytes (rows of a filter byte and the filtered pixels), deflate_filter's.
    data: CudaSlice<u8>,
    /// Per byte of `data`: the hash of its next 4 bytes (deflate_hash's), then, once deflate_chain has read
    /// them, the token starting there if one does (deflate_parse's: 16 bits, a match's distance in the next).
    hashes_then_tokens: CudaSlice<u16>,
    /// Per byte of `data`: the distance back along its hash chain (deflate_chain's), 0 for none.
    prev: CudaSlice<u16>,
    /// Each segment's block length in bits.
    pub bits: CudaSlice<u64>,
    /// Each segment's Adler-32 sums (Σ d, Σ (n − i)·d, mod 65521).
    pub adler: CudaSlice<u32>,
    /// The deflate stream, as 32-bit words (cleared before [`Deflate::write`]).
    pub stream: CudaSlice<u32>,
    /// `bits` copied back, in pinned memory (the copies are asynchronous, and the host reads them after the one
    /// synchronisation of `gpu::png_data::deflate_on_device`).
    pub host_bits: PinnedHostSlice<u64>,
    /// `adler` copied back, likewise.
    pub host_adler: PinnedHostSlice<u32>,
}

impl Scratch {
    /// Buffers for a `d`-sized image (uninitialised: the kernels write the plans, bits, sums, data, links
    /// and tokens before any is read — deflate_write reads tokens only where deflate_parse wrote one — and the
    /// stream is cleared before deflate_write ORs into it).
    pub fn alloc(stream: &Arc<CudaStream>, d: Dims) -> Result<Scratch, GpuError> {
        let row = d.width as usize + 1;
        let rows_per_segment = (SEGMENT_BYTES / row).max(1);
        let segments = (d.height as usize).div_ceil(rows_per_segment);
        let words = Self::stream_words(d, segments);
        let bytes = row * d.height as usize;
        // SAFETY: see above.
        let (plans, bits, adler, words, data, hashes_then_tokens, prev) = unsafe {
            (
                stream.alloc::<u8>(segments * PLAN_BYTES)?,
                stream.alloc::<u64>(segments)?,
                stream.alloc::<u32>(2 * segments)?,
                stream.alloc::<u32>(words)?,
                stream.alloc::<u8>(bytes)?,
                stream.alloc::<u16>(bytes)?,
                stream.alloc::<u16>(bytes)?,
            )
        };
        let rows_per_segment = rows_per_segment as i32;
        // SAFETY (pinned allocations): written by the copies back before the host reads them.
        let (host_bits, host_adler) = unsafe {
            (
                stream.context().alloc_pinned_with_flags::<u64>(segments, 0)?,
                stream.context().alloc_pinned_with_flags::<u32>(2 * segments, 0)?,
            )
        };
        Ok(Scratch {
            d,
            rows_per_segment,
            segments,
            plans,
            bits,
            adler,
            stream: words,
            data,
            hashes_then_tokens,
            prev,
            host_bits,
            host_adler,
        })
    }

    /// The stream's largest size in 32-bit words: every block's largest header and every byte at the longest
    /// code (the end of block too), and a word for the last one's spill. (A match covers 5 bytes or more with at
    /// most 48 bits: its length's code and 5 extra bits, its distance's code and 13 — under a literal's 15 a byte.)
    fn stream_words(d: Dims, segments: usize) -> usize {
        let bytes = (d.width as usize + 1) * d.height as usize;
        let bits = segments * (32 * HEADER_WORDS + MAX_BITS) + MAX_BITS * bytes;
        bits.div_ceil(32) + 1
    }

    /// The image these buffers are for.
    pub fn dims(&self) -> Dims {
        self.d
    }

    /// Segments the image is cut into.
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// Rows a segment holds (the last may hold fewer).
    pub fn rows_per_segment(&self) -> usize {
        self.rows_per_segment as usize
    }

    /// Bytes of the stream's uncompressed data (rows of a filter byte and the pixels), and those a segment holds.
    fn data_bytes(&self) -> (i64, i64) {
        let row = self.d.width as i64 + 1;
        (row * self.d.height as i64, row * self.rows_per_segment as i64)
    }
}

impl Deflate {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Deflate, DriverError> {
        Ok(Deflate {
            filter: m.load_function("deflate_filter")?,
            hash: m.load_function("deflate_hash")?,
            chain: m.load_function("deflate_chain")?,
            parse: m.load_function("deflate_parse")?,
            write: m.load_function("deflate_write")?,
        })
    }

    fn grid(scratch: &Scratch, threads: u32) -> LaunchConfig {
        LaunchConfig { grid_dim: (scratch.segments as u32, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
    }

    /// Queues on `stream` deflate_filter, deflate_hash, deflate_chain and deflate_parse: each segment's filter, data,
    /// tokens, codes and header from the `width · height` bytes of `edges`, into `scratch` ([`Scratch::alloc`]
    /// for the same size); its bit length and checksum sums into `scratch.bits` and `scratch.adler`.
    ///
    /// # Panics
    /// If `edges` holds fewer than `width · height` bytes (a bug in the caller).
    pub fn plan(&self, stream: &Arc<CudaStream>, edges: &CudaSlice<u8>, scratch: &mut Scratch) -> Result<(), GpuError> {
        let d = scratch.d;
        assert!(edges.len() >= d.pixels(), "edges smaller than the image");
        let (n, segment_bytes) = scratch.data_bytes();
        let (blocks, warps) = (Self::grid(scratch, THREADS), Self::grid(scratch, CHAIN_THREADS));
        // SAFETY (all four): the arguments match the C signatures; width, height (Dims) and rows_per_segment
        // (≤ 65536) fit an int. deflate_filter reads rows [s · rows_per_segment, …) of the `width × height`
        // bytes of `edges` (checked above) for s < segments (the grid), and writes plans[s].filter (PLAN_BYTES
        // each), adler[2s], adler[2s + 1] and the segment's bytes of `data` (n in all): the sizes
        // Scratch::alloc gave them for this image. deflate_hash reads `data` and the plans' flags (one block
        // per segment) and writes `hashes` (n) inside its segment. deflate_chain reads `hashes` and the flags and writes its segment's entries of `prev` (n); it
        // reads only the hashes deflate_hash wrote and deflate_parse only the links deflate_chain wrote
        // (deflate.cu's wants_strings). deflate_parse reads `data` and `prev` — the earlier launches' on
        // this stream — and writes tokens into `hashes_then_tokens` (n) inside its segment (deflate_chain, before
        // it on this stream, has read every hash), plans[s] and bits[s].
        unsafe {
            // deflate_filter(const u8* edges, int width, int height, int rows_per_segment, Plan* plans,
            //                u8* data, u32* adler)
            let mut b = stream.launch_builder(&self.filter);
            b.arg(edges).arg(&d.width).arg(&d.height).arg(&scratch.rows_per_segment);
            b.arg(&mut scratch.plans).arg(&mut scratch.data).arg(&mut scratch.adler);
            b.launch(blocks)?;
            // deflate_hash(const u8* data, long long n, long long segment_bytes, const Plan* plans, u16* hashes)
            let mut b = stream.launch_builder(&self.hash);
            b.arg(&scratch.data).arg(&n).arg(&segment_bytes).arg(&scratch.plans);
            b.arg(&mut scratch.hashes_then_tokens);
            b.launch(blocks)?;
            // deflate_chain(const u16* hashes, long long n, long long segment_bytes, const Plan* plans, u16* prev)
            let mut b = stream.launch_builder(&self.chain);
            b.arg(&scratch.hashes_then_tokens).arg(&n).arg(&segment_bytes).arg(&scratch.plans).arg(&mut scratch.prev);
            b.launch(warps)?;
            // deflate_parse(const u8* data, long long n, long long segment_bytes, int width, const u16* prev,
            //               u16* tokens, Plan* plans, u64* bits)
            let mut b = stream.launch_builder(&self.parse);
            b.arg(&scratch.data).arg(&n).arg(&segment_bytes).arg(&d.width).arg(&scratch.prev);
            b.arg(&mut scratch.hashes_then_tokens).arg(&mut scratch.plans).arg(&mut scratch.bits);
            b.launch(blocks)?;
        }
        Ok(())
    }

    /// Queues, after [`Deflate::plan`] on the same `scratch`, the clearing of `scratch.stream` and
    /// deflate_write: every segment's block at its bit offset.
    pub fn write(&self, stream: &Arc<CudaStream>, scratch: &mut Scratch) -> Result<(), GpuError> {
        stream.memset_zeros(&mut scratch.stream)?;
        let (n, segment_bytes) = scratch.data_bytes();
        let blocks = Self::grid(scratch, THREADS);
        // SAFETY: deflate_write reads `data` (n bytes) where a segment has no strings, elsewhere the tokens
        // deflate_parse wrote (each thread walks its run from token to token, as deflate_parse wrote them), plans[s] and bits[0..=s] (written before it on this stream), and
        // ORs or stores each block's bits at its offset: at most the words Scratch::stream_words counts (each
        // block's header ≤ HEADER_WORDS words, each byte ≤ MAX_BITS bits). The arguments match the C signature.
        unsafe {
            // deflate_write(const u8* data, long long n, long long segment_bytes, const u16* tokens,
            //               const Plan* plans, const u64* bits, u32* out)
            let mut b = stream.launch_builder(&self.write);
            b.arg(&scratch.data).arg(&n).arg(&segment_bytes).arg(&scratch.hashes_then_tokens);
            b.arg(&scratch.plans).arg(&scratch.bits).arg(&mut scratch.stream);
            b.launch(blocks)?;
        }
        Ok(())
    }
}

/// The Adler-32 checksum (RFC 1950) of an image's data from each segment's sums (deflate_plan's `adler`,
/// pairs in order) and byte counts: `a = 1 + Σ d`, `b = n + Σ (n − i)·d` over the whole data, combined segment
/// by segment (a byte of segment s counts once more for every byte after the segment).
pub fn adler32(sums: &[u32], lengths: impl DoubleEndedIterator<Item = usize>) -> u32 {
    const MOD: u64 = 65_521;
    let (mut a, mut b, mut after) = (1u64, 0u64, 0u64);
    for (pair, n) in sums.chunks_exact(2).rev().zip(lengths.rev()) {
        let (sum, weighted) = (pair[0] as u64, pair[1] as u64);
        a = (a + sum) % MOD;
        b = (b + weighted + (after % MOD) * sum) % MOD;
        after += n as u64;
    }
    b = (b + after) % MOD;
    ((b as u32) << 16) | a as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert!(SOURCE.source.contains(&format!("#define DEFLATE_THREADS {} ", THREADS)));
        assert!(SOURCE.source.contains(&format!("#define DEFLATE_LITLEN {} ", LITLEN)));
        assert!(SOURCE.source.contains(&format!("#define DEFLATE_DISTS {} ", DISTS)));
        assert!(SOURCE.source.contains(&format!("#define DEFLATE_HEADER_WORDS {} ", HEADER_WORDS)));
        assert!(SOURCE.source.contains(&format!("#define DEFLATE_MAX_BITS {} ", MAX_BITS)));
    }

    /// The sums deflate_plan computes for a segment, on the CPU.
    fn sums(data: &[u8]) -> [u32; 2] {
        let n = data.len() as u64;
        let sum: u64 = data.iter().map(|&d| d as u64).sum();
        let weighted: u64 = data.iter().enumerate().map(|(i, &d)| (n - i as u64) * d as u64).sum();
        [(sum % 65_521) as u32, (weighted % 65_521) as u32]
    }

    /// RFC 1950's Adler-32, byte by byte.
    fn by_definition(data: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for &d in data {
            a = (a + d as u32) % 65_521;
            b = (b + a) % 65_521;
        }
        (b << 16) | a
    }

    #[test]
    fn combined_segment_sums_are_the_adler32_of_the_whole() {
        // Lengths that make the sums wrap the modulus, and a segment of one byte.
        let data: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        for cuts in [vec![300_000], vec![1, 299_999], vec![65_536, 65_536, 65_536, 65_536, 37_856], vec![7; 0]] {
            if cuts.is_empty() {
                assert_eq!(adler32(&[], std::iter::empty()), 1, "the checksum of no data");
                continue;
            }
            let mut pairs = Vec::new();
            let mut at = 0;
            for &n in &cuts {
                pairs.extend(sums(&data[at..at + n]));
                at += n;
            }
            assert_eq!(adler32(&pairs, cuts.iter().copied()), by_definition(&data), "cuts {cuts:?}");
        }
    }
}
