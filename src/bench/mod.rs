//! `cuda_sobel bench`: the report's experiments on your machine.
//!
//! - **Whole pipeline**, like the report: each run decodes the PNG, uploads, computes, downloads and
//!   encodes; `runs` runs per image size and variant (ten by default) after one untimed warm-up run, in
//!   the report's categories. GPU context start-up (the dummy allocation) is recorded apart, excluded.
//! - **n:1 sweep**: gpu-n1 for every n in `ns`, whole pipeline and kernel-only.
//! - **Kernel-only**: the computation alone, many repetitions, median; GPU kernels between CUDA events on
//!   device-resident data, rotating over enough copies of the buffers that the L2 cache does not hold the
//!   previous run's data. Effective GB/s is set against the device-to-device copy bandwidth, measured in
//!   the same run (the roofline).
//!
//! One [`BenchResults`] holds every number; [`export`] and [`terminal`] are views of it.

pub mod export;
pub mod plots;
pub mod terminal;

use std::path::{Path, PathBuf};
use std::time::Instant;

use image::{ExtendedColorType, RgbImage};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::gpu::variants::{self, Prepared};
use crate::gpu::{DeviceInfo, Gpu};
use crate::pipeline::{timed, Mapping, Variant, N1};
use crate::sobel::Filter;
use crate::stats::Summary;
use crate::{cpu, generate, image_io};

/// What to measure (built by the CLI).
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub sizes: Vec<(u32, u32)>,
    /// Whole-pipeline runs per size and variant.
    pub runs: usize,
    /// Kernel-only repetitions (CPU variants stop earlier when they pass `cpu_budget_s`).
    pub kernel_reps: usize,
    pub cpu_budget_s: f64,
    /// n values of the gpu-n1 sweep.
    pub ns: Vec<u32>,
    pub variants: Vec<Variant>,
    pub filter: Filter,
    /// Where sizes not in `imgs_in/` are drawn (by `generate`) and kept for the next run.
    pub image_dir: PathBuf,
    /// Where the results and plots go.
    pub out_dir: PathBuf,
    /// Other implementations to time on the same images in the same process.
    pub peers: Vec<Peer>,
    /// Batch throughput on this many copies of the first size's image (0: skip).
    pub batch_images: usize,
    /// Host memory the bench may use: every size is checked against it before any work.
    pub budget: crate::memory::Budget,
}

/// Host bytes per pixel the bench needs beyond one pipeline run of every variant: the pinned input and
/// output buffers of the host → host measurement.
const HOST_TO_HOST_BYTES_PER_PIXEL: u64 = 4;

/// Refuses, before any work, a size whose estimated peak is over the budget.
fn check_budget(opts: &BenchOptions) -> crate::error::Result<()> {
    for &(w, h) in &opts.sizes {
        let header = crate::image_io::Header { width: w, height: h, stored_bytes_per_pixel: 3 };
        let per_pixel =
            crate::pipeline::peak_bytes_per_pixel(&header, opts.variants.len(), false) + HOST_TO_HOST_BYTES_PER_PIXEL;
        let needed = crate::memory::image_bytes(w, h, per_pixel);
        opts.budget.check(Path::new(&format!("bench size {w}x{h}")), w, h, needed)?;
    }
    Ok(())
}

/// A peer implementation the bench can time beside ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Peer {
    /// NVIDIA NPP: nppiRGBToGray + nppiGradientVectorSobelBorder (loaded at run time).
    Npp,
}

impl Peer {
    pub const ALL: [Peer; 1] = [Peer::Npp];

    pub fn name(self) -> &'static str {
        match self {
            Peer::Npp => "npp",
        }
    }
}

/// Every number one benchmark produced.
#[derive(Debug, Serialize)]
pub struct BenchResults {
    pub meta: Meta,
    /// Whole-pipeline runs.
    pub pipeline: Vec<PipelineSeries>,
    /// Computation-only repetitions.
    pub kernels: Vec<KernelSeries>,
    /// Variants that could not run, with the reason.
    pub skipped: Vec<Skipped>,
    /// Peers' computation-only samples (same images, same process, CUDA events).
    pub peers: Vec<PeerSeries>,
    /// Peers that could not run, with the reason.
    pub peers_skipped: Vec<String>,
    /// Host → host runs (pinned buffers, banded on several streams).
    pub host_to_host: Vec<HostSeries>,
    /// Batch mode against decode + encode alone, on copies of one image.
    pub batch: Option<BatchRow>,
    /// gpu-n1 with the report's overlapping mapping (`--mapping report`), computation only, at each n
    /// of the sweep; sizes up to the report's largest (2048×1024) only, as its cost grows with n.
    pub report_mapping: Vec<KernelSeries>,
}

