//! What one benchmark measured: every series, one [`BenchResults`], and the lookups the views use.

use serde::Serialize;

use crate::engine::DeviceInfo;
use crate::sobel::Filter;
use crate::stats::Summary;
use crate::variant::Variant;
/// A peer implementation the bench can time beside ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Peer {
    /// NVIDIA NPP: nppiRGBToGray + nppiGradientVectorSobelBorder (loaded at run time).
    Npp,
}

impl Peer {
    /// Every value, in the order the help lists them.
    pub const ALL: [Peer; 1] = [Peer::Npp];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Npp => "npp",
        }
    }
}

/// Every number one benchmark produced.
#[derive(Debug, Serialize)]
pub struct BenchResults {
    /// The machine, the device, the settings.
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
    /// Whole commands, process start included, cold and warm ([`super::wait`]).
    pub wait: Vec<super::wait::WaitSeries>,
    /// A student's kernel (`bench --kernel-file`), computation alone, checked first.
    pub student: Vec<StudentSeries>,
    /// OpenCV's whole pipeline at each size (`scripts/opencv_baseline.py`), beside the report's Tables 9–10.
    pub opencv: Vec<OpenCvRow>,
    /// Why OpenCV was not measured, when it was not.
    pub opencv_skipped: Option<String>,
}

/// OpenCV's imread → Sobel → imwrite at one size, as `scripts/opencv_baseline.py` measures it (means).
#[derive(Debug, Serialize)]
pub struct OpenCvRow {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// imread + imwrite, ms.
    pub io_ms: f64,
    /// cvtColor, two Sobel, magnitude, convertScaleAbs, ms.
    pub computation_ms: f64,
    /// All of it, ms.
    pub total_ms: f64,
    /// The computation alone, median of 20 runs after a warm-up (as the bench times cpu-rayon's), ms.
    pub computation_median_ms: f64,
    /// The script's line, OpenCV's version included.
    pub line: String,
}

pub use crate::student::{DiffersFromReference, StudentSeries};

/// Batch throughput: the whole batch (with the GPU when there is one) against decode + encode alone.
#[derive(Debug, Serialize)]
pub struct BatchRow {
    /// Copies of the image.
    pub images: usize,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// What computed the edges.
    pub engine: String,
    /// Images per second of each run, alternating with the baseline's.
    pub batch_images_per_s: Vec<f64>,
    /// Images per second of decode + encode alone, each run.
    pub baseline_images_per_s: Vec<f64>,
}

/// One image size host → host: upload, gpu-strip, download, from pinned memory to pinned memory.
#[derive(Debug, Serialize)]
pub struct HostSeries {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Streams the bands went to.
    pub streams: usize,
    /// Output rows per band.
    pub band_rows: usize,
    /// Wall clock of each run, ms.
    pub samples_ms: Vec<f64>,
    /// The copies alone at the pinned bandwidths measured in this run: 3 bytes a pixel up, 1 down, ms.
    pub pcie_bound_ms: f64,
}

/// A peer's computation-only samples at one size.
#[derive(Debug, Serialize)]
pub struct PeerSeries {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Which peer.
    pub peer: Peer,
    /// What exactly was timed.
    pub description: String,
    /// Milliseconds per run.
    pub samples_ms: Vec<f64>,
}

/// How and where the numbers were taken.
#[derive(Debug, Serialize)]
pub struct Meta {
    /// This tool's version.
    pub tool_version: String,
    /// The commit the binary was built from.
    pub git_commit: String,
    /// Seconds since the Unix epoch when the benchmark started.
    pub started_unix_s: u64,
    /// The CPU side.
    pub host: HostInfo,
    /// The device, when there is one.
    pub gpu: Option<DeviceInfo>,
    /// Context creation (excluded from every measurement).
    pub context_init_ms: Option<f64>,
    /// Kernel compile or cache read and load (excluded likewise).
    pub kernel_load_ms: Option<f64>,
    /// Device-to-device copy bandwidth (bytes read + written), GB/s.
    pub copy_bandwidth_gbps: Option<f64>,
    /// Pinned host → device and device → host copy bandwidth, GB/s.
    pub pinned_h2d_gbps: Option<f64>,
    /// Pinned device → host bandwidth, GB/s.
    pub pinned_d2h_gbps: Option<f64>,
    /// Event-timed launch of an empty kernel on a busy GPU (no host gap), µs: the floor under any kernel.
    pub launch_overhead_us: Option<f64>,
    /// Operator, border and arithmetic of every measurement.
    pub filter: Filter,
    /// Whole-pipeline runs per series.
    pub runs: usize,
    /// Computation-only repetitions per series (at most).
    pub kernel_reps: usize,
    /// What every variant computed instead of the edges, with `--canny`: "Canny, aperture 3, l1, thresholds 50/150".
    pub canny: Option<String>,
}

/// The CPU side of the machine.
#[derive(Debug, Serialize)]
pub struct HostInfo {
    /// CPU model.
    pub cpu: String,
    /// Threads rayon uses.
    pub threads: usize,
    /// Operating system and architecture.
    pub os: String,
}

/// One variant (and n, for gpu-n1) at one size: every whole-pipeline run.
#[derive(Debug, Serialize)]
pub struct PipelineSeries {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Which variant.
    pub variant: Variant,
    /// gpu-n1's n (also in `variant`), for the exports.
    pub n: Option<u32>,
    /// Every run after the warm-up.
    pub runs: Vec<RunTimings>,
}

/// One whole-pipeline run, milliseconds: the same type as the single-image command's rows.
pub type RunTimings = crate::variant::Timings;

/// One variant (and n) at one size: computation-only samples, milliseconds.
#[derive(Debug, Serialize)]
pub struct KernelSeries {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Which variant.
    pub variant: Variant,
    /// gpu-n1's n (also in `variant`), for the exports.
    pub n: Option<u32>,
    /// How many copies of the device buffers the runs rotated over (1 for CPU variants).
    pub buffer_copies: usize,
    /// Milliseconds per run.
    pub samples_ms: Vec<f64>,
}

/// A variant that could not run.
#[derive(Debug, Serialize)]
pub struct Skipped {
    /// Which variant.
    pub variant: Variant,
    /// Why.
    pub reason: String,
}

/// The category a summary is taken over.
#[derive(Clone, Copy, Debug)]
pub enum Category {
    /// Decode + encode.
    Io,
    /// Allocations and copies.
    GpuMemory,
    /// The computation.
    Computation,
    /// All of it.
    Total,
}

impl PipelineSeries {
    /// Mean, σ, range and median of category `c` over the runs.
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
    /// Mean, σ, range and median of the samples.
    pub fn summary(&self) -> Summary {
        Summary::of(&self.samples_ms).expect("a kernel series has samples")
    }

    /// width × height.
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

    /// `peer`'s series at `size`.
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

/// " n=4" for gpu-n1, nothing for the others.
pub fn n_label(variant: Variant) -> String {
    variant.n1().map(|n1| format!(" n={}", n1.n)).unwrap_or_default()
}
