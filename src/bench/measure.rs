//! The measurements themselves: one image's whole-pipeline runs and computation-only repetitions (through
//! the engine's runner and the GPU's event timing), batch throughput, and host → host.

use std::path::Path;
use std::time::Instant;

use image::{ExtendedColorType, RgbImage};
use indicatif::ProgressBar;

use super::{
    image_for, n_label, BatchRow, BenchOptions, DiffersFromReference, HostInfo, HostSeries, KernelSeries,
    PipelineSeries, RunTimings,
};
use crate::engine::{Engine, Meter, RunOptions};
use crate::variant::{timed, Variant};
use crate::{cpu, image_io};
/// `batch_images` copies of the image of `size`, then three alternating runs of batch mode and of its
/// decode + encode baseline (so that both meet the same file-cache and clock conditions).
pub(super) fn batch_row(opts: &BenchOptions, size: (u32, u32)) -> anyhow::Result<BatchRow> {
    let source = image_for(size, &opts.image_dir)?;
    let dir = opts.image_dir.join(format!("batch-{}x{}", size.0, size.1));
    std::fs::create_dir_all(&dir)?;
    for i in 0..opts.batch_images {
        let copy = dir.join(format!("img{i:04}.png"));
        if !copy.is_file() {
            std::fs::copy(&source, &copy)?;
        }
    }
    let out = opts.out_dir.join(".batch-out");
    let run = |baseline: bool| {
        crate::batch::run(&crate::batch::BatchOptions {
            inputs: vec![dir.clone()],
            recursive: false,
            out_dir: out.clone(),
            format: crate::image_io::Format::Png,
            filter: opts.filter,
            compression: crate::image_io::PngCompression::Default,
            slots: None,
            devices: None,
            check: false,
            baseline,
            budget: opts.budget,
            keep_orientation: false,
            jpeg_decoder: crate::batch::JpegDecoder::Auto,
            png_encoder: crate::batch::PngEncoder::Auto,
            png_inflate: crate::batch::PngInflate::Cpu,
            kernel: None,
            canny: None,
        })
    };
    run(false)?; // warm-up: file cache, contexts
    let (mut batch, mut baseline, mut engine) = (Vec::new(), Vec::new(), String::new());
    for _ in 0..3 {
        let b = run(false)?;
        anyhow::ensure!(b.failures.is_empty(), "batch failures: {:?}", b.failures);
        engine = b.engine.clone();
        batch.push(b.images_per_second());
        baseline.push(run(true)?.images_per_second());
    }
    let _ = std::fs::remove_dir_all(&out);
    Ok(BatchRow {
        images: opts.batch_images,
        width: size.0,
        height: size.1,
        engine,
        batch_images_per_s: batch,
        baseline_images_per_s: baseline,
    })
}

/// Host → host on pinned buffers: `streams` streams, about 16 bands; checked against the reference, then timed.
pub(super) fn host_to_host(
    meter: &Meter,
    rgb: &RgbImage,
    reference: &[u8],
    opts: &BenchOptions,
    up_gbps: f64,
    down_gbps: f64,
    streams: usize,
) -> anyhow::Result<HostSeries> {
    let (w, h) = rgb.dimensions();
    let run = meter.host_to_host(rgb, opts.filter, streams, opts.kernel_reps.clamp(1, 20))?;
    if run.output != reference {
        return Err(DiffersFromReference(format!("host → host at {w}x{h}")).into());
    }
    let pixels = w as f64 * h as f64;
    Ok(HostSeries {
        width: w,
        height: h,
        streams: run.streams,
        band_rows: run.band_rows,
        samples_ms: run.samples_ms,
        pcie_bound_ms: 3.0 * pixels / (up_gbps * 1e6) + pixels / (down_gbps * 1e6),
    })
}

/// What every measurement of one image needs.
pub(super) struct Ctx<'a> {
    pub opts: &'a BenchOptions,
    /// The runner every whole-pipeline run goes through, and (its meter) the GPU measurements.
    pub engine: &'a Engine,
    pub path: &'a Path,
    pub scratch: &'a Path,
    pub reference: &'a [u8],
}

