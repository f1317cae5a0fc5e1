//! `--kernel-file my.cu`: a student's kernel checked and timed exactly as ours are.
//!
//! Checked byte for byte against cpu-scalar on the given image — twice, the output poisoned with a
//! different byte each time, so that a pixel the kernel never writes cannot match by luck — and with
//! `--sweep` on awkward sizes for every border. The first differing pixel is reported with what helps find
//! the bug: its position, expected and got, the 3×3 grey neighbourhood, and a hint where one applies (on
//! the border? never written? off by one? wrapped mod 256?). Then timed with CUDA events like every
//! variant, beside gpu-fused, the worked solution of the same contract. Exit codes: 0 identical, 1 a
//! mismatch, 2 a file, compile or usage problem. With `--output canny` the file is instead Canny's link step, checked
//! and timed inside the library's Canny (`canny.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use image::RgbImage;

use crate::cpu;
use crate::engine::{Device, Engine, Launch, RunOptions};
use crate::sobel::{Border, Compat, Filter};
use crate::stats::median;
use crate::variant::Variant;

mod canny;

/// The two poison bytes of the checked runs (every pixel differs from one of them).
const POISONS: [u8; 2] = [0xA5, 0x5A];

/// What `--kernel-file` was given.
#[derive(Clone, Debug)]
pub struct StudentOptions {
    /// The `.cu` file.
    pub file: PathBuf,
    /// `--kernel-name`, when the file has several entries.
    pub kernel_name: Option<String>,
    /// Block shape and pixels per thread.
    pub launch: Launch,
    /// Also check awkward sizes for every border.
    pub sweep: bool,
    /// Timed repetitions.
    pub reps: usize,
    /// `--emit-ptx DIR`: compile only (no GPU), write `DIR/<stem>.ptx`.
    pub emit_ptx: Option<PathBuf>,
    /// `--output canny`: the file is Canny's link step (`cuda/exercises/06_hysteresis.cu`'s contract), not the edges.
    pub canny: Option<crate::canny::Canny>,
}

/// The first pixel where a student's output differs from the reference, and what may explain it.
#[derive(Debug, PartialEq)]
pub struct Mismatch {
    /// Column.
    pub x: usize,
    /// Row.
    pub y: usize,
    /// cpu-scalar's byte.
    pub expected: u8,
    /// The kernel's byte.
    pub got: u8,
    /// How many pixels differ.
    pub count: usize,
    /// The grey values around (x, y); `None` beyond the image's edge.
    pub neighbourhood: [[Option<u8>; 3]; 3],
    /// Hints, most specific first.
    pub hints: Vec<String>,
}

/// Compares `got` with cpu-scalar's output for `rgb`; `poison` is what the output held before the run.
pub fn first_mismatch(rgb: &RgbImage, filter: Filter, got: &[u8], poison: u8) -> Option<Mismatch> {
    let stages = cpu::scalar::sobel_stages(rgb, filter);
    let (w, h) = (stages.width, stages.height);
    let count = got.iter().zip(&stages.magnitude).filter(|(a, b)| a != b).count();
    let i = got.iter().zip(&stages.magnitude).position(|(a, b)| a != b)?;
    let (x, y) = (i % w, i / w);
    let (expected, got) = (stages.magnitude[i], got[i]);
    let mut neighbourhood = [[None; 3]; 3];
    for (dy, row) in neighbourhood.iter_mut().enumerate() {
        for (dx, cell) in row.iter_mut().enumerate() {
            let (nx, ny) = (x as i64 + dx as i64 - 1, y as i64 + dy as i64 - 1);
            if (0..w as i64).contains(&nx) && (0..h as i64).contains(&ny) {
                *cell = Some(stages.grey[ny as usize * w + nx as usize]);
            }
        }
    }
    let mut hints = Vec::new();
    if got == poison {
        hints.push(format!("never written: the pixel still holds the poison byte 0x{poison:02X} put there before the run (does every thread's pixel get an output?)"));
    }
    let (gx, gy) = (stages.gx[i] as i64, stages.gy[i] as i64);
    let unsaturated = ((gx * gx + gy * gy) as f64).sqrt().round() as i64;
    if filter.compat == Compat::Exact && unsaturated > 255 && got as i64 == unsaturated % 256 {
        hints.push(format!(
            "wrapped: got = {unsaturated} mod 256 — the magnitude {unsaturated} was stored in a byte without saturating; store min(255, m)"
        ));
    }
    if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
        hints.push(format!(
            "on the image's border: the stencil reads beyond the edge here, and border {} means {}",
            filter.border.name(),
            match filter.border {
                Border::Replicate => "the nearest edge pixel repeated (…a a | a b c)",
                Border::Zero => "0 outside the image",
                Border::Reflect101 =>
                    "mirrored without repeating the edge (…c b | a b c); a 1-pixel image repeats its pixel",
            }
        ));
    }
    if (got as i32 - expected as i32).abs() == 1 {
        hints.push(
            "off by one: check the rounding — grey = (30R + 59G + 11B + 50) / 100, magnitude = round(√(Gx² + Gy²))"
                .into(),
        );
    }
    Some(Mismatch { x, y, expected, got, count, neighbourhood, hints })
}

