//! The GPU variants, each a sequence of launches over device buffers, in three steps that the CLI and
//! the benchmark share:
//! 1. [`Prepared::upload`] — allocate and copy host→device (**GPU memory movement**, wall clock, synchronised);
//! 2. [`Prepared::time`] — run the kernels, each run between two CUDA events with timing enabled
//!    (**GPU computation**);
//! 3. [`Prepared::download`] — copy device→host and free (**GPU memory movement**).
//!
//! Images too large for one pass (a buffer over 2^31 bytes, more than half the free device memory, or
//! more rows than the grid allows) run in horizontal bands with one-row halos ([`crate::bands`]), giving
//! the same bytes; the timings are then the sums over the bands.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};
use image::RgbImage;

use super::launch::{Axis, Dims, RgbKernel};
use super::{Gpu, GpuError};
use crate::sobel::{Border, Filter};
use crate::stats::median;
use crate::variant::{timed, Variant};

/// What one GPU variant produced and how long each part took, in milliseconds.
pub struct GpuRun {
    pub output: Vec<u8>,
    pub memory_ms: f64,
    pub compute_ms: f64,
}

/// The device buffers of one variant: input, output, and the intermediates its pattern needs.
struct Buffers {
    rgb: CudaSlice<u8>,
    out: CudaSlice<u8>,
    /// gpu-map and gpu-fused-map: the grey image.
    grey: Option<CudaSlice<u8>>,
    /// gpu-map: the exact gradients.
    gradients: Option<(CudaSlice<i16>, CudaSlice<i16>)>,
    /// gpu-separable: the row pass's (smoothing, difference) short pairs.
    row_pass: Option<CudaSlice<u32>>,
}

/// Device bytes one set of a variant's buffers takes for `pixels` pixels.
pub fn buffer_bytes(variant: Variant, pixels: usize) -> usize {
    pixels
        * match variant {
            Variant::GpuMap => 3 + 1 + 1 + 2 + 2,
            Variant::GpuFusedMap => 3 + 1 + 1,
            Variant::GpuSeparable => 3 + 1 + 4,
            _ => 3 + 1,
        }
}

impl Buffers {
    fn alloc(stream: &Arc<CudaStream>, variant: Variant, pixels: usize) -> Result<Buffers, GpuError> {
        let grey = matches!(variant, Variant::GpuMap | Variant::GpuFusedMap);
        let gradients = variant == Variant::GpuMap;
        let row_pass = variant == Variant::GpuSeparable;
        // SAFETY (alloc): uninitialised device memory is fine here — `rgb` is filled by the upload and every
        // other buffer is written in full by a kernel before anything reads it.
        unsafe {
            Ok(Buffers {
                rgb: stream.alloc(3 * pixels)?,
                out: stream.alloc(pixels)?,
                grey: if grey { Some(stream.alloc(pixels)?) } else { None },
                gradients: if gradients { Some((stream.alloc(pixels)?, stream.alloc(pixels)?)) } else { None },
                row_pass: if row_pass { Some(stream.alloc(pixels)?) } else { None },
            })
        }
    }
}

/// A variant with its input on the device, ready to run.
pub struct Prepared {
    /// The GPU with the kernels of the filter's operator and arithmetic.
    gpu: Gpu,
    variant: Variant,
    d: Dims,
    border: Border,
    /// Identical copies of the buffers; run k uses copy k mod len, so that timing repeated runs of a
    /// small image does not measure data left in the L2 cache by the previous run.
    copies: Vec<Buffers>,
}

impl Prepared {
    /// Allocates `copies` sets of buffers and uploads the `width × height` RGB bytes `rgb` into each;
    /// synchronised.
    #[allow(clippy::too_many_arguments)]
    pub fn upload(
        gpu: &Gpu,
        variant: Variant,
        width: u32,
        height: u32,
        rgb: &[u8],
        filter: Filter,
        copies: usize,
    ) -> Result<Self, GpuError> {
        assert!(variant.is_gpu(), "{} is not a GPU variant", variant.name());
        let gpu = gpu.for_filter(filter)?;
        let d = Dims::new(width, height)?;
        assert_eq!(rgb.len(), 3 * d.pixels());
        let mut sets = Vec::with_capacity(copies.max(1));
        for _ in 0..copies.max(1) {
            let mut b = Buffers::alloc(&gpu.stream, variant, d.pixels())?;
            gpu.stream.memcpy_htod(rgb, &mut b.rgb)?;
            sets.push(b);
        }
        gpu.stream.synchronize()?;
        Ok(Prepared { gpu, variant, d, border: filter.border, copies: sets })
    }

