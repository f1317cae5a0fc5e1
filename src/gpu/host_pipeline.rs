//! Host → host for one large image, the pattern of overlapping copies with computation (streams).
//!
//! One image's upload, kernel and download in sequence leave the copy engines and the SMs idle in turn.
//! Cut into bands (with one-row halos, [`crate::bands`]) on several streams, band i's upload overlaps band
//! i−1's kernel and band i−2's download: the time approaches that of the copies alone. The copies need
//! page-locked (pinned) host memory to run asynchronously: the bench passes slices of pinned allocations,
//! and the single-image command ([`run_streamed`]) page-locks the decoded image and its output in place.

use std::time::Instant;

use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;

use super::buffers::DeviceImage;
use super::patterns::Dims;
use super::{Gpu, GpuError};
use crate::bands::bands;
use crate::sobel::{Border, Filter};
use crate::variant::Variant;

/// Streams with band-sized device buffers, reused across images of one width, for one filter.
pub struct HostToHost {
    width: usize,
    band_rows: usize,
    border: Border,
    /// Each lane: the GPU on its own stream, with `filter`'s kernels, and its input and output buffers.
    lanes: Vec<(Gpu, DeviceImage)>,
}

impl HostToHost {
    /// `streams` streams with band-sized buffers for images `width` wide, `filter`'s kernels.
    pub fn new(gpu: &Gpu, width: usize, band_rows: usize, streams: usize, filter: Filter) -> Result<Self, GpuError> {
        let in_rows = band_rows + 2;
        let filtered = gpu.for_filter(filter)?;
        let mut lanes = Vec::with_capacity(streams.max(1));
        for _ in 0..streams.max(1) {
            let lane = filtered.on_stream(gpu.ctx.new_stream()?);
            let buffers = DeviceImage::alloc(&lane, Variant::GpuStrip, in_rows * width)?;
            lanes.push((lane, buffers));
        }
        Ok(HostToHost { width, band_rows, border: filter.border, lanes })
    }

    /// Output rows per band.
    pub fn band_rows(&self) -> usize {
        self.band_rows
    }

    /// Streams the bands go to.
    pub fn streams(&self) -> usize {
        self.lanes.len()
    }

    /// gpu-strip from `input` (RGB, `width × height`) to `output` (`width × height`), both host memory
    /// that should be pinned for the copies to overlap. Returns when every stream has finished, with the
    /// kernels' own time summed over the bands (ms; each band's launch between two CUDA events on its
    /// stream, so it excludes the copies it overlaps).
    pub fn run(&mut self, input: &[u8], output: &mut [u8], height: usize) -> Result<f64, GpuError> {
        let w = self.width;
        assert_eq!(input.len(), w * height * 3);
        assert_eq!(output.len(), w * height);
        let mut kernel_events = Vec::new();
        let result = (|| -> Result<(), GpuError> {
            for (k, band) in bands(height, self.band_rows).into_iter().enumerate() {
                let lanes = self.lanes.len();
                let (gpu, device) = &mut self.lanes[k % lanes];
                let src = &input[band.in_y0 * w * 3..(band.in_y0 + band.in_rows) * w * 3];
                let dst = &mut output[band.y0 * w..(band.y0 + band.rows) * w];
                let d = Dims::new(w as u32, band.in_rows as u32)?;
                // SAFETY: `src` stays borrowed until every stream is synchronised below.
                unsafe { device.upload_async(gpu, src) }?;
                let before = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
                device.launch(gpu, d, self.border)?;
                kernel_events.push((before, gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?));
                // SAFETY: the band's own rows start `skip` rows into the output; `dst` stays borrowed until
                // every stream is synchronised below.
                unsafe { device.download_async(gpu, band.skip() * w, dst) }?;
            }
            Ok(())
        })();
        // Always wait, error or not: the copies must not outlive the borrows of `input` and `output`.
        for (gpu, _) in &self.lanes {
            gpu.stream.synchronize()?;
        }
        result?;
        let mut kernel_ms = 0.0;
        for (before, after) in &kernel_events {
            kernel_ms += before.elapsed_ms(after)? as f64;
        }
        Ok(kernel_ms)
    }
}

/// Host memory page-locked in place (`cuMemHostRegister`) while this lives, so that the copy engines can
/// read or write it asynchronously at the bus's speed, without a staging copy through a pinned buffer.
struct Registered {
    ptr: *mut std::ffi::c_void,
}

impl Registered {
    /// # Safety
    /// The `len` bytes at `ptr` must stay allocated until the registration is dropped. (They may be read
    /// and written meanwhile: registering pins their pages, it neither reads nor writes them.)
    unsafe fn new(gpu: &Gpu, ptr: *const u8, len: usize) -> Result<Registered, GpuError> {
        gpu.ctx.bind_to_thread()?;
        let ptr = ptr.cast_mut().cast();
        // SAFETY: the caller keeps the allocation alive for the registration's lifetime.
        unsafe { cudarc::driver::sys::cuMemHostRegister_v2(ptr, len, 0) }.result()?;
        Ok(Registered { ptr })
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        // SAFETY: `ptr` was registered by `new`, and is unregistered once, here.
        let _ = unsafe { cudarc::driver::sys::cuMemHostUnregister(self.ptr) };
    }
}

