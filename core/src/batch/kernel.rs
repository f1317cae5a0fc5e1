//! `batch --kernel SPEC`: the filter command over a folder. (`--output canny` is the edges' own path: its slots
//! compute Canny instead of the magnitude.) Each image is decoded on the CPU, its grey plane (or
//! its R, G and B planes, `--rgb`) filtered by the engine — on the GPU by the strategy the studies measured fastest
//! for the kernel, else cpu-rayon ([`Engine::filter_planes`]) — and written as `<stem>_<tag>.<format>`, with the
//! bytes `cuda_sobel filter` writes for that file. The edges' GPU shortcuts (PNG rows unfiltered on the GPU, nvJPEG,
//! the PNG data deflated there) feed gpu-strip's input only, so this path takes none of them.

use std::path::Path;

use crate::conv::{self, ConvKernel, Planes};
use crate::engine::Engine;
use crate::error::one_line;
use crate::image_io::{self, output, Picture};

/// What `--kernel` asks of every image.
#[derive(Clone, Debug)]
pub struct KernelJob {
    /// The kernel (`box:5`, `gaussian:7`, a matrix file, …).
    pub kernel: ConvKernel,
    /// Each of R, G and B filtered (`--rgb`), instead of the grey image.
    pub rgb: bool,
}

/// Bytes a pixel at the peak of one image: the decoded RGB, its planes, the result and its interleaved copy.
pub const PEAK_BYTES_PER_PIXEL: u64 = 12;

/// One image of `--kernel`: decoded within a reservation of `pool` (the decoded RGB, its planes, the result and its
/// interleaved copy, and the reference's with `--check`), filtered, checked against the scalar reference with
/// `--check`, written to `out` whole or not at all.
pub(super) fn run_one(
    opts: &super::BatchOptions,
    job: &KernelJob,
    engine: Option<&Engine>,
    (path, out): (&Path, &Path),
    pool: &crate::memory::Pool,
) -> Result<(), String> {
    let per_pixel = PEAK_BYTES_PER_PIXEL + if opts.check { 3 } else { 0 };
    let admit = |h: &image_io::Header| {
        pool.reserve(path, h.width, h.height, crate::memory::image_bytes(h.width, h.height, per_pixel))
    };
    let (decoded, _reservation) = image_io::decode(path, &opts.decode_options(), admit).map_err(|e| one_line(&e))?;
    let planes = if job.rgb { Planes::channels(&decoded.rgb) } else { Planes::grey(&decoded.rgb) };
    drop(decoded);
    let border = opts.filter.border;
    let result = match engine {
        Some(engine) => engine.filter_planes(&planes, &job.kernel, border),
        None => Ok(crate::cpu::rayon::filter(&planes, &job.kernel, border)),
    }
    .map_err(|e| format!("{}: {}", path.display(), one_line(&e)))?;
    if opts.check && conv::filter_scalar(&planes, &job.kernel, border) != result {
        return Err(format!("{}: --check: the result differs from cpu-scalar's", path.display()));
    }
    let color = if job.rgb { png::ColorType::Rgb } else { png::ColorType::Grayscale };
    write_pixels(opts, out, (result.width as u32, result.height as u32), &result.interleaved(), color)
}

/// Writes 8-bit pixels (`color`: grey or RGB) to `out` in the batch's format and compression, atomically: the edge
/// images the CPU encodes, and `--kernel`'s results.
pub(super) fn write_pixels(
    opts: &super::BatchOptions,
    out: &Path,
    (width, height): (u32, u32),
    pixels: &[u8],
    color: png::ColorType,
) -> Result<(), String> {
    let samples = image_io::format::Samples::U8(pixels);
    let picture = Picture { width, height, samples, color, compression: opts.compression, format: opts.format };
    output::write(&output::target(out).map_err(|e| one_line(&e))?, &picture).map_err(|e| one_line(&e))
}