/// The mismatch as the student reads it.
pub fn describe(m: &Mismatch, what: &str) -> String {
    let mut s = format!(
        "{what}: pixel (x {}, y {}) is {} but cpu-scalar gives {} ({} pixel(s) differ)\n  grey neighbourhood (· beyond the edge):\n",
        m.x, m.y, m.got, m.expected, m.count
    );
    for row in &m.neighbourhood {
        let cells: Vec<String> = row.iter().map(|c| c.map_or("  ·".into(), |v| format!("{v:3}"))).collect();
        let _ = writeln!(s, "    {}", cells.join(" "));
    }
    for h in &m.hints {
        let _ = writeln!(s, "  hint: {h}");
    }
    s
}

/// The sizes `--sweep` checks beyond the given image: the awkward ones, and a few random ones.
pub fn sweep_sizes() -> Vec<(u32, u32)> {
    vec![(1, 1), (1, 7), (7, 1), (33, 17), (1025, 3), (3, 1025), (97, 61), (258, 131)]
}

/// A student's kernel inside `cuda_sobel bench`: compiled once, checked and timed at every size.
pub struct Bench {
    kernel: crate::engine::StudentKernel,
    label: String,
    launch: Launch,
}

/// The kernel file as messages name it, its text and its entry point; or the problem, in one line.
fn load(opts: &StudentOptions) -> Result<(String, String, String), String> {
    let file = opts.file.display().to_string();
    let text = std::fs::read_to_string(&opts.file).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let entry = crate::engine::pick_entry(&file, &text, opts.kernel_name.as_deref())?;
    Ok((file, text, entry))
}

impl Bench {
    /// Reads and compiles the file for the bench's GPU.
    pub fn new(engine: &Engine, opts: &StudentOptions, filter: Filter) -> anyhow::Result<Bench> {
        let (file, text, entry) = load(opts).map_err(anyhow::Error::msg)?;
        Ok(Bench::compile(engine, opts, &file, &text, &entry, filter)?)
    }

    /// Compiles `text` (the file `file`) with entry `entry` for the engine's GPU.
    fn compile(
        engine: &Engine,
        opts: &StudentOptions,
        file: &str,
        text: &str,
        entry: &str,
        filter: Filter,
    ) -> Result<Bench, crate::engine::EngineError> {
        let kernel = engine.student_kernel(file, text, entry, filter)?;
        let name = opts.file.file_name().map_or(file.to_owned(), |n| n.to_string_lossy().into_owned());
        Ok(Bench { kernel, label: format!("student:{name}"), launch: opts.launch })
    }

    /// Two runs on `img`, the output poisoned with a different byte each time, against cpu-scalar: the
    /// first differing pixel described (headed `what`), or `None` when the bytes are identical.
    fn mismatch(&self, engine: &Engine, img: &RgbImage, filter: Filter, what: &str) -> anyhow::Result<Option<String>> {
        for poison in POISONS {
            let got = engine.student_run(&self.kernel, img, filter.border as i32, self.launch, poison)?;
            if let Some(m) = first_mismatch(img, filter, &got, poison) {
                return Ok(Some(describe(&m, what)));
            }
        }
        Ok(None)
    }

    /// Checks the kernel on `rgb` (poisoned output, twice), then `reps` timed runs; a mismatch is the bench's
    /// [`DiffersFromReference`] error, with the first differing pixel.
    pub fn check_and_time(
        &self,
        engine: &Engine,
        rgb: &RgbImage,
        filter: Filter,
        reps: usize,
    ) -> anyhow::Result<StudentSeries> {
        let what = format!("{} differs at {}×{}", self.label, rgb.width(), rgb.height());
        if let Some(described) = self.mismatch(engine, rgb, filter, &what)? {
            return Err(DiffersFromReference(described).into());
        }
        let samples_ms = engine.student_time(&self.kernel, rgb, filter.border as i32, self.launch, reps)?;
        Ok(StudentSeries { width: rgb.width(), height: rgb.height(), label: self.label.clone(), samples_ms })
    }
}

