//! `cuda/unfilter.cu` — WAVEFRONT: a PNG's row filters undone on the GPU, one block per image, thread t on
//! row t, t steps behind thread 0; between two maps that lay the rows out for 8-byte access and pack the
//! result as RGB. Not a Sobel variant: batch mode's slots ([`crate::gpu::slots`]) run it before gpu-strip,
//! so that the CPU only inflates the file ([`crate::image_io::filtered`]).

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, DriverError, LaunchConfig, PushKernelArg};

use super::{Dims, KernelSource, MAX_GRID_Y};
use crate::gpu::GpuError;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "unfilter", source: include_str!("../../../../cuda/unfilter.cu") };

/// unfilter.cu's UNFILTER_CHUNK: pixels a thread undoes per step.
pub const CHUNK: u32 = 8;
/// unfilter.cu's UNFILTER_MAX_THREADS: the most threads of the wavefront's one block.
pub const MAX_THREADS: u32 = 512;
/// unfilter.cu's UNFILTER_MAP_THREADS: threads of a block of the two maps.
pub const MAP_THREADS: u32 = 256;

/// The loaded kernels of this pattern.
pub struct Unfilter {
    pad: CudaFunction,
    /// [RGB rows (3 bytes a pixel), RGBA rows (4)]
    wavefront: [CudaFunction; 2],
    pack: CudaFunction,
}

/// The device buffers the kernels need between the file's bytes and the RGB image: the rows laid out at
/// [`Unfilter::pitch`], and the filter bytes.
pub struct Scratch {
    rows: CudaSlice<u8>,
    filters: CudaSlice<u8>,
}

impl Scratch {
    /// Buffers for a `d`-sized image of `bytes_per_pixel` (uninitialised: `unfilter_pad` writes them in full
    /// before anything reads them).
    pub fn alloc(stream: &Arc<CudaStream>, d: Dims, bytes_per_pixel: usize) -> Result<Scratch, GpuError> {
        let pitch = Unfilter::pitch(d, bytes_per_pixel)?;
        // SAFETY: see above.
        let (rows, filters) =
            unsafe { (stream.alloc::<u8>(pitch * d.height as usize)?, stream.alloc::<u8>(d.height as usize)?) };
        Ok(Scratch { rows, filters })
    }

    /// Each row's filter byte, as `unfilter_pad` took them out of the image data.
    pub fn filters(&self) -> &CudaSlice<u8> {
        &self.filters
    }
}

impl Unfilter {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Unfilter, DriverError> {
        Ok(Unfilter {
            pad: m.load_function("unfilter_pad")?,
            wavefront: [m.load_function("unfilter_rgb")?, m.load_function("unfilter_rgba")?],
            pack: m.load_function("unfilter_pack")?,
        })
    }

    /// The wavefront's block for a `width`-pixel row: a thread per chunk of the row (no more can be busy at
    /// once: the wavefront's diagonal), a multiple of a warp, at most [`MAX_THREADS`].
    pub fn threads(width: u32) -> u32 {
        width.div_ceil(CHUNK).next_multiple_of(32).min(MAX_THREADS)
    }

    /// Bytes of a laid-out row: whole chunks, so that every chunk is 8-byte aligned. An error when that does
    /// not fit the kernels' `int`.
    pub fn pitch(d: Dims, bytes_per_pixel: usize) -> Result<usize, GpuError> {
        let pitch = (d.width as u32).div_ceil(CHUNK) as usize * CHUNK as usize * bytes_per_pixel;
        if pitch > i32::MAX as usize {
            return Err(GpuError::Unsupported(format!("rows of {pitch} bytes to unfilter")));
        }
        Ok(pitch)
    }