/// Batch throughput: the whole batch (with the GPU when there is one) against decode + encode alone.
#[derive(Debug, Serialize)]
pub struct BatchRow {
    pub images: usize,
    pub width: u32,
    pub height: u32,
    pub engine: String,
    /// Images per second of each run, alternating with the baseline's.
    pub batch_images_per_s: Vec<f64>,
    pub baseline_images_per_s: Vec<f64>,
}

/// One image size host → host: upload, gpu-strip, download, from pinned memory to pinned memory.
#[derive(Debug, Serialize)]
pub struct HostSeries {
    pub width: u32,
    pub height: u32,
    pub streams: usize,
    pub band_rows: usize,
    /// Wall clock of each run, ms.
    pub samples_ms: Vec<f64>,
    /// The copies alone at the pinned bandwidths measured in this run: 3 bytes a pixel up, 1 down, ms.
    pub pcie_bound_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct PeerSeries {
    pub width: u32,
    pub height: u32,
    pub peer: Peer,
    pub description: String,
    pub samples_ms: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub struct Meta {
    pub tool_version: String,
    pub git_commit: String,
    /// Seconds since the Unix epoch when the benchmark started.
    pub started_unix_s: u64,
    pub host: HostInfo,
    pub gpu: Option<DeviceInfo>,
    pub context_init_ms: Option<f64>,
    pub kernel_load_ms: Option<f64>,
    /// Device-to-device copy bandwidth (bytes read + written), GB/s.
    pub copy_bandwidth_gbps: Option<f64>,
    /// Pinned host → device and device → host copy bandwidth, GB/s.
    pub pinned_h2d_gbps: Option<f64>,
    pub pinned_d2h_gbps: Option<f64>,
    /// Event-timed launch of an empty kernel on a busy GPU (no host gap), µs: the floor under any kernel.
    pub launch_overhead_us: Option<f64>,
    /// Operator, border and arithmetic of every measurement.
    pub filter: Filter,
    pub runs: usize,
    pub kernel_reps: usize,
}

#[derive(Debug, Serialize)]
pub struct HostInfo {
    pub cpu: String,
    pub threads: usize,
    pub os: String,
}

/// One variant (and n, for gpu-n1) at one size: every whole-pipeline run.
#[derive(Debug, Serialize)]
pub struct PipelineSeries {
    pub width: u32,
    pub height: u32,
    pub variant: Variant,
    pub n: Option<u32>,
    pub runs: Vec<RunTimings>,
}

/// One whole-pipeline run, milliseconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RunTimings {
    pub io_ms: f64,
    pub gpu_memory_ms: Option<f64>,
    pub compute_ms: f64,
    pub total_ms: f64,
}

/// One variant (and n) at one size: computation-only samples, milliseconds.
#[derive(Debug, Serialize)]
pub struct KernelSeries {
    pub width: u32,
    pub height: u32,
    pub variant: Variant,
    pub n: Option<u32>,
    /// How many copies of the device buffers the runs rotated over (1 for CPU variants).
    pub buffer_copies: usize,
    pub samples_ms: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub struct Skipped {
    pub variant: Variant,
    pub reason: String,
}

/// The category a summary is taken over.
#[derive(Clone, Copy, Debug)]
pub enum Category {
    Io,
    GpuMemory,
    Computation,
    Total,
}

impl PipelineSeries {
    pub fn summary(&self, c: Category) -> Option<Summary> {
        let values: Vec<f64> = self
            .runs
            .iter()
            .filter_map(|r| match c {
                Category::Io => Some(r.io_ms),
                Category::GpuMemory => r.gpu_memory_ms,
                Category::Computation => Some(r.compute_ms),
                Category::Total => Some(r.total_ms),
            })
            .collect();
        Summary::of(&values)
    }
}

impl KernelSeries {
    pub fn summary(&self) -> Summary {
        Summary::of(&self.samples_ms).expect("a kernel series has samples")
    }