/// Whether two buffers have bytes on a common 4 KiB page (the granularity the driver registers at).
fn share_a_page(a: &[u8], b: &[u8]) -> bool {
    const PAGE: usize = 4096;
    let pages = |s: &[u8]| (s.as_ptr() as usize / PAGE, (s.as_ptr() as usize + s.len().max(1) - 1) / PAGE);
    let ((a0, a1), (b0, b1)) = (pages(a), pages(b));
    a0 <= b1 && b0 <= a1
}

/// Images with at least this many bytes of RGB go through [`run_streamed`] in the single-image command:
/// 64 MB (≈ 4.6k × 4.6k pixels). Below it, the pageable copies of [`super::variants`] cost a few ms at most.
pub const STREAMED_FROM_BYTES: usize = 64 << 20;

/// What [`run_streamed`] measured, in milliseconds.
pub struct Streamed {
    /// The edge image.
    pub output: Vec<u8>,
    /// Page-locking the input and output in place, and releasing them.
    pub pin_ms: f64,
    /// Buffers, the overlapped copies and kernels of every band, wall clock.
    pub pipeline_ms: f64,
    /// The kernels' own time, summed over the bands (overlapped by the copies).
    pub kernel_ms: f64,
}

/// gpu-strip over one host image through [`HostToHost`]: the decoded RGB and the output page-locked in
/// place, bands of about 8 MB of RGB on three streams, each band's upload overlapping the kernel and the
/// download of the ones before it (`docs/performance.md` v0.16).
pub fn run_streamed(gpu: &Gpu, rgb: &[u8], width: usize, height: usize, filter: Filter) -> Result<Streamed, GpuError> {
    let limit = super::variants::max_band_rows(gpu, Variant::GpuStrip, width)?;
    run_streamed_in_bands(gpu, rgb, width, height, filter, ((8 << 20) / (3 * width)).clamp(1, limit))
}

/// [`run_streamed`] with bands of `band_rows` output rows (tests use tiny ones, so that band edges land
/// everywhere).
pub fn run_streamed_in_bands(
    gpu: &Gpu,
    rgb: &[u8],
    width: usize,
    height: usize,
    filter: Filter,
    band_rows: usize,
) -> Result<Streamed, GpuError> {
    let mut output = vec![0u8; width * height];
    let started = Instant::now();
    // SAFETY: `rgb` is borrowed and `output` owned for the whole function; both registrations are dropped
    // below, before `output` is returned.
    let pinned_in = unsafe { Registered::new(gpu, rgb.as_ptr(), rgb.len()) }?;
    // The driver registers whole pages, and refuses a page twice: two small buffers (tests' tiny images)
    // can share one. Then the output stays pageable; its copies are correct, only not asynchronous.
    let pinned_out = if share_a_page(rgb, &output) {
        None
    } else {
        Some(unsafe { Registered::new(gpu, output.as_ptr(), output.len()) }?)
    };
    let mut pin_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let mut pipeline = HostToHost::new(gpu, width, band_rows, 3, filter)?;
    let kernel_ms = pipeline.run(rgb, &mut output, height);
    let pipeline_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    drop((pinned_in, pinned_out));
    pin_ms += started.elapsed().as_secs_f64() * 1e3;
    Ok(Streamed { output, pin_ms, pipeline_ms, kernel_ms: kernel_ms? })
}

/// Pinned host↔device copy bandwidth, GB/s each way (median of `reps` event-timed copies of `bytes`).
pub fn pinned_bandwidth_gbps(gpu: &Gpu, bytes: usize, reps: usize) -> Result<(f64, f64), GpuError> {
    // SAFETY (alloc): the host buffer is only copied to and from, never interpreted.
    let mut host = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(bytes, 0) }?;
    let mut dev = gpu.stream.alloc_zeros::<u8>(bytes)?;
    // One untimed copy each way first (first-touch costs), then the timed ones.
    gpu.stream.memcpy_htod(&host, &mut dev)?;
    let mut up = gpu.time_runs(reps.max(1), |_| Ok(gpu.stream.memcpy_htod(&host, &mut dev)?))?;
    gpu.stream.memcpy_dtoh(&dev, &mut host)?;
    let mut down = gpu.time_runs(reps.max(1), |_| Ok(gpu.stream.memcpy_dtoh(&dev, &mut host)?))?;
    let gbps = |samples: &mut [f64]| bytes as f64 / (crate::stats::median(samples) * 1e6);
    Ok((gbps(&mut up), gbps(&mut down)))
}
