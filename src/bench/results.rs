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

/// " n=4" for gpu-n1, nothing for the others.
pub fn n_label(variant: Variant) -> String {
    variant.n1().map(|n1| format!(" n={}", n1.n)).unwrap_or_default()
}

/// A variant's output differed from cpu-scalar's: a bug, which the bench refuses to time (exit 1, as the
/// single-image command).
#[derive(Debug, thiserror::Error)]
#[error("{0} differs from cpu-scalar — not timing wrong output")]
pub struct Mismatch(pub String);