    pub fn pixels(&self) -> f64 {
        self.width as f64 * self.height as f64
    }

    /// Bytes that must move (3 read + 1 written per pixel) over the median time, GB/s.
    pub fn effective_gbps(&self) -> f64 {
        4.0 * self.pixels() / (self.summary().median * 1e6)
    }
}

impl BenchResults {
    /// The whole-pipeline series of `variant` (gpu-n1: at its n) at `size`.
    pub fn series(&self, (w, h): (u32, u32), variant: Variant) -> Option<&PipelineSeries> {
        self.pipeline.iter().find(|s| (s.width, s.height) == (w, h) && s.variant == variant)
    }

    /// The computation-only series of `variant` (gpu-n1: at its n, coalesced) at `size`.
    pub fn kernel(&self, (w, h): (u32, u32), variant: Variant) -> Option<&KernelSeries> {
        self.kernels.iter().find(|s| (s.width, s.height) == (w, h) && s.variant == variant)
    }

    pub fn peer(&self, (w, h): (u32, u32), peer: Peer) -> Option<&PeerSeries> {
        self.peers.iter().find(|s| (s.width, s.height) == (w, h) && s.peer == peer)
    }

    /// The GPU kernel series with the lowest median at `size`.
    pub fn fastest_gpu(&self, size: (u32, u32)) -> Option<&KernelSeries> {
        self.kernels
            .iter()
            .filter(|k| (k.width, k.height) == size && k.variant.is_gpu())
            .min_by(|a, b| a.summary().median.total_cmp(&b.summary().median))
    }

    /// Image sizes in the order measured.
    pub fn sizes(&self) -> Vec<(u32, u32)> {
        let mut sizes: Vec<(u32, u32)> = Vec::new();
        for s in &self.pipeline {
            if !sizes.contains(&(s.width, s.height)) {
                sizes.push((s.width, s.height));
            }
        }
        sizes
    }

    /// Each variant measured, once, in the order measured; gpu-n1 at the sweep's smallest n.
    pub fn variants(&self) -> Vec<Variant> {
        let mut out: Vec<Variant> = Vec::new();
        for p in &self.pipeline {
            if !out.iter().any(|v| v.name() == p.variant.name()) {
                out.push(p.variant);
            }
        }
        out
    }

    /// The n values of the gpu-n1 sweep, ascending.
    pub fn ns(&self) -> Vec<u32> {
        let mut ns: Vec<u32> = self.pipeline.iter().filter_map(|s| s.n).collect();
        ns.sort_unstable();
        ns.dedup();
        ns
    }
}

/// The series a variant is measured as: gpu-n1 at every n of the sweep (coalesced), the others once.
fn series_keys(variant: Variant, ns: &[u32]) -> Vec<Variant> {
    match variant {
        Variant::GpuN1(_) => ns.iter().map(|&n| Variant::GpuN1(N1::new(n))).collect(),
        other => vec![other],
    }
}

/// The image of a size: `imgs_in/WxH.png` when present, else drawn into `image_dir` (kept for next time).
pub fn image_for(size: (u32, u32), image_dir: &Path) -> anyhow::Result<PathBuf> {
    let name = format!("{}x{}.png", size.0, size.1);
    let committed = Path::new("imgs_in").join(&name);
    if committed.is_file() {
        return Ok(committed);
    }
    let path = image_dir.join(&name);
    if !path.is_file() {
        std::fs::create_dir_all(image_dir)?;
        let img = generate::scene(size.0, size.1);
        image_io::write_png(&path, size.0, size.1, img.as_raw(), ExtendedColorType::Rgb8)?;
    }
    Ok(path)
}

pub fn run(opts: &BenchOptions) -> anyhow::Result<BenchResults> {
    check_budget(opts)?;
    let started_unix_s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let gpu = opts.variants.iter().any(|v| v.is_gpu()).then(|| Gpu::open_device(0, opts.filter));
    let mut skipped = Vec::new();
    let (gpu, startup) = match gpu {
        Some(Ok((g, s))) => (Some(g), Some(s)),
        Some(Err(e)) => {
            for &variant in opts.variants.iter().filter(|v| v.is_gpu()) {
                skipped.push(Skipped { variant, reason: e.to_string() });
            }
            (None, None)
        }
        None => (None, None),
    };
    let info = gpu.as_ref().map(Gpu::info).transpose()?;
    // 1 GiB each way, ~17× the H200's L2; smaller only if the device is small.
    let copy_bytes = info.as_ref().map_or(0, |i| (1usize << 30).min(i.memory_bytes / 8));
    let copy_bandwidth_gbps = gpu.as_ref().map(|g| g.copy_bandwidth_gbps(copy_bytes, 20)).transpose()?;

    let pinned =
        gpu.as_ref().map(|g| crate::gpu::host_pipeline::pinned_bandwidth_gbps(g, 256 << 20, 10)).transpose()?;
    let variants: Vec<Variant> = opts.variants.iter().copied().filter(|v| !v.is_gpu() || gpu.is_some()).collect();
    let series_per_size: usize = variants.iter().map(|&v| series_keys(v, &opts.ns).len()).sum();
    let progress = ProgressBar::new((opts.sizes.len() * series_per_size * (opts.runs + 2)) as u64);
    progress.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")
            .expect("a valid template"),
    );