/// Runs the whole `--kernel-file` flow; returns the exit code, having printed the outcome.
pub fn run(image: Option<&Path>, filter: Filter, opts: &StudentOptions) -> anyhow::Result<u8> {
    let (file, text, entry) = match load(opts) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("cuda_sobel: {e}");
            return Ok(2);
        }
    };
    if let Some(dir) = &opts.emit_ptx {
        let ptx = match crate::engine::student_ptx(&file, &text, filter) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("cuda_sobel: {e}");
                return Ok(2);
            }
        };
        std::fs::create_dir_all(dir)?;
        let stem = opts.file.file_stem().map_or("kernel".into(), |s| s.to_string_lossy().into_owned());
        let path = dir.join(format!("{stem}.ptx"));
        std::fs::write(&path, ptx)?;
        crate::say!("wrote {} (entry {entry})\n", path.display());
        if image.is_none() {
            return Ok(0);
        }
    }
    let Some(image) = image else {
        eprintln!("cuda_sobel: --kernel-file needs an image to run on (or --emit-ptx DIR to compile only)");
        return Ok(2);
    };
    let rgb = crate::image_io::decode_rgb(image)?;
    let engine = match Engine::new(Device::Cuda(0), filter) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("cuda_sobel: --kernel-file runs on the GPU: {e}");
            return Ok(2);
        }
    };
    let bench = match Bench::compile(&engine, opts, &file, &text, &entry, filter) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cuda_sobel: {e}");
            return Ok(2);
        }
    };
    let label = &bench.label;
    if let Some(c) = opts.canny {
        return canny::run(&engine, &bench.kernel, (label, image), &rgb, (filter, c), opts);
    }
    // The image, then (with --sweep) every awkward size for every border.
    let mut cases = vec![(
        rgb.clone(),
        filter,
        format!("{} ({}×{}, border {})", image.display(), rgb.width(), rgb.height(), filter.border.name()),
    )];
    if opts.sweep {
        for (k, &(w, h)) in sweep_sizes().iter().enumerate() {
            for border in Border::ALL {
                if filter.compat == Compat::Report && border != Border::Zero {
                    continue;
                }
                cases.push((
                    crate::generate::noise(w, h, 7 + k as u64),
                    Filter { border, ..filter },
                    format!("{w}×{h}, border {}", border.name()),
                ));
            }
        }
    }
    for (img, f, what) in &cases {
        if let Some(described) = bench.mismatch(&engine, img, *f, &format!("{label} differs on {what}"))? {
            crate::say!("{described}");
            return Ok(1);
        }
    }
    let samples = engine.student_time(&bench.kernel, &rgb, filter.border as i32, opts.launch, opts.reps)?;
    let ms = median(&mut samples.clone());
    let fused = engine.run(Variant::GpuFused, &rgb, filter, RunOptions { warm_up: true, reps: opts.reps })?;
    let px = rgb.width() as f64 * rgb.height() as f64;
    let gbps = |ms: f64| 4.0 * px / (ms * 1e6);
    let checked = if opts.sweep {
        format!("identical (2 poisoned runs; sweep: {} cases)", cases.len() - 1)
    } else {
        "identical (2 poisoned runs)".to_string()
    };
    let mut s = format!(
        "{label}: entry {entry}, blocks {}×{}, {} pixel(s) per thread, on {} ({}×{}, border {})\n\n",
        opts.launch.block.0,
        opts.launch.block.1,
        opts.launch.pixels_per_thread,
        image.display(),
        rgb.width(),
        rgb.height(),
        filter.border.name()
    );
    let _ = writeln!(s, "{:<24} {:>12} {:>8}  check", "variant", "compute ms", "GB/s");
    let _ = writeln!(s, "{label:<24} {ms:>12.4} {:>8.0}  {checked}", gbps(ms));
    let _ = writeln!(
        s,
        "{:<24} {:>12.4} {:>8.0}  the worked solution (cuda/fused.cu)",
        "gpu-fused",
        fused.compute_ms,
        gbps(fused.compute_ms)
    );
    let _ = writeln!(
        s,
        "\ncompute: median of {} event-timed runs after a warm-up; GB/s = 4 bytes per pixel / compute",
        opts.reps
    );
    crate::say!("{s}");
    Ok(0)
}

/// A student's kernel timed like ours at one size.
#[derive(Debug, serde::Serialize)]
pub struct StudentSeries {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `student:<file name>`.
    pub label: String,
    /// Event-timed runs, ms.
    pub samples_ms: Vec<f64>,
}

/// A variant's output differed from cpu-scalar's: a bug, which the bench refuses to time (exit 1, as the
/// single-image command).
#[derive(Debug, thiserror::Error)]
#[error("{0} differs from cpu-scalar — not timing wrong output")]
pub struct DiffersFromReference(pub String);
