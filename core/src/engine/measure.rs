//! What only the bench measures on an engine's GPU: the device's own ceilings (copy bandwidth, pinned
//! transfers, launch overhead), kernels on device-resident data, host → host on several streams, and the
//! NPP peer. A [`Meter`] is the bench's one door into the GPU layer.

use std::time::Instant;

use image::RgbImage;

use super::Engine;
use crate::gpu::host_pipeline::{pinned_bandwidth_gbps, HostToHost};
use crate::gpu::variants::{self, Prepared};
use crate::gpu::{buffers, npp, Gpu, GpuError};
use crate::sobel::Filter;
use crate::variant::Variant;

pub use crate::gpu::npp::description as npp_description;
pub use crate::gpu::DeviceInfo;

/// Measurements on an engine's GPU.
pub struct Meter<'a> {
    gpu: &'a Gpu,
}

/// A variant's kernels timed on device-resident data.
pub struct ResidentRun {
    /// Milliseconds per run (event-timed).
    pub samples_ms: Vec<f64>,
    /// How many copies of the buffers the runs rotated over.
    pub buffer_copies: usize,
    /// The output of one run, to check.
    pub output: Vec<u8>,
}

/// Host → host runs of gpu-strip.
pub struct HostRun {
    /// The output of the first (untimed) run, to check.
    pub output: Vec<u8>,
    /// Wall clock of each later run, milliseconds.
    pub samples_ms: Vec<f64>,
    /// Streams the bands went to.
    pub streams: usize,
    /// Output rows per band.
    pub band_rows: usize,
}

impl Engine {
    /// The bench's measurements on this engine's GPU; `None` without one.
    pub fn meter(&self) -> Option<Meter<'_>> {
        self.gpu.as_ref().map(|gpu| Meter { gpu })
    }
}