    /// Enqueues the variant's kernels once, on buffer set `k`.
    fn enqueue(&mut self, k: usize) -> Result<(), GpuError> {
        let (gpu, d, border) = (&self.gpu, self.d, self.border);
        let b = &mut self.copies[k];
        match self.variant {
            Variant::GpuMap => {
                let grey = b.grey.as_mut().expect("gpu-map allocates grey");
                gpu.launch_grey(&b.rgb, grey, d)?;
                let (gx, gy) = b.gradients.as_mut().expect("gpu-map allocates gradients");
                gpu.launch_gradient(Axis::X, grey, gx, d, border)?;
                gpu.launch_gradient(Axis::Y, grey, gy, d, border)?;
                gpu.launch_magnitude(gx, gy, &mut b.out, d)?;
            }
            Variant::GpuFusedMap => {
                let grey = b.grey.as_mut().expect("gpu-fused-map allocates grey");
                gpu.launch_grey(&b.rgb, grey, d)?;
                gpu.launch_gradient_magnitude(grey, &mut b.out, d, border)?;
            }
            Variant::GpuN1(n1) => gpu.launch_n_per_thread(&b.rgb, &mut b.out, d, border, n1)?,
            Variant::GpuFused => gpu.launch_rgb_kernel(RgbKernel::Fused, &b.rgb, &mut b.out, d, border)?,
            Variant::GpuConstTaps => gpu.launch_rgb_kernel(RgbKernel::ConstTaps, &b.rgb, &mut b.out, d, border)?,
            Variant::GpuTiled => gpu.launch_rgb_kernel(RgbKernel::Tiled, &b.rgb, &mut b.out, d, border)?,
            Variant::GpuVec16 => gpu.launch_rgb_kernel(RgbKernel::Vec16, &b.rgb, &mut b.out, d, border)?,
            Variant::GpuStrip => gpu.launch_strip(&b.rgb, &mut b.out, d, border)?,
            Variant::GpuSeparable => {
                let he = b.row_pass.as_mut().expect("gpu-separable allocates the row pass");
                gpu.launch_separable(&b.rgb, he, &mut b.out, d, border)?
            }
            Variant::CpuScalar | Variant::CpuRayon => unreachable!("checked in upload"),
        }
        Ok(())
    }

    /// One untimed run on every buffer set (module loading, caches, clocks), synchronised.
    pub fn warm_up(&mut self) -> Result<(), GpuError> {
        for k in 0..self.copies.len() {
            self.enqueue(k)?;
        }
        self.gpu.stream.synchronize()?;
        Ok(())
    }

    /// `reps` runs, each timed between two CUDA events on a GPU kept busy (see [`Gpu::time_runs`]);
    /// milliseconds per run.
    pub fn time(&mut self, reps: usize) -> Result<Vec<f64>, GpuError> {
        let gpu = self.gpu.clone();
        let copies = self.copies.len();
        gpu.time_runs(reps, |rep| self.enqueue(rep % copies))
    }

    /// Copies the output of buffer set 0 to the host and frees everything; synchronised.
    pub fn download(self) -> Result<Vec<u8>, GpuError> {
        let stream = self.gpu.stream.clone();
        let out = stream.clone_dtoh(&self.copies[0].out)?;
        drop(self.copies);
        stream.synchronize()?;
        Ok(out)
    }
}

/// One whole GPU pass over `rgb`: upload, optionally one warm-up run, `reps` timed runs (median),
/// download; in bands when the image is too large for one pass.
pub fn run(
    gpu: &Gpu,
    variant: Variant,
    rgb: &RgbImage,
    filter: Filter,
    warm_up: bool,
    reps: usize,
) -> Result<GpuRun, GpuError> {
    let rows = max_band_rows(gpu, variant, rgb.width() as usize)?;
    run_banded(gpu, variant, rgb, filter, warm_up, reps, rows)
}

/// The most rows a band may have for `variant` at this width: no buffer over 2^31 bytes (the largest
/// holds 4 bytes a pixel), all buffers within half the free device memory, and the grid's row limit.
pub fn max_band_rows(gpu: &Gpu, variant: Variant, width: usize) -> Result<usize, GpuError> {
    let (free, _) = gpu.ctx.mem_get_info()?;
    let by_buffer = (i32::MAX as usize) / (4 * width);
    let by_memory = (free / 2) / buffer_bytes(variant, width).max(1);
    // Minus the two halo rows a band image adds.
    let rows = by_buffer.min(by_memory).min(super::launch::MAX_ROWS).saturating_sub(2);
    if rows < 3 {
        return Err(GpuError::Unsupported(format!(
            "a {width}-pixel-wide image in {} MB of free device memory",
            free >> 20
        )));
    }
    Ok(rows)
}

/// [`run`] with bands of at most `band_rows` output rows (one pass when the image has no more rows).
#[allow(clippy::too_many_arguments)]
pub fn run_banded(
    gpu: &Gpu,
    variant: Variant,
    rgb: &RgbImage,
    filter: Filter,
    warm_up: bool,
    reps: usize,
    band_rows: usize,
) -> Result<GpuRun, GpuError> {
    let (mut memory_ms, mut compute_ms) = (0.0, 0.0);
    let (width, height) = (rgb.width() as usize, rgb.height() as usize);
    let output = crate::bands::banded(width, height, rgb.as_raw(), band_rows, |w, h, band| {
        let (prepared, upload_ms) = timed(|| Prepared::upload(gpu, variant, w as u32, h as u32, band, filter, 1));
        let mut prepared = prepared?;
        if warm_up {
            prepared.warm_up()?;
        }
        let mut samples = prepared.time(reps.max(1))?;
        let (out, download_ms) = timed(|| prepared.download());
        memory_ms += upload_ms + download_ms;
        compute_ms += median(&mut samples);
        out
    })?;
    Ok(GpuRun { output, memory_ms, compute_ms })
}