impl Ctx<'_> {
    /// One warm-up run, then `runs` timed whole-pipeline runs; every output checked against the reference.
    pub fn pipeline_series(
        &self,
        variant: Variant,
        (width, height): (u32, u32),
        progress: &ProgressBar,
    ) -> anyhow::Result<PipelineSeries> {
        let mut runs = Vec::with_capacity(self.opts.runs);
        for i in 0..=self.opts.runs {
            let run = self.pipeline_once(variant)?;
            if i > 0 {
                runs.push(run);
            }
            progress.inc(1);
        }
        Ok(PipelineSeries { width, height, variant, n: variant.n1().map(|n1| n1.n), runs })
    }

    fn pipeline_once(&self, variant: Variant) -> anyhow::Result<RunTimings> {
        let (rgb, decode_ms) = timed(|| image_io::decode_rgb(self.path));
        let rgb = rgb?;
        let filter = self.opts.filter;
        let run = self.engine.run(variant, &rgb, filter, RunOptions::default())?;
        let (out, compute_ms, gpu_memory_ms) = (run.output, run.compute_ms, run.gpu_memory_ms);
        if out != self.reference {
            return Err(DiffersFromReference(format!(
                "{}: {}{}",
                self.path.display(),
                variant.name(),
                n_label(variant)
            ))
            .into());
        }
        let (written, encode_ms) =
            timed(|| image_io::write_png(self.scratch, rgb.width(), rgb.height(), &out, ExtendedColorType::L8));
        written?;
        let io_ms = decode_ms + encode_ms;
        let total_ms = io_ms + gpu_memory_ms.unwrap_or(0.0) + compute_ms;
        Ok(RunTimings { io_ms, gpu_memory_ms, compute_ms, total_ms, effective_gbps: None })
    }

    /// Computation only: GPU kernels on resident data (event-timed, rotating buffer copies), CPU
    /// functions on the decoded image (wall clock, until `kernel_reps` or the time budget); the output checked
    /// against the reference either way.
    pub fn kernel_series(&self, variant: Variant, rgb: &RgbImage) -> anyhow::Result<KernelSeries> {
        if variant.is_gpu() && self.engine.has_gpu() {
            return self.gpu_kernel_series(variant, rgb);
        }
        let (width, height) = rgb.dimensions();
        let filter = self.opts.filter;
        let (w, h) = (width as usize, height as usize);
        let f = |rgb: &RgbImage| match (variant, &self.opts.canny) {
            (Variant::CpuScalar, Some(c)) => {
                let stages = cpu::scalar::sobel_stages(rgb, filter);
                c.edges(&stages.gx, &stages.gy, w, h)
            }
            (_, Some(c)) => c.edges_of(&cpu::rayon::PackedRgb::new(rgb.as_raw(), w, h), filter),
            (Variant::CpuScalar, None) => cpu::scalar::sobel(rgb, filter).into_raw(),
            (_, None) => cpu::rayon::sobel(rgb, filter).into_raw(),
        };
        if f(rgb) != self.reference {
            // The warm-up's output, checked like the GPU's (with --kernel-only nothing else checks it).
            return Err(DiffersFromReference(format!("{}: {}", self.path.display(), variant.name())).into());
        }
        let start = Instant::now();
        let mut samples_ms = Vec::new();
        while samples_ms.len() < self.opts.kernel_reps
            && (samples_ms.len() < 3 || start.elapsed().as_secs_f64() < self.opts.cpu_budget_s)
        {
            let (out, ms) = timed(|| f(rgb));
            std::hint::black_box(out);
            samples_ms.push(ms);
        }
        Ok(KernelSeries { width, height, variant, n: None, buffer_copies: 1, samples_ms })
    }

    /// A GPU variant's kernels on resident data: event-timed, rotating over enough buffer copies that
    /// each run reads from DRAM; the output checked against the reference.
    pub fn gpu_kernel_series(&self, variant: Variant, rgb: &RgbImage) -> anyhow::Result<KernelSeries> {
        let meter = self.engine.meter().expect("GPU variants run only with a GPU");
        let (width, height) = rgb.dimensions();
        let (filter, canny, reps) = (self.opts.filter, self.opts.canny.as_ref(), self.opts.kernel_reps);
        let run = meter.kernel_samples_of(variant, rgb, filter, canny, reps, self.reference)?;
        if run.output != self.reference {
            let mapping = variant.n1().map(|n1| format!(" --mapping {}", n1.mapping.name())).unwrap_or_default();
            return Err(DiffersFromReference(format!(
                "{}: {}{}{mapping}",
                self.path.display(),
                variant.name(),
                n_label(variant)
            ))
            .into());
        }
        let n = variant.n1().map(|n1| n1.n);
        Ok(KernelSeries { width, height, variant, n, buffer_copies: run.buffer_copies, samples_ms: run.samples_ms })
    }
}

/// The largest image (in pixels) the report-mapping sweep runs on: the report's 2048×1024.
pub(super) const REPORT_MAPPING_MAX_PIXELS: u64 = 2048 * 1024;

pub(super) fn host_info() -> HostInfo {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.into());
    HostInfo {
        cpu,
        threads: ::rayon::current_num_threads(),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
    }
}