    let mut results = BenchResults {
        meta: Meta {
            tool_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: env!("CUDA_SOBEL_GIT_COMMIT").into(),
            started_unix_s,
            host: host_info(),
            gpu: info,
            context_init_ms: startup.map(|s| s.context_init_ms),
            kernel_load_ms: startup.map(|s| s.kernel_load_ms),
            copy_bandwidth_gbps,
            launch_overhead_us: gpu.as_ref().map(|g| g.launch_overhead_ms(100)).transpose()?.map(|ms| ms * 1e3),
            pinned_h2d_gbps: pinned.map(|p| p.0),
            pinned_d2h_gbps: pinned.map(|p| p.1),
            filter: opts.filter,
            runs: opts.runs,
            kernel_reps: opts.kernel_reps,
        },
        pipeline: Vec::new(),
        kernels: Vec::new(),
        skipped,
        peers: Vec::new(),
        peers_skipped: Vec::new(),
        host_to_host: Vec::new(),
        batch: None,
        report_mapping: Vec::new(),
    };
    let npp = match (opts.peers.contains(&Peer::Npp), &gpu) {
        (false, _) => None,
        (true, None) => {
            results.peers_skipped.push("npp: no GPU".into());
            None
        }
        (true, Some(_)) => match crate::gpu::npp::Npp::load() {
            Ok(npp) => Some(npp),
            Err(e) => {
                results.peers_skipped.push(format!("npp: {e}"));
                None
            }
        },
    };
    if let Some(bw) = copy_bandwidth_gbps {
        let launch = results.meta.launch_overhead_us.unwrap_or(f64::NAN);
        progress.suspend(|| {
            println!("Device-to-device copy bandwidth: {bw:.0} GB/s (bytes read + written)");
            println!("Launch overhead (empty kernel, GPU side): {launch:.1} µs\n");
        });
    }