    /// Undoes the filters of `packed` — a PNG's inflated image data: `d.height` rows of `1 + d.width ·
    /// bytes_per_pixel` bytes, every filter byte ≤ 4 — into the first `3 · d.pixels()` bytes of `rgb`,
    /// through `scratch` ([`Scratch::alloc`] for the same size): `unfilter_pad`, then `unfilter_rgb` (or
    /// `unfilter_rgba`), then `unfilter_pack`, queued on `stream`.
    ///
    /// # Panics
    /// If `bytes_per_pixel` is neither 3 nor 4, or a buffer is smaller than that (a bug in the caller).
    pub fn enqueue(
        &self,
        stream: &Arc<CudaStream>,
        packed: &CudaView<'_, u8>,
        scratch: &mut Scratch,
        rgb: &mut CudaSlice<u8>,
        d: Dims,
        bytes_per_pixel: usize,
    ) -> Result<(), GpuError> {
        let wavefront = match bytes_per_pixel {
            3 => &self.wavefront[0],
            4 => &self.wavefront[1],
            other => panic!("unfilter takes 3 or 4 bytes a pixel, not {other}"),
        };
        let pitch = Unfilter::pitch(d, bytes_per_pixel)?;
        let (rows, height) = (d.height as usize, d.height as u32);
        assert!(
            packed.len() >= (1 + d.width as usize * bytes_per_pixel) * rows
                && scratch.rows.len() >= pitch * rows
                && scratch.filters.len() >= rows
                && rgb.len() >= 3 * d.pixels(),
            "buffers smaller than the image"
        );
        let bpp = bytes_per_pixel as i32;
        let pitch_arg = pitch as i32;
        let map = |bytes_across: usize| LaunchConfig {
            grid_dim: ((bytes_across as u32).div_ceil(MAP_THREADS), height.min(MAX_GRID_Y as u32), 1),
            block_dim: (MAP_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let one_block = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (Unfilter::threads(d.width as u32), 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY (the three launches): each touches exactly the bytes the sizes checked above allow —
        // unfilter_pad reads `rows` rows of `packed` and writes `pitch · rows` bytes of `scratch.rows` and
        // `rows` bytes of `scratch.filters`; the wavefront reads and writes those; unfilter_pack reads them
        // and writes `3 · d.pixels()` bytes of `rgb`. The arguments match the C signatures repeated above
        // each; width, height (Dims) and pitch (checked) fit an int, offsets are computed in size_t. cudarc
        // orders the launches after the buffers' earlier uses on other streams and their later uses after.
        unsafe {
            // unfilter_pad(const u8* packed, u8* rows, u8* filters, int width, int height, int bpp, int pitch)
            let mut b = stream.launch_builder(&self.pad);
            b.arg(packed).arg(&mut scratch.rows).arg(&mut scratch.filters);
            b.arg(&d.width).arg(&d.height).arg(&bpp).arg(&pitch_arg);
            b.launch(map(pitch))?;
            // unfilter_rgb / unfilter_rgba(u8* rows, const u8* filters, int height, int pitch)
            let mut b = stream.launch_builder(wavefront);
            b.arg(&mut scratch.rows).arg(&scratch.filters).arg(&d.height).arg(&pitch_arg);
            b.launch(one_block)?;
            // unfilter_pack(const u8* rows, u8* rgb, int width, int height, int bpp, int pitch)
            let mut b = stream.launch_builder(&self.pack);
            b.arg(&scratch.rows).arg(rgb).arg(&d.width).arg(&d.height).arg(&bpp).arg(&pitch_arg);
            b.launch(map(3 * d.width as usize))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert!(SOURCE.source.contains(&format!("#define UNFILTER_CHUNK {} ", CHUNK)));
        assert!(SOURCE.source.contains(&format!("#define UNFILTER_MAX_THREADS {} ", MAX_THREADS)));
        assert!(SOURCE.source.contains(&format!("#define UNFILTER_MAP_THREADS {} ", MAP_THREADS)));
    }

    #[test]
    fn the_block_is_a_thread_per_chunk_in_whole_warps() {
        assert_eq!(Unfilter::threads(1), 32);
        assert_eq!(Unfilter::threads(2048), 256);
        assert_eq!(Unfilter::threads(2049), 288);
        assert_eq!(Unfilter::threads(1 << 20), 512);
    }

    #[test]
    fn a_laid_out_row_is_whole_chunks_of_8_byte_words() {
        let d = |w| Dims::new(w, 1).unwrap();
        assert_eq!(Unfilter::pitch(d(1), 3).unwrap(), 24);
        assert_eq!(Unfilter::pitch(d(9), 4).unwrap(), 64);
        assert_eq!(Unfilter::pitch(d(2048), 3).unwrap(), 6144);
        assert!(Unfilter::pitch(d(i32::MAX as u32 / 3), 4).is_err());
    }
}