impl Meter<'_> {
    /// Name, compute capability, SMs, memory, L2 and driver of the device.
    pub fn info(&self) -> Result<DeviceInfo, GpuError> {
        self.gpu.info()
    }

    /// Device-to-device copy bandwidth, GB/s (read + written): 1 GiB each way (~17× the H200's L2), less
    /// only on a small device; median of 20.
    pub fn copy_bandwidth_gbps(&self) -> Result<f64, GpuError> {
        let bytes = (1usize << 30).min(self.gpu.info()?.memory_bytes / 8);
        self.gpu.copy_bandwidth_gbps(bytes, 20)
    }

    /// The GPU-side cost of one launch, ms (median of `reps`).
    pub fn launch_overhead_ms(&self, reps: usize) -> Result<f64, GpuError> {
        self.gpu.launch_overhead_ms(reps)
    }

    /// Pinned host → device and device → host bandwidth, GB/s (256 MiB copies, median of 10).
    pub fn pinned_bandwidth_gbps(&self) -> Result<(f64, f64), GpuError> {
        pinned_bandwidth_gbps(self.gpu, 256 << 20, 10)
    }

    /// `variant`'s kernels on `rgb` resident on the device: one warm-up, then `reps` event-timed runs,
    /// rotating over enough copies of the buffers to span 3× the L2 (so each run reads from DRAM), within a
    /// quarter of the free memory. The output returned is the first set's, which starts as the complement of
    /// `expected` (the output the caller will check it against): a byte the kernels leave unwritten fails that
    /// check.
    pub fn kernel_samples(
        &self,
        variant: Variant,
        rgb: &RgbImage,
        filter: Filter,
        reps: usize,
        expected: &[u8],
    ) -> Result<ResidentRun, GpuError> {
        self.kernel_samples_of(variant, rgb, filter, None, reps, expected)
    }

    /// [`Meter::kernel_samples`], or with `canny` the variant's gradients then Canny's kernels
    /// ([`Prepared::with_canny`]), timed together; the output is then Canny's edges.
    pub fn kernel_samples_of(
        &self,
        variant: Variant,
        rgb: &RgbImage,
        filter: Filter,
        canny: Option<&crate::canny::Canny>,
        reps: usize,
        expected: &[u8],
    ) -> Result<ResidentRun, GpuError> {
        use crate::sobel::Output;
        let gpu = self.gpu;
        let (width, height) = rgb.dimensions();
        let (filter, output) = match canny {
            Some(c) => c.gradients(filter),
            None => (filter, Output::Edges),
        };
        let set_bytes = (buffers::bytes_per_pixel(gpu, variant)? * width as usize * height as usize).max(1);
        let (free, _) = gpu.ctx.mem_get_info()?;
        let copies = (3 * gpu.info()?.l2_bytes).div_ceil(set_bytes).clamp(1, 64).min((free / 4 / set_bytes).max(1));
        let mut prepared = Prepared::upload(gpu, variant, width, height, rgb.as_raw(), (filter, output), copies)?;
        if let Some(c) = canny {
            prepared = prepared.with_canny(c, None)?;
        }
        prepared.poison_output(expected)?;
        prepared.warm_up()?;
        let samples_ms = prepared.time(reps)?;
        let output = prepared.download()?;
        Ok(ResidentRun { samples_ms, buffer_copies: copies, output })
    }

    /// gpu-strip host → host from pinned memory to pinned memory, in about 16 bands on `streams` streams:
    /// one checked run, then `reps` timed ones.
    pub fn host_to_host(
        &self,
        rgb: &RgbImage,
        filter: Filter,
        streams: usize,
        reps: usize,
    ) -> Result<HostRun, GpuError> {
        let gpu = self.gpu;
        let (w, h) = (rgb.width() as usize, rgb.height() as usize);
        let limit = variants::max_band_rows(gpu, Variant::GpuStrip, crate::sobel::Output::Edges, w)?;
        let band_rows = h.div_ceil(16).clamp(64.min(h), limit);
        let mut pipeline = HostToHost::new(gpu, w, band_rows, streams, filter)?;
        // SAFETY (pinned allocs): the input is filled from the image before use; the output is written in
        // full by the pipeline before it is read.
        let (mut input, mut output) = unsafe {
            (
                gpu.ctx.alloc_pinned_with_flags::<u8>(w * h * 3, cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED)?,
                gpu.ctx.alloc_pinned_with_flags::<u8>(w * h, 0)?,
            )
        };
        input.as_mut_slice()?.copy_from_slice(rgb.as_raw());
        let (input, output) = (input.as_slice()?, output.as_mut_slice()?);
        pipeline.run(input, output, h)?;
        let first = output.to_vec();
        let mut samples_ms = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            pipeline.run(input, output, h)?;
            samples_ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
        Ok(HostRun { output: first, samples_ms, streams: pipeline.streams(), band_rows: pipeline.band_rows() })
    }

    /// NVIDIA NPP, loaded at run time; the reason when it cannot be.
    pub fn npp(&self) -> Result<NppPeer<'_>, String> {
        npp::Npp::load().map(|npp| NppPeer { npp, gpu: self.gpu })
    }
}

/// NPP on an engine's GPU.
pub struct NppPeer<'a> {
    npp: npp::Npp,
    gpu: &'a Gpu,
}

impl NppPeer<'_> {
    /// NPP's grey + Sobel of size `ksize` on `rgb`, event-timed like our kernels (ms per run).
    pub fn time(&self, rgb: &RgbImage, ksize: crate::sobel::Ksize, reps: usize) -> Result<Vec<f64>, GpuError> {
        self.npp.time(self.gpu, rgb, ksize, reps)
    }

    /// NPP's Canny on the grey of `rgb`, device-resident, event-timed (ms per run).
    pub fn time_canny(&self, rgb: &RgbImage, canny: &crate::canny::Canny, reps: usize) -> Result<Vec<f64>, GpuError> {
        self.npp.time_canny(self.gpu, rgb, canny, reps)
    }
}