    std::fs::create_dir_all(&opts.out_dir)?;
    let scratch = opts.out_dir.join(".scratch_output.png");
    for &size in &opts.sizes {
        let path = image_for(size, &opts.image_dir)?;
        let rgb = image_io::decode_rgb(&path)?;
        let reference = cpu::scalar::sobel(&rgb, opts.filter).into_raw();
        for &variant in &variants {
            for variant in series_keys(variant, &opts.ns) {
                progress.set_message(format!("{}x{} {}{}", size.0, size.1, variant.name(), n_label(variant)));
                let ctx = Ctx { opts, gpu: gpu.as_ref(), path: &path, scratch: &scratch, reference: &reference };
                let series = ctx.pipeline_series(variant, size, &progress)?;
                let kernel = ctx.kernel_series(variant, &rgb)?;
                progress.inc(1);
                progress.suspend(|| print!("{}", terminal::series(&series, &kernel, copy_bandwidth_gbps)));
                results.pipeline.push(series);
                results.kernels.push(kernel);
            }
        }
        let report_size = size.0 as u64 * size.1 as u64 <= REPORT_MAPPING_MAX_PIXELS;
        let has_n1 = variants.iter().any(|v| v.n1().is_some());
        if let (true, true, Some(g)) = (has_n1, report_size, &gpu) {
            let ctx = Ctx { opts, gpu: Some(g), path: &path, scratch: &scratch, reference: &reference };
            for &n in &opts.ns {
                let n1 = N1 { n, mapping: Mapping::Report };
                progress.set_message(format!("{}x{} gpu-n1 --mapping report n={n}", size.0, size.1));
                let series = ctx.gpu_kernel_series(Variant::GpuN1(n1), &rgb)?;
                progress.suspend(|| print!("{}", terminal::mapping_line(&series, &results)));
                results.report_mapping.push(series);
            }
        }
        if let (Some(npp), Some(g)) = (&npp, &gpu) {
            match npp.time(g, &rgb, opts.kernel_reps) {
                Ok(samples_ms) => results.peers.push(PeerSeries {
                    width: size.0,
                    height: size.1,
                    peer: Peer::Npp,
                    description: crate::gpu::npp::DESCRIPTION.into(),
                    samples_ms,
                }),
                Err(e) => results.peers_skipped.push(format!("npp at {}x{}: {e}", size.0, size.1)),
            }
        }
        if let (Some(g), Some((up, down))) = (&gpu, pinned) {
            // One stream (copies, kernel, copies in sequence) against four (overlapped): the streams' effect.
            for streams in [1, 4] {
                let series = host_to_host(g, &rgb, &reference, opts, up, down, streams)?;
                progress.suspend(|| print!("{}", terminal::host_line(&series)));
                results.host_to_host.push(series);
            }
        }
        progress.suspend(|| print!("{}", terminal::size_summary(&results, size)));
    }
    let _ = std::fs::remove_file(&scratch);
    progress.finish_and_clear();
    if opts.batch_images > 0 {
        if let Some(&size) = opts.sizes.first() {
            drop(gpu); // batch mode opens its own contexts and streams
            let row = batch_row(opts, size)?;
            print!("{}", terminal::batch_line(&row));
            results.batch = Some(row);
        }
    }
    Ok(results)
}

/// `batch_images` copies of the image of `size`, then three alternating runs of batch mode and of its
/// decode + encode baseline (so that both meet the same file-cache and clock conditions).
fn batch_row(opts: &BenchOptions, size: (u32, u32)) -> anyhow::Result<BatchRow> {
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
            out_dir: out.clone(),
            filter: opts.filter,
            compression: crate::image_io::PngCompression::Default,
            slots: 4,
            devices: None,
            check: false,
            baseline,
            budget: opts.budget,
            keep_orientation: false,
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
fn host_to_host(
    gpu: &Gpu,
    rgb: &RgbImage,
    reference: &[u8],
    opts: &BenchOptions,
    up_gbps: f64,
    down_gbps: f64,
    streams: usize,
) -> anyhow::Result<HostSeries> {
    let (w, h) = (rgb.width() as usize, rgb.height() as usize);
    let limit = variants::max_band_rows(gpu, Variant::GpuStrip, w)?;
    let band_rows = h.div_ceil(16).clamp(64.min(h), limit);
    let mut pipeline = crate::gpu::host_pipeline::HostToHost::new(gpu, w, band_rows, streams, opts.filter)?;
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
    anyhow::ensure!(output == reference, "host → host output differs from cpu-scalar at {w}x{h}");
    let mut samples_ms = Vec::new();
    for _ in 0..opts.kernel_reps.clamp(1, 20) {
        let start = Instant::now();
        pipeline.run(input, output, h)?;
        samples_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let pixels = (w * h) as f64;
    Ok(HostSeries {
        width: w as u32,
        height: h as u32,
        streams: pipeline.streams(),
        band_rows: pipeline.band_rows(),
        samples_ms,
        pcie_bound_ms: 3.0 * pixels / (up_gbps * 1e6) + pixels / (down_gbps * 1e6),
    })
}

/// " n=4" for gpu-n1, nothing for the others.
pub fn n_label(variant: Variant) -> String {
    variant.n1().map(|n1| format!(" n={}", n1.n)).unwrap_or_default()
}

/// What every measurement of one image needs.
struct Ctx<'a> {
    opts: &'a BenchOptions,
    gpu: Option<&'a Gpu>,
    path: &'a Path,
    scratch: &'a Path,
    reference: &'a [u8],
}

impl Ctx<'_> {
    /// One warm-up run, then `runs` timed whole-pipeline runs; every output checked against the reference.
    fn pipeline_series(
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
        let (out, compute_ms, gpu_memory_ms) = match variant {
            Variant::CpuScalar => {
                let (o, ms) = timed(|| cpu::scalar::sobel(&rgb, filter));
                (o.into_raw(), ms, None)
            }
            Variant::CpuRayon => {
                let (o, ms) = timed(|| cpu::rayon::sobel(&rgb, filter));
                (o.into_raw(), ms, None)
            }
            gpu_variant => {
                let gpu = self.gpu.expect("GPU variants run only with a GPU");
                let r = variants::run(gpu, gpu_variant, &rgb, filter, false, 1)?;
                (r.output, r.compute_ms, Some(r.memory_ms))
            }
        };
        anyhow::ensure!(
            out == self.reference,
            "{}: {}{} differs from cpu-scalar — not timing wrong output",
            self.path.display(),
            variant.name(),
            n_label(variant)
        );
        let (written, encode_ms) =
            timed(|| image_io::write_png(self.scratch, rgb.width(), rgb.height(), &out, ExtendedColorType::L8));
        written?;
        let io_ms = decode_ms + encode_ms;
        Ok(RunTimings { io_ms, gpu_memory_ms, compute_ms, total_ms: io_ms + gpu_memory_ms.unwrap_or(0.0) + compute_ms })
    }

    /// Computation only: GPU kernels on resident data (event-timed, rotating buffer copies), CPU
    /// functions on the decoded image (wall clock, until `kernel_reps` or the time budget).
    fn kernel_series(&self, variant: Variant, rgb: &RgbImage) -> anyhow::Result<KernelSeries> {
        if variant.is_gpu() && self.gpu.is_some() {
            return self.gpu_kernel_series(variant, rgb);
        }
        let (width, height) = rgb.dimensions();
        let filter = self.opts.filter;
        let f = |rgb: &RgbImage| match variant {
            Variant::CpuScalar => cpu::scalar::sobel(rgb, filter),
            _ => cpu::rayon::sobel(rgb, filter),
        };
        std::hint::black_box(f(rgb)); // warm-up
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
    fn gpu_kernel_series(&self, variant: Variant, rgb: &RgbImage) -> anyhow::Result<KernelSeries> {
        let gpu = self.gpu.expect("GPU variants run only with a GPU");
        let (width, height) = rgb.dimensions();
        let info = gpu.info()?;
        let set_bytes = (crate::gpu::buffers::bytes_per_pixel(gpu, variant) * width as usize * height as usize).max(1);
        let (free, _) = gpu.ctx.mem_get_info()?;
        // Enough copies to span 3× the L2 (so each run reads from DRAM), within a quarter of free memory.
        let copies = (3 * info.l2_bytes).div_ceil(set_bytes).clamp(1, 64).min((free / 4 / set_bytes).max(1));
        let mut prepared = Prepared::upload(gpu, variant, width, height, rgb.as_raw(), self.opts.filter, copies)?;
        prepared.warm_up()?;
        let samples_ms = prepared.time(self.opts.kernel_reps)?;
        let out = prepared.download()?;
        let mapping = variant.n1().map(|n1| format!(" --mapping {}", n1.mapping.name())).unwrap_or_default();
        anyhow::ensure!(
            out == self.reference,
            "{}: {}{}{mapping} differs from cpu-scalar — not timing wrong output",
            self.path.display(),
            variant.name(),
            n_label(variant),
        );
        let n = variant.n1().map(|n1| n1.n);
        Ok(KernelSeries { width, height, variant, n, buffer_copies: copies, samples_ms })
    }
}

/// The largest image (in pixels) the report-mapping sweep runs on: the report's 2048×1024.
const REPORT_MAPPING_MAX_PIXELS: u64 = 2048 * 1024;

fn host_info() -> HostInfo {
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
