//! `cuda/deflate.cu` — HISTOGRAM, then SCAN and SCATTER of variable-length codes: an edge image's PNG image
//! data filtered and deflated on the GPU, a block with a row filter and a Huffman code of its own per segment
//! of rows, written at known bit offsets into one stream (no stitching afterwards). Not a Sobel variant: batch mode's slots
//! ([`crate::gpu::slots`]) run it after gpu-strip, so that the CPU only writes the file.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg};

use super::{Dims, KernelSource};
use crate::gpu::GpuError;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "deflate", source: include_str!("../../../cuda/deflate.cu") };

/// deflate.cu's DEFLATE_THREADS: threads of each segment's block.
pub const THREADS: u32 = 256;
/// deflate.cu's DEFLATE_SYMBOLS: the literal alphabet used (bytes and the end of block).
pub const SYMBOLS: usize = 257;
/// deflate.cu's DEFLATE_HEADER_WORDS: 32-bit words of a block's largest header.
pub const HEADER_WORDS: usize = 64;
/// deflate.cu's DEFLATE_MAX_BITS: the longest code.
pub const MAX_BITS: usize = 15;
/// Bytes of deflate.cu's `struct Plan`: the filter, header_bits, the header, the code.
pub const PLAN_BYTES: usize = 4 * (2 + HEADER_WORDS + SYMBOLS);
/// Bytes of image data (rows of a filter byte and the pixels) a segment holds at most, unless one row is
/// longer: zlib's window, and the block size GPU deflate implementations choose (nvCOMP's default).
pub const SEGMENT_BYTES: usize = 1 << 16;

/// The loaded kernels.
pub struct Deflate {
    plan: CudaFunction,
    write: CudaFunction,
}

/// How an image is cut into segments, and the device buffers for it.
pub struct Scratch {
    d: Dims,
    rows_per_segment: i32,
    segments: usize,
    plans: CudaSlice<u8>,
    /// Each segment's block length in bits.
    pub bits: CudaSlice<u64>,
    /// Each segment's Adler-32 sums (Σ d, Σ (n − i)·d, mod 65521).
    pub adler: CudaSlice<u32>,
    /// The deflate stream, as 32-bit words (cleared before [`Deflate::write`]).
    pub stream: CudaSlice<u32>,
}

impl Scratch {
    /// Buffers for a `d`-sized image (uninitialised: deflate_plan writes the plans, bits and sums in full,
    /// and the stream is cleared before deflate_write ORs into it).
    pub fn alloc(stream: &Arc<CudaStream>, d: Dims) -> Result<Scratch, GpuError> {
        let row = d.width as usize + 1;
        let rows_per_segment = (SEGMENT_BYTES / row).max(1);
        let segments = (d.height as usize).div_ceil(rows_per_segment);
        let words = Self::stream_words(d, segments);
        // SAFETY: see above.
        let (plans, bits, adler, words) = unsafe {
            (
                stream.alloc::<u8>(segments * PLAN_BYTES)?,
                stream.alloc::<u64>(segments)?,
                stream.alloc::<u32>(2 * segments)?,
                stream.alloc::<u32>(words)?,
            )
        };
        Ok(Scratch { d, rows_per_segment: rows_per_segment as i32, segments, plans, bits, adler, stream: words })
    }

    /// The stream's largest size in 32-bit words: every block's largest header and every byte at the longest
    /// code (the end of block too), and a word for the last one's spill.
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
}

impl Deflate {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Deflate, DriverError> {
        Ok(Deflate { plan: m.load_function("deflate_plan")?, write: m.load_function("deflate_write")? })
    }

    fn grid(scratch: &Scratch) -> LaunchConfig {
        LaunchConfig { grid_dim: (scratch.segments as u32, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 }
    }

    /// Queues deflate_plan on `stream`: each segment's code and header from the `width · height` bytes of
    /// `edges`, into `scratch` ([`Scratch::alloc`] for the same size); its bit length and checksum sums into
    /// `scratch.bits` and `scratch.adler`.
    ///
    /// # Panics
    /// If `edges` holds fewer than `width · height` bytes (a bug in the caller).
    pub fn plan(&self, stream: &Arc<CudaStream>, edges: &CudaSlice<u8>, scratch: &mut Scratch) -> Result<(), GpuError> {
        let d = scratch.d;
        assert!(edges.len() >= d.pixels(), "edges smaller than the image");
        // SAFETY: deflate_plan reads rows [s · rows_per_segment, …) of the `width × height` bytes of `edges`
        // (checked above) for s < segments (the grid), and writes plans[s] (PLAN_BYTES each), bits[s] and
        // adler[2s], adler[2s + 1]: the sizes Scratch::alloc gave them for this image. The arguments match the
        // C signature; width, height (Dims) and rows_per_segment (≤ 65536) fit an int.
        let grid = Self::grid(scratch);
        unsafe {
            // deflate_plan(const u8* edges, int width, int height, int rows_per_segment, Plan* plans,
            //              u64* bits, u32* adler)
            let mut b = stream.launch_builder(&self.plan);
            b.arg(edges).arg(&d.width).arg(&d.height).arg(&scratch.rows_per_segment);
            b.arg(&mut scratch.plans).arg(&mut scratch.bits).arg(&mut scratch.adler);
            b.launch(grid)?;
        }
        Ok(())
    }

    /// Queues, after [`Deflate::plan`] on the same `edges` and `scratch`, the clearing of `scratch.stream`
    /// and deflate_write: every segment's block at its bit offset.
    pub fn write(
        &self,
        stream: &Arc<CudaStream>,
        edges: &CudaSlice<u8>,
        scratch: &mut Scratch,
    ) -> Result<(), GpuError> {
        let d = scratch.d;
        assert!(edges.len() >= d.pixels(), "edges smaller than the image");
        stream.memset_zeros(&mut scratch.stream)?;
        // SAFETY: deflate_write reads the image as deflate_plan does, plans[s] and bits[0..=s] (written by
        // deflate_plan before it on this stream), and ORs or stores each block's bits at its offset: at most
        // the words Scratch::stream_words counts (each block's header ≤ HEADER_WORDS words, each byte's code
        // ≤ MAX_BITS bits). The arguments match the C signature.
        let grid = Self::grid(scratch);
        unsafe {
            // deflate_write(const u8* edges, int width, int height, int rows_per_segment, const Plan* plans,
            //               const u64* bits, u32* out)
            let mut b = stream.launch_builder(&self.write);
            b.arg(edges).arg(&d.width).arg(&d.height).arg(&scratch.rows_per_segment);
            b.arg(&scratch.plans).arg(&scratch.bits).arg(&mut scratch.stream);
            b.launch(grid)?;
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
        assert!(SOURCE.source.contains(&format!("#define DEFLATE_SYMBOLS {} ", SYMBOLS)));
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
