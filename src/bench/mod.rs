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
mod markdown;
mod measure;
pub mod plots;
pub mod report_tables;
mod results;
pub mod study;
pub mod terminal;
pub mod wait;

pub use results::*;

use std::path::{Path, PathBuf};

use image::ExtendedColorType;
use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::{Device, Engine};
use crate::sobel::{Filter, Ksize};
use crate::variant::{Mapping, Variant, N1};
use crate::{cpu, generate, image_io};
use measure::{batch_row, host_info, host_to_host, Ctx, REPORT_MAPPING_MAX_PIXELS};

/// What to measure (built by the CLI).
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Image sizes, each made on demand when not in `imgs_in/`.
    pub sizes: Vec<(u32, u32)>,
    /// Whole-pipeline runs per size and variant.
    pub runs: usize,
    /// Kernel-only repetitions (CPU variants stop earlier when they pass `cpu_budget_s`).
    pub kernel_reps: usize,
    /// Seconds after which a CPU variant stops repeating (after three runs).
    pub cpu_budget_s: f64,
    /// n values of the gpu-n1 sweep.
    pub ns: Vec<u32>,
    /// Variants to measure.
    pub variants: Vec<Variant>,
    /// Operator, border and arithmetic.
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
    /// Whole commands timed per command and start for "what you wait for", on the largest size (0: skip).
    pub wait_runs: usize,
    /// A student's kernel to check and time beside every variant (`--kernel-file`).
    pub student: Option<crate::student::StudentOptions>,
    /// Computation alone (each output still checked against the reference) and peers only: no whole-pipeline,
    /// host → host, OpenCV or whole-command runs. For tuning, where only the kernels' times matter
    /// (`scripts/strip-tuning.sh`).
    pub kernel_only: bool,
    /// Canny instead of the edges (`--canny`): every variant computes it, checked against the definition; NPP's Canny
    /// is the peer.
    pub canny: Option<crate::canny::Canny>,
}

/// Host bytes per pixel the bench needs beyond one pipeline run of every variant: the pinned input and
/// output buffers of the host → host measurement.
const HOST_TO_HOST_BYTES_PER_PIXEL: u64 = 4;

