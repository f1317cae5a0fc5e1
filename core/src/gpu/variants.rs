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

use cudarc::driver::CudaFunction;
use image::RgbImage;

use super::buffers::{self, DeviceImage};
use super::kernels::Build;
use super::patterns::canny::{self as canny_kernels, Thresholds};
use super::patterns::Dims;
use super::staged::{run_streamed, STREAMED_FROM_BYTES};
use super::{Gpu, GpuError};
use crate::canny::Canny;
use crate::sobel::{Border, Filter, Number, Output};
use crate::stats::median;
use crate::variant::{timed, Variant};

/// What one GPU variant produced and how long each part took, in milliseconds.
pub struct GpuRun {
    /// The output: the edge image, or the build's output as bytes (gradients: Gx's plane, then Gy's).
    pub output: Vec<u8>,
    /// Allocations, copies and frees, wall clock.
    pub memory_ms: f64,
    /// Median of the event-timed runs (summed over bands).
    pub compute_ms: f64,
}

/// A variant with its input on the device, ready to run.
pub struct Prepared {
    /// The GPU with the kernels of the filter's build and the output.
    gpu: Gpu,
    d: Dims,
    border: Border,
    /// Identical copies of the buffers; run k uses copy k mod len, so that timing repeated runs of a
    /// small image does not measure data left in the L2 cache by the previous run.
    copies: Vec<DeviceImage>,
    /// Canny after the gradients ([`Prepared::with_canny`]): its kernels, its buffers, its edges (what is downloaded)
    /// and its thresholds.
    canny: Option<(canny_kernels::Canny, canny_kernels::Scratch, cudarc::driver::CudaSlice<u8>, Thresholds)>,
}

impl Prepared {
    /// Allocates `copies` sets of buffers and uploads the `width × height` RGB bytes `rgb` into each;
    /// synchronised. The kernels are `filter`'s, writing `output`.
    #[allow(clippy::too_many_arguments)]
    pub fn upload(
        gpu: &Gpu,
        variant: Variant,
        width: u32,
        height: u32,
        rgb: &[u8],
        (filter, output): (Filter, Output),
        copies: usize,
    ) -> Result<Self, GpuError> {
        assert!(variant.is_gpu(), "{} is not a GPU variant", variant.name());
        let gpu = gpu.for_build(Build::with_output(filter, output))?;
        let d = Dims::new(width, height)?;
        assert_eq!(rgb.len(), 3 * d.pixels());
        let mut sets = Vec::with_capacity(copies.max(1));
        for _ in 0..copies.max(1) {
            let mut b = DeviceImage::alloc(&gpu, variant, d.pixels())?;
            b.upload(&gpu, rgb)?;
            sets.push(b);
        }
        gpu.stream.synchronize()?;
        Ok(Prepared { gpu, d, border: filter.border, copies: sets, canny: None })
    }

    /// Runs `canny` after the variant's gradients (the build must be [`Canny::gradients`]' of its filter, what
    /// `cuda/canny.cu` reads): each run then ends with Canny's edges, which [`Prepared::download`] returns. `link`: a
    /// kernel of `canny_link`'s signature in place of `cuda/canny.cu`'s (a student's).
    pub fn with_canny(mut self, canny: &Canny, link: Option<&CudaFunction>) -> Result<Self, GpuError> {
        let build = self.gpu.kernels.build();
        assert_eq!((build.output, build.norm), (canny.words(&build.stencil()), canny.norm), "Canny reads its words");
        let kernels = self.gpu.kernels.canny()?;
        let kernels = link.map_or_else(|| kernels.clone(), |f| kernels.with_link(f.clone()));
        let scratch = canny_kernels::Scratch::alloc(&self.gpu.stream, self.d)?;
        // SAFETY (alloc): canny_edges writes every byte before the download reads it.
        let edges = unsafe { self.gpu.stream.alloc::<u8>(self.d.pixels()) }?;
        self.canny = Some((kernels, scratch, edges, Thresholds::of(canny)));
        Ok(self)
    }

