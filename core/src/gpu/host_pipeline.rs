//! Host → host for one large image, the pattern of overlapping copies with computation (streams).
//!
//! One image's upload, kernel and download in sequence leave the copy engines and the SMs idle in turn.
//! Cut into bands (with halos of the stencil's radius, [`crate::bands`]) on several streams, band i's upload overlaps band
//! i−1's kernel and band i−2's download: the time approaches that of the copies alone. The copies need
//! page-locked (pinned) host memory to run asynchronously: the bench passes slices of pinned allocations;
//! the single-image command stages pageable memory through a ring of pinned buffers ([`super::staged`]).

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
    /// The stencil's radius: the bands' halo rows.
    radius: usize,
    /// Each lane: the GPU on its own stream, with `filter`'s kernels, and its input and output buffers.
    lanes: Vec<(Gpu, DeviceImage)>,
}

impl HostToHost {
    /// `streams` streams with band-sized buffers for images `width` wide, `filter`'s kernels.
    pub fn new(gpu: &Gpu, width: usize, band_rows: usize, streams: usize, filter: Filter) -> Result<Self, GpuError> {
        let radius = filter.stencil().radius;
        let in_rows = crate::bands::max_in_rows(band_rows, radius);
        let filtered = gpu.for_filter(filter)?;
        let mut lanes = Vec::with_capacity(streams.max(1));
        for _ in 0..streams.max(1) {
            let lane = filtered.on_stream(gpu.ctx.new_stream()?);
            let buffers = DeviceImage::alloc(&lane, Variant::GpuStrip, in_rows * width)?;
            lanes.push((lane, buffers));
        }
        Ok(HostToHost { width, band_rows, border: filter.border, radius, lanes })
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
            for (k, band) in bands(height, self.band_rows, self.radius).into_iter().enumerate() {
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