/// Refuses, before any work, a size whose estimated peak is over the budget.
fn check_budget(opts: &BenchOptions) -> crate::error::Result<()> {
    for &(w, h) in &opts.sizes {
        let header = crate::image_io::Header { width: w, height: h, stored_bytes_per_pixel: 3, reorients: false };
        let per_pixel = crate::pipeline::peak_bytes_per_pixel(&header, opts.variants.len(), false, true)
            + HOST_TO_HOST_BYTES_PER_PIXEL;
        let needed = crate::memory::image_bytes(w, h, per_pixel);
        opts.budget.check(Path::new(&format!("bench size {w}x{h}")), w, h, needed)?;
    }
    Ok(())
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

/// OpenCV's whole pipeline on `image`, by `python3 scripts/opencv_baseline.py` (its last line), when python3
/// with cv2 and the script are at hand; else why not.
fn opencv_row(image: &Path, (width, height): (u32, u32), ksize: Ksize) -> Result<OpenCvRow, String> {
    let script = Path::new("scripts/opencv_baseline.py");
    if !script.is_file() {
        return Err(
            "scripts/opencv_baseline.py not found from this folder (run the bench from the repository root)".into()
        );
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).to_string();
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(image)
        .args([threads.as_str(), "20", ksize.name()])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("python3 with cv2 is needed: {}", err.lines().last().unwrap_or("").trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line =
        text.lines().find(|l| l.starts_with("opencv whole pipeline")).ok_or("no whole-pipeline line")?.to_owned();
    // "opencv whole pipeline WxH: I/O 12.3 ms + computation 4.56 ms = total 17.0 ms (mean of 4 runs)"
    let first = text.lines().next().unwrap_or("");
    let number_in = |line: &str, key: &str| -> Result<f64, String> {
        let rest = line.split(key).nth(1).ok_or(format!("no {key:?} in {line:?}"))?;
        rest.split_whitespace().next().and_then(|v| v.parse().ok()).ok_or(format!("no number after {key:?}"))
    };
    let number_after = |key: &str| number_in(&line, key);
    let versions: Vec<&str> = text.lines().take(1).collect();
    Ok(OpenCvRow {
        width,
        height,
        io_ms: number_after("I/O ")?,
        computation_ms: number_after("computation ")?,
        total_ms: number_after("total ")?,
        computation_median_ms: number_in(first, "median ")?,
        line: format!("{} / {line}", versions.join("")),
    })
}

/// Runs every measurement; the budget is checked first for every size.
pub fn run(opts: &BenchOptions) -> anyhow::Result<BenchResults> {
    check_budget(opts)?;
    let started_unix_s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // Whole commands first, while this process holds no GPU: a driver kept open by another process (this
    // one, or a persistence daemon) shortened a 2048×1024 gpu-strip command from 0.35 to 0.22 s on the H200
    // machine, which a user running one command on an idle machine does not see.
    let whole_commands = opts.wait_runs > 0 && !opts.kernel_only;
    let wait = match (whole_commands, opts.sizes.iter().max_by_key(|(w, h)| *w as u64 * *h as u64)) {
        (true, Some(&size)) => {
            crate::say!("What you wait for: whole commands at {}x{}, cold and warm…\n", size.0, size.1);
            let path = image_for(size, &opts.image_dir)?;
            let scratch = opts.out_dir.join(".scratch_wait");
            let wait = wait::measure(&path, size, opts.wait_runs, &scratch)?;
            let _ = std::fs::remove_dir_all(&scratch);
            crate::say!("{}", terminal::wait_lines(&wait));
            wait
        }
        _ => Vec::new(),
    };
    let wants_gpu = opts.variants.iter().any(|v| v.is_gpu());
    let engine = Engine::for_variants(if wants_gpu { Device::Auto } else { Device::Cpu }, opts.filter, &opts.variants)?;
    let mut skipped = Vec::new();
    if let Some(e) = engine.gpu_error() {
        for &variant in opts.variants.iter().filter(|v| v.is_gpu()) {
            skipped.push(Skipped { variant, reason: e.to_string() });
        }
    }
    let (meter, startup) = (engine.meter(), engine.startup());
    let info = meter.as_ref().map(|m| m.info()).transpose()?;
    let copy_bandwidth_gbps = meter.as_ref().map(|m| m.copy_bandwidth_gbps()).transpose()?;
    let pinned = meter.as_ref().map(|m| m.pinned_bandwidth_gbps()).transpose()?;
    let variants: Vec<Variant> = opts.variants.iter().copied().filter(|v| !v.is_gpu() || meter.is_some()).collect();
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
            launch_overhead_us: meter.as_ref().map(|m| m.launch_overhead_ms(100)).transpose()?.map(|ms| ms * 1e3),
            pinned_h2d_gbps: pinned.map(|p| p.0),
            pinned_d2h_gbps: pinned.map(|p| p.1),
            filter: opts.filter,
            runs: opts.runs,
            kernel_reps: opts.kernel_reps,
            canny: opts.canny.map(|c| {
                let norm = if c.norm == crate::sobel::Norm::L2 { "l2" } else { "l1" };
                format!("Canny, aperture {}, {norm}, thresholds {}/{}", c.ksize.name(), c.low, c.high)
            }),
        },
        pipeline: Vec::new(),
        kernels: Vec::new(),
        skipped,
        peers: Vec::new(),
        peers_skipped: Vec::new(),
        host_to_host: Vec::new(),
        batch: None,
        report_mapping: Vec::new(),
        wait: Vec::new(),
        student: Vec::new(),
        opencv: Vec::new(),
        opencv_skipped: None,
    };
    let student = match (&opts.student, meter.is_some()) {
        (Some(s), true) => Some(crate::student::Bench::new(&engine, s, opts.filter)?),
        (Some(_), false) => {
            anyhow::bail!("--kernel-file needs a GPU: {}", engine.gpu_error().map_or(String::new(), |e| e.to_string()))
        }
        (None, _) => None,
    };
    let npp = match (opts.peers.contains(&Peer::Npp), &meter) {
        (false, _) => None,
        (true, None) => {
            results.peers_skipped.push("npp: no GPU".into());
            None
        }
        (true, Some(m)) => match m.npp() {
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
            crate::say!("Device-to-device copy bandwidth: {bw:.0} GB/s (bytes read + written)\n");
            crate::say!("Launch overhead (empty kernel, GPU side): {launch:.1} µs\n\n");
        });
    }

    std::fs::create_dir_all(&opts.out_dir)?;
    let scratch = opts.out_dir.join(".scratch_output.png");
    for &size in &opts.sizes {
        let path = image_for(size, &opts.image_dir)?;
        let rgb = image_io::decode_rgb(&path)?;
        let reference = match &opts.canny {
            Some(c) => {
                let stages = cpu::scalar::sobel_stages(&rgb, opts.filter);
                c.edges(&stages.gx, &stages.gy, rgb.width() as usize, rgb.height() as usize)
            }
            None => cpu::scalar::sobel(&rgb, opts.filter).into_raw(),
        };
        for &variant in &variants {
            for variant in series_keys(variant, &opts.ns) {
                progress.set_message(format!("{}x{} {}{}", size.0, size.1, variant.name(), n_label(variant)));
                let ctx = Ctx { opts, engine: &engine, path: &path, scratch: &scratch, reference: &reference };
                let series = if opts.kernel_only {
                    PipelineSeries {
                        width: size.0,
                        height: size.1,
                        variant,
                        n: variant.n1().map(|n1| n1.n),
                        runs: Vec::new(),
                    }
                } else {
                    ctx.pipeline_series(variant, size, &progress)?
                };
                let kernel = ctx.kernel_series(variant, &rgb)?;
                progress.inc(1);
                progress.suspend(|| crate::say!("{}", terminal::series(&series, &kernel, copy_bandwidth_gbps)));
                results.pipeline.push(series);
                results.kernels.push(kernel);
            }
        }
        let report_size = size.0 as u64 * size.1 as u64 <= REPORT_MAPPING_MAX_PIXELS;
        let has_n1 = variants.iter().any(|v| v.n1().is_some());
        if has_n1 && report_size && meter.is_some() {
            let ctx = Ctx { opts, engine: &engine, path: &path, scratch: &scratch, reference: &reference };
            for &n in &opts.ns {
                let n1 = N1 { n, mapping: Mapping::Report };
                progress.set_message(format!("{}x{} gpu-n1 --mapping report n={n}", size.0, size.1));
                let series = ctx.gpu_kernel_series(Variant::GpuN1(n1), &rgb)?;
                progress.suspend(|| crate::say!("{}", terminal::mapping_line(&series, &results)));
                results.report_mapping.push(series);
            }
        }
        let opencv =
            if opts.kernel_only { Err("--kernel-only".into()) } else { opencv_row(&path, size, opts.filter.ksize) };
        match opencv {
            Ok(row) => results.opencv.push(row),
            Err(why) => results.opencv_skipped = Some(why),
        }
        if let Some(s) = &student {
            let series = s.check_and_time(&engine, &rgb, opts.filter, opts.kernel_reps)?;
            progress.suspend(|| crate::say!("{}", terminal::student_line(&series)));
            results.student.push(series);
        }
        if let Some(npp) = &npp {
            let (timed, description) = match &opts.canny {
                Some(c) => (
                    npp.time_canny(&rgb, c, opts.kernel_reps),
                    "NPP nppiFilterCannyBorder on the device-resident grey (Sobel, replicate)",
                ),
                None => (
                    npp.time(&rgb, opts.filter.ksize, opts.kernel_reps),
                    crate::engine::npp_description(opts.filter.ksize).unwrap_or_default(),
                ),
            };
            match timed {
                Ok(samples_ms) => results.peers.push(PeerSeries {
                    width: size.0,
                    height: size.1,
                    peer: Peer::Npp,
                    description: description.into(),
                    samples_ms,
                }),
                Err(e) => results.peers_skipped.push(format!("npp at {}x{}: {e}", size.0, size.1)),
            }
        }
        match (&meter, pinned) {
            (Some(m), Some((up, down))) if !opts.kernel_only => {
                // One stream (copies, kernel, copies in sequence) against four (overlapped): the streams' effect.
                for streams in [1, 4] {
                    let series = host_to_host(m, &rgb, &reference, opts, up, down, streams)?;
                    progress.suspend(|| crate::say!("{}", terminal::host_line(&series)));
                    results.host_to_host.push(series);
                }
            }
            _ => {}
        }
        progress.suspend(|| crate::say!("{}", terminal::size_summary(&results, size)));
    }
    let _ = std::fs::remove_file(&scratch);
    progress.finish_and_clear();
    results.wait = wait;
    drop(npp);
    drop(engine); // batch mode opens its own contexts and streams
    if opts.batch_images > 0 {
        if let Some(&size) = opts.sizes.first() {
            let row = batch_row(opts, size)?;
            crate::say!("{}", terminal::batch_line(&row));
            results.batch = Some(row);
        }
    }
    Ok(results)
}