    /// Enqueues the variant's kernels once, on buffer set `k` (then Canny's, with [`Prepared::with_canny`]).
    fn enqueue(&mut self, k: usize) -> Result<(), GpuError> {
        self.copies[k].launch(&self.gpu, self.d, self.border)?;
        if let Some((kernels, scratch, edges, t)) = &mut self.canny {
            let word_bytes = self.gpu.kernels.build().output.bytes_per_pixel();
            kernels.enqueue(&self.gpu.stream, (self.copies[k].output(), word_bytes), scratch, edges, self.d, *t)?;
        }
        Ok(())
    }

    /// Fills buffer set 0's output — the one [`Prepared::download`] returns — with the complement of `expected`,
    /// so that an output byte the kernels leave unwritten differs from the byte it should be, whatever the memory
    /// held before (device memory is reused from the pool: it may hold another variant's correct output).
    pub fn poison_output(&mut self, expected: &[u8]) -> Result<(), GpuError> {
        let poison: Vec<u8> = expected.iter().map(|b| !b).collect();
        if let Some((_, _, edges, _)) = &mut self.canny {
            return Ok(self.gpu.stream.memcpy_htod(&poison, &mut edges.slice_mut(..poison.len()))?);
        }
        self.copies[0].fill_output(&self.gpu, &poison)
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

    /// Copies the output of buffer set 0 to the host (as bytes) and frees everything; synchronised.
    pub fn download(self) -> Result<Vec<u8>, GpuError> {
        let out = match &self.canny {
            Some((_, _, edges, _)) => self.gpu.stream.clone_dtoh(edges)?,
            None => self.copies[0].download(&self.gpu, self.d.pixels())?,
        };
        drop(self.copies);
        self.gpu.stream.synchronize()?;
        Ok(out)
    }
}

/// One whole GPU pass over `rgb` writing `output`: upload, optionally one warm-up run, `reps` timed runs
/// (median), download; in bands when the image is too large for one pass. gpu-strip's edges of an image of at
/// least [`STREAMED_FROM_BYTES`] stream instead ([`run_streamed`]: staged through pinned buffers, overlapped
/// bands, one pass: `warm_up` and `reps` do not apply); its memory time is then the pass's wall clock with its
/// buffers made and freed, less its kernels'.
pub fn run(
    gpu: &Gpu,
    variant: Variant,
    rgb: &RgbImage,
    (filter, output): (Filter, Output),
    warm_up: bool,
    reps: usize,
) -> Result<GpuRun, GpuError> {
    if streams(variant, rgb) && output == Output::Edges {
        let (w, h) = (rgb.width() as usize, rgb.height() as usize);
        let s = run_streamed(gpu, rgb.as_raw(), w, h, filter)?;
        let memory_ms = (s.setup_ms + s.pipeline_ms + s.release_ms - s.kernel_ms).max(0.0);
        return Ok(GpuRun { output: s.output, memory_ms, compute_ms: s.kernel_ms });
    }
    let rows =
        max_band_rows(&gpu.for_build(Build::with_output(filter, output))?, variant, output, rgb.width() as usize)?;
    run_banded(gpu, variant, rgb, (filter, output), warm_up, reps, rows)
}

/// Whether [`run`] streams `variant`'s edges on `rgb` (gpu-strip, at least [`STREAMED_FROM_BYTES`] of RGB).
pub fn streams(variant: Variant, rgb: &RgbImage) -> bool {
    variant == Variant::GpuStrip && rgb.as_raw().len() >= STREAMED_FROM_BYTES
}

/// The most rows a band may have for `variant` writing `output` at this width: no buffer over 2^31 bytes (the
/// largest holds 4 bytes a pixel, or the output's, if more), all buffers within half the free device memory, and
/// the grid's row limit.
pub fn max_band_rows(gpu: &Gpu, variant: Variant, output: Output, width: usize) -> Result<usize, GpuError> {
    let (free, _) = gpu.ctx.mem_get_info()?;
    let by_buffer = (i32::MAX as usize) / (output.bytes_per_pixel().max(4) * width);
    let by_memory = (free / 2) / (buffers::bytes_per_pixel(gpu, variant)? * width).max(1);
    // Minus the halo rows a band image adds (the widest stencil's, whichever runs).
    let halo = 2 * crate::sobel::Stencil::MAX_RADIUS;
    let rows = by_buffer.min(by_memory).min(super::patterns::MAX_ROWS).saturating_sub(halo);
    if rows < 3 {
        return Err(GpuError::Unsupported(format!(
            "a {width}-pixel-wide image in {} MB of free device memory",
            free >> 20
        )));
    }
    Ok(rows)
}

/// Whether a `width × height` image runs through a batch slot in one pass: gpu-strip's edges within one band, and for
/// Canny (`canny`) its gradients too (as if 4 bytes each) and its pixels within the hysteresis' nodes.
pub fn fits_a_slot(gpu: &Gpu, width: u32, height: u32, canny: bool) -> Result<bool, GpuError> {
    let output = if canny { Output::Gradients(Number::I32) } else { Output::Edges };
    let rows = max_band_rows(gpu, Variant::GpuStrip, output, width as usize)?;
    Ok(rows >= height as usize && (!canny || canny_kernels::Canny::fits(Dims::new(width, height)?)))
}

/// [`run`] with bands of at most `band_rows` output rows (one pass when the image has no more rows).
#[allow(clippy::too_many_arguments)]
pub fn run_banded(
    gpu: &Gpu,
    variant: Variant,
    rgb: &RgbImage,
    (filter, output): (Filter, Output),
    warm_up: bool,
    reps: usize,
    band_rows: usize,
) -> Result<GpuRun, GpuError> {
    let (mut memory_ms, mut compute_ms) = (0.0, 0.0);
    let (width, height) = (rgb.width() as usize, rgb.height() as usize);
    let radius = filter.stencil().radius;
    let layout = match output {
        Output::Gradients(n) => (2, n.bytes()),
        other => (1, other.bytes_per_pixel()),
    };
    let output = crate::bands::banded(width, height, rgb.as_raw(), band_rows, radius, layout, |w, h, band| {
        let (prepared, upload_ms) =
            timed(|| Prepared::upload(gpu, variant, w as u32, h as u32, band, (filter, output), 1));
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

/// Canny's edges of `rgb` on the GPU: `variant`'s gradients as Canny's words ([`Canny::gradients`]), then
/// `cuda/canny.cu`'s suppression and hysteresis
/// on the device, timed together (upload, optionally a warm-up, `reps` timed runs, download of one byte a pixel).
/// An image too large for one pass (hysteresis joins pixels across the whole image) gets its gradients in bands and
/// its Canny on every core ([`Canny::edges_rayon`]), whose time is then part of the computation's. Bytes identical to
/// [`Canny::edges`] of cpu-scalar's gradients either way.
pub fn run_canny(
    gpu: &Gpu,
    variant: Variant,
    rgb: &RgbImage,
    filter: Filter,
    canny: &Canny,
    warm_up: bool,
    reps: usize,
) -> Result<GpuRun, GpuError> {
    run_canny_linked(gpu, variant, rgb, (filter, canny, None), warm_up, reps)
}

/// [`run_canny`] with `link`, a kernel of `canny_link`'s signature (a student's), in place of `cuda/canny.cu`'s: the
/// same launches around it. With a `link`, an image too large for one pass is refused.
pub fn run_canny_linked(
    gpu: &Gpu,
    variant: Variant,
    rgb: &RgbImage,
    (filter, canny, link): (Filter, &Canny, Option<&CudaFunction>),
    warm_up: bool,
    reps: usize,
) -> Result<GpuRun, GpuError> {
    let (w, h) = (rgb.width() as usize, rgb.height() as usize);
    let (words, output) = canny.gradients(filter);
    let rows = max_band_rows(&gpu.for_build(Build::with_output(words, output))?, variant, output, w)?;
    let d = Dims::new(w as u32, h as u32)?;
    if h > rows || !canny_kernels::Canny::fits(d) {
        if link.is_some() {
            return Err(GpuError::Unsupported(format!(
                "a {w}×{h} image for a Canny link kernel: too large for one pass"
            )));
        }
        let r = run(gpu, variant, rgb, (filter, Output::Gradients(Number::I32)), warm_up, reps)?;
        let plane = |i: usize| -> Vec<i32> {
            r.output[i * 4 * w * h..(i + 1) * 4 * w * h]
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        };
        let (edges, ms) = timed(|| canny.edges_rayon(&plane(0), &plane(1), w, h));
        return Ok(GpuRun { output: edges, memory_ms: r.memory_ms, compute_ms: r.compute_ms + ms });
    }
    let (prepared, upload_ms) = timed(|| {
        Prepared::upload(gpu, variant, w as u32, h as u32, rgb.as_raw(), (words, output), 1)?.with_canny(canny, link)
    });
    let mut prepared = prepared?;
    if warm_up {
        prepared.warm_up()?;
    }
    let mut samples = prepared.time(reps.max(1))?;
    let (edges, download_ms) = timed(|| prepared.download());
    Ok(GpuRun { output: edges?, memory_ms: upload_ms + download_ms, compute_ms: median(&mut samples) })
}

/// Caller-owned device memory for [`strip_on_device`]: raw pointers into this context, and a stream.
#[derive(Clone, Copy, Debug)]
pub struct RawImages {
    /// `images` packed RGB images, `3 · width · height` bytes each.
    pub rgb: u64,
    /// Room for `images` outputs of `width · height` pixels each, in the output's layout
    /// (`Output::bytes_per_pixel`; gradients: Gx's plane for every image, then Gy's).
    pub out: u64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Images in the batch (one launch for all).
    pub images: u32,
    /// The `CUstream` to launch on (0: the legacy default stream).
    pub stream: u64,
}

/// gpu-strip writing `output` on caller-owned device memory, on the caller's stream: one launch, no copy, no
/// synchronisation (the Python package's zero-copy path).
///
/// # Safety
/// See [`super::patterns::strip::Strip::launch_raw`]: the pointers must address that much device memory of
/// this GPU's context, and the stream must be a live stream of it.
pub unsafe fn strip_on_device(gpu: &Gpu, a: RawImages, (filter, output): (Filter, Output)) -> Result<(), GpuError> {
    if a.images == 0 || a.images > 65_535 {
        return Err(GpuError::Unsupported(format!("a batch of {} images in one launch (1 to 65535)", a.images)));
    }
    let d = Dims::new(a.width, a.height)?;
    let gpu = gpu.for_build(Build::with_output(filter, output))?;
    gpu.ctx.bind_to_thread()?;
    let stream = a.stream as cudarc::driver::sys::CUstream;
    // SAFETY: forwarded from the caller.
    unsafe {
        gpu.kernels.strip()?.launch_raw(stream, a.rgb, a.out, d, a.images, filter.border as i32, gpu.multiprocessors)
    }?;
    Ok(())
}

/// gpu-strip writing `output` on a batch of `images` packed RGB images in host memory: one upload, one launch
/// for all, one download into `out` (bytes, in the output's layout: the Python package's NumPy batches with
/// `device="cuda"`).
#[allow(clippy::too_many_arguments)]
pub fn strip_batch_from_host(
    gpu: &Gpu,
    rgb: &[u8],
    width: u32,
    height: u32,
    images: u32,
    (filter, output): (Filter, Output),
    out: &mut [u8],
) -> Result<(), GpuError> {
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    let pixels = width as usize * height as usize * images as usize;
    assert_eq!(rgb.len(), 3 * pixels);
    assert_eq!(out.len(), pixels * output.bytes_per_pixel());
    let stream = &gpu.stream;
    let input = stream.clone_htod(rgb)?;
    // SAFETY (alloc): the kernel writes every output byte before the download reads it.
    let mut edges = unsafe { stream.alloc::<u8>(out.len()) }?;
    {
        let (rgb_ptr, _read) = input.device_ptr(stream);
        let (out_ptr, _write) = edges.device_ptr_mut(stream);
        let a = RawImages { rgb: rgb_ptr, out: out_ptr, width, height, images, stream: stream.cu_stream() as u64 };
        // SAFETY: both buffers were just allocated on this context with the batch's sizes; the stream is ours.
        unsafe { strip_on_device(gpu, a, (filter, output)) }?;
    }
    stream.memcpy_dtoh(&edges, out)?;
    stream.synchronize()?;
    Ok(())
}

/// Device bytes [`canny_on_device`] needs as workspace for one `width × height` image at a time: its words
/// ([`Canny::gradients`]), then the state bytes (one a 2×2 block) and the parents (16-byte aligned).
pub fn canny_workspace_bytes(filter: Filter, canny: &Canny, width: u32, height: u32) -> usize {
    canny_workspace(filter, canny, width as usize, height as usize).2
}

/// Where [`canny_on_device`]'s workspace holds what, for a `width × height` image: (state offset, parent offset,
/// total bytes).
fn canny_workspace(filter: Filter, canny: &Canny, width: usize, height: usize) -> (usize, usize, usize) {
    let words = canny.gradients(filter).1.bytes_per_pixel() * width * height;
    let nodes = width.div_ceil(2) * height.div_ceil(2);
    let parents = (words + nodes).next_multiple_of(16);
    (words, parents, parents + 4 * (nodes + 1))
}

/// Which of [`canny_on_device`]'s launches one call makes (the Python package allocates its result between the two
/// parts, so that the allocation runs beside the first launches, not before them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CannyLaunches {
    /// Every image's.
    All,
    /// The first image's gradients, suppression and link: `a.out` is neither read nor written (it may be 0).
    FirstUntilEdges,
    /// After a `FirstUntilEdges` call on the same stream and workspace: the first image's edges, then the rest.
    AfterFirstEdges,
}

/// Canny's edges of `a.images` packed RGB images on caller-owned device memory into `a.out` (a byte a pixel), on the
/// caller's stream, through a caller-owned `workspace` (pointer, bytes) of at least [`canny_workspace_bytes`]: per
/// image, gpu-strip's words ([`Canny::gradients`]) then `cuda/canny.cu` — no copy, no allocation, no synchronisation (the Python
/// package's zero-copy path); `launches` which of them this call makes.
///
/// # Safety
/// As [`strip_on_device`] for `a` (the output a byte a pixel; unused by `FirstUntilEdges`), and `workspace` must
/// address that many bytes of device memory of this context, 16-byte aligned, used by nothing else until the launches
/// have run (with `AfterFirstEdges`: since the `FirstUntilEdges` call of the same images, workspace and stream).
pub unsafe fn canny_on_device(
    gpu: &Gpu,
    a: RawImages,
    workspace: (u64, usize),
    filter: Filter,
    canny: &Canny,
    launches: CannyLaunches,
) -> Result<(), GpuError> {
    let d = Dims::new(a.width, a.height)?;
    let (state, parent, need) = canny_workspace(filter, canny, a.width as usize, a.height as usize);
    if workspace.1 < need || workspace.0 % 16 != 0 {
        return Err(GpuError::Unsupported(format!(
            "a workspace of {} bytes (needs {need}, 16-byte aligned)",
            workspace.1
        )));
    }
    if !canny_kernels::Canny::fits(d) {
        return Err(GpuError::Unsupported(format!("Canny of a {}×{} image on the GPU", a.width, a.height)));
    }
    let (words, output) = canny.gradients(filter);
    let gpu = gpu.for_build(Build::with_output(words, output))?;
    gpu.ctx.bind_to_thread()?;
    let stream = a.stream as cudarc::driver::sys::CUstream;
    let (strip, kernels, t) = (gpu.kernels.strip()?, gpu.kernels.canny()?, Thresholds::of(canny));
    let g = workspace.0;
    let images = if launches == CannyLaunches::FirstUntilEdges { a.images.min(1) } else { a.images };
    for k in 0..images as u64 {
        let pixels = d.pixels() as u64;
        let (gradients, which) = match (k, launches) {
            (0, CannyLaunches::FirstUntilEdges) => (true, canny_kernels::Canny::BEFORE_EDGES),
            (0, CannyLaunches::AfterFirstEdges) => (false, canny_kernels::Canny::EDGES),
            _ => (true, canny_kernels::Canny::ALL),
        };
        let p = canny_kernels::Pointers {
            g,
            state: g + state as u64,
            parent: g + parent as u64,
            edges: a.out + k * pixels,
        };
        // SAFETY: image k's RGB lies within the caller's `a.rgb` and its edges within `a.out` (forwarded); the
        // workspace holds the words, states and parents of one image (checked above), and each image's launches
        // follow the previous image's (the first image's edges alone its earlier ones: forwarded) on the stream.
        unsafe {
            if gradients {
                strip.launch_raw(stream, a.rgb + 3 * k * pixels, g, d, 1, filter.border as i32, gpu.multiprocessors)?;
            }
            kernels.launch_raw(stream, p, d, t, which)?;
        }
    }
    Ok(())
}
