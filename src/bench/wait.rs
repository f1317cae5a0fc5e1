//! "What you wait for": whole commands as a user runs them — this very binary started as a new process
//! for each run, process start, decode, GPU start-up, computation and encode included — timed by wall
//! clock, hyperfine-style (mean ± σ, min … max), from a cold start and a warm one:
//! - **cold**: an empty kernel cache (`CUDA_SOBEL_CACHE` a new empty folder for every run) and the driver's
//!   own JIT cache off (`CUDA_CACHE_DISABLE=1`): a first run on a fresh machine;
//! - **warm**: after one untimed run filled both.
//!
//! The commands: `--variant cpu-rayon`, `--variant gpu-strip` and the fast path `--variant auto`; then, warm,
//! `--variant gpu-strip` on a 1×1 image: what every GPU command costs whatever its image (process start, the
//! driver's and the context's start-up, the kernels' load, and the driver's release of the GPU at exit), the
//! floor the other rows are read against.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;

/// The three commands timed: the CPU, the GPU, and the fast path that picks between them.
pub const COMMANDS: [&str; 3] = ["cpu-rayon", "gpu-strip", "auto"];

/// One command from one kind of start.
#[derive(Debug, Serialize)]
pub struct WaitSeries {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// The `--variant` value.
    pub variant: String,
    /// "cold" or "warm".
    pub start: &'static str,
    /// Wall clock of each whole command, seconds; none when the command could not run as itself (gpu-strip
    /// without a usable GPU: `note` says why).
    pub samples_s: Vec<f64>,
    /// What the command reported about the GPU when it could not use it (e.g. no driver), else `None`.
    pub note: Option<String>,
}

/// Times the three commands on `image`, `runs` times each from each start. `scratch` is a folder for the
/// outputs and kernel caches (emptied afterwards).
pub fn measure(image: &Path, size: (u32, u32), runs: usize, scratch: &Path) -> anyhow::Result<Vec<WaitSeries>> {
    std::fs::create_dir_all(scratch)?;
    let mut series = Vec::new();
    for variant in COMMANDS {
        for start in ["cold", "warm"] {
            series.push(time_command(image, size, variant, start, runs, scratch)?);
        }
    }
    let one_pixel = scratch.join("1x1.png");
    crate::image_io::write_png(&one_pixel, 1, 1, &[90, 120, 150], image::ExtendedColorType::Rgb8)?;
    let mut floor = time_command(&one_pixel, (1, 1), "gpu-strip", "warm", runs, scratch)?;
    let what = "1×1 image: the floor of every GPU command";
    floor.note = Some(floor.note.map_or(what.into(), |n| format!("{what}; {n}")));
    series.push(floor);
    let _ = std::fs::remove_file(&one_pixel);
    Ok(series)
}

/// `runs` whole commands `cuda_sobel IMAGE --variant VARIANT` from a `start` ("cold" or "warm").
fn time_command(
    image: &Path,
    size: (u32, u32),
    variant: &str,
    start: &'static str,
    runs: usize,
    scratch: &Path,
) -> anyhow::Result<WaitSeries> {
    let exe = std::env::current_exe()?;
    let out = scratch.join("wait_output.png");
    let warm_cache = tempfile::tempdir_in(scratch)?;
    let command = |cache: &Path| {
        let mut c = Command::new(&exe);
        c.arg(image).args(["--variant", variant, "--json", "--out"]).arg(&out);
        c.env("CUDA_SOBEL_CACHE", cache).stdout(Stdio::piped()).stderr(Stdio::null());
        if start == "cold" {
            c.env("CUDA_CACHE_DISABLE", "1");
        }
        c
    };
    if start == "warm" {
        command(warm_cache.path()).output()?; // fills both caches, untimed
    }
    let mut samples_s = Vec::with_capacity(runs);
    let mut note = None;
    if variant == "gpu-strip" {
        // A command whose GPU cannot be used computes on the CPU: its time is not gpu-strip's, so the row is
        // skipped, saying why, rather than labelled as a GPU run.
        let probe = command(warm_cache.path()).output()?;
        if let Some(why) = gpu_note(&probe.stdout) {
            let _ = std::fs::remove_file(&out);
            let note = Some(format!("skipped: {why}"));
            return Ok(WaitSeries { width: size.0, height: size.1, variant: variant.into(), start, samples_s, note });
        }
    }
    for _ in 0..runs {
        let cold_cache = tempfile::tempdir_in(scratch)?;
        let cache = if start == "cold" { cold_cache.path() } else { warm_cache.path() };
        let mut c = command(cache);
        let started = Instant::now();
        let done = c.output()?;
        samples_s.push(started.elapsed().as_secs_f64());
        anyhow::ensure!(done.status.success(), "bench: `--variant {variant}` exited with {}", done.status);
        note = gpu_note(&done.stdout);
    }
    let _ = std::fs::remove_file(&out);
    Ok(WaitSeries { width: size.0, height: size.1, variant: variant.into(), start, samples_s, note })
}

/// "GPU unavailable: …" from a run's `--json` report, when its GPU could not be used.
fn gpu_note(json: &[u8]) -> Option<String> {
    let report: serde_json::Value = serde_json::from_slice(json).ok()?;
    let gpu = &report["gpu"];
    (gpu["status"] == "unavailable").then(|| format!("GPU unavailable: {}", gpu["reason"].as_str().unwrap_or("")))
}
