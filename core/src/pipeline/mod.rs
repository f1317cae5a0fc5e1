//! The variant list and one run of every selected variant on one image, with the report's timing
//! categories: I/O (decode + encode), GPU memory movement, computation, total.
//!
//! `cpu-scalar` is the reference every other variant's bytes are compared with. It runs when variants are
//! compared (several selected — the default teaching run selects all — or `--check`) and for
//! `--intermediate`; `--variant X` alone runs X and nothing else, and the table says no check ran.

mod decode;
mod product;
mod streamed;

pub use product::Product;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use crate::auto::{auto_variant, Auto, AUTO};
use crate::cpu;
use crate::engine::{Engine, JpegDecoder, LoadStats, RunOptions};
use crate::error::Result;
use crate::image_io::{self, Format, Header, Target};
use crate::memory::Budget;
use crate::sobel::Filter;
pub use crate::variant::{count_mismatches, timed, Mapping, Timings, Variant, N1};

/// What to run, already validated (the CLI builds it; nothing here knows about clap).
#[derive(Clone, Debug)]
pub struct Options {
    /// The image file (`-`: standard input).
    pub input: PathBuf,
    /// Where the edge image goes (`-`: standard output).
    pub output: PathBuf,
    /// Pixels per thread for `gpu-n1` and their mapping.
    pub n1: N1,
    /// Operator, kernel size, border, arithmetic, grey and norm.
    pub filter: Filter,
    /// What is written: the edges (`filter.norm` says which), a gradient, the direction, Canny's edges.
    pub product: Product,
    /// Canny's thresholds, norm and aperture, with `--output canny`.
    pub canny: Option<crate::canny::Canny>,
    /// Variants to run, in table order.
    pub variants: Vec<Variant>,
    /// Also write the grey, |Gx| and |Gy| images beside the output.
    pub intermediate: bool,
    /// Timed repetitions of each GPU variant's kernels (after one warm-up); the table shows the median.
    pub gpu_reps: usize,
    /// PNG compression effort of the written images (part of the I/O time).
    pub compression: image_io::PngCompression,
    /// Host memory the run may use; the image is refused from its header when its estimate is larger.
    pub budget: Budget,
    /// Keep the stored orientation instead of applying the EXIF one.
    pub keep_orientation: bool,
    /// Run cpu-scalar and compare even when one variant is selected (with several, they are always
    /// compared).
    pub check: bool,
    /// Where a JPEG is decoded: the CPU decoder (auto, cpu) or nvJPEG on the GPU (gpu).
    pub jpeg_decoder: JpegDecoder,
    /// The fast path (`--variant auto`): `variants` is ignored; [`auto_variant`] picks cpu-rayon or
    /// gpu-strip from the image's size once its header is read, and it runs once, without repetitions.
    pub auto: bool,
}

impl Options {
    /// Whether cpu-scalar runs as the reference: when variants are compared (more than one, or `check`),
    /// when it is the one asked for, and for `--intermediate` (its stages are those images).
    pub fn needs_reference(&self) -> bool {
        self.check
            || self.intermediate
            || (!self.auto && (self.variants.len() != 1 || self.variants[0] == Variant::CpuScalar))
    }
}

/// Everything one run measured; the table and `--json` are two views of it.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The image file (`-`: standard input).
    pub input: PathBuf,
    /// Where the edge image goes (`-`: standard output).
    pub output: PathBuf,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Operator, kernel size, border, arithmetic, grey and norm.
    pub filter: Filter,
    /// What was written.
    pub product: Product,
    /// gpu-n1's granularity.
    pub n1: N1,
    /// Timed repetitions of each GPU variant.
    pub gpu_reps: usize,
    /// Decoding the input.
    pub decode_ms: f64,
    /// Encoding and writing the outputs.
    pub encode_ms: f64,
    /// Whether the GPU ran, and what opening it cost.
    pub gpu: GpuStatus,
    /// One row per variant, in table order.
    pub rows: Vec<Row>,
    /// What the user should know about the input (EXIF orientation applied, frames of an animation).
    pub notes: Vec<String>,
}

/// Whether the GPU ran.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum GpuStatus {
    /// The GPU ran; context start-up (the dummy allocation) is reported apart, as in the report.
    Available {
        /// The device's name.
        device: String,
        /// Context creation and the dummy allocation.
        context_init_ms: f64,
        /// Kernel compile or cache read and load.
        kernel_load_ms: f64,
        /// How the kernels were obtained.
        kernels: LoadStats,
    },
    /// A GPU variant was selected but the GPU could not be used.
    Unavailable {
        /// Why, in one line.
        reason: String,
    },
    /// No GPU variant was selected.
    NotRequested,
}

/// One variant's line of the table.
#[derive(Debug, Serialize)]
pub struct Row {
    /// Which variant.
    pub variant: Variant,
    /// What it measured, or why it did not run.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What one variant did.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Outcome {
    /// It ran.
    Ran {
        /// Its times.
        #[serde(flatten)]
        timings: Timings,
        /// Pixels whose byte differs from `cpu-scalar`'s (anything but 0 is a failure); `None` when no
        /// reference ran (one variant, no `--check`).
        mismatched_pixels: Option<u64>,
    },
    /// It did not run.
    Skipped {
        /// Why, in one line.
        reason: String,
    },
}

/// The default of [`Options::gpu_reps`].
pub const GPU_REPS: usize = 10;

impl Report {
    /// True when every variant that ran produced the reference's bytes.
    pub fn all_identical(&self) -> bool {
        self.rows.iter().all(|r| !matches!(r.outcome, Outcome::Ran { mismatched_pixels: Some(1..), .. }))
    }

    /// cpu-scalar's computation time, when it ran.
    pub fn reference_compute_ms(&self) -> Option<f64> {
        self.rows.iter().find(|r| r.variant == Variant::CpuScalar).and_then(|r| match r.outcome {
            Outcome::Ran { timings, .. } => Some(timings.compute_ms),
            Outcome::Skipped { .. } => None,
        })
    }
}

/// The default output path: `imgs_out/<stem>_sobel.png` (`imgs_out/stdin_sobel.png` for `-`).
pub fn default_output(input: &Path) -> PathBuf {
    let input = if input.as_os_str() == image_io::decode::STDIN { Path::new("stdin") } else { input };
    image_io::edge_path(Path::new("imgs_out"), input, Format::Png)
}

/// Peak host bytes per pixel of one run: the decode (see [`Header::decode_peak_bytes_per_pixel`]), or,
/// after it, the RGB image (3) + one output byte per selected variant + with the reference, cpu-scalar's
/// full-size stages (grey 1, Gx 4, Gy 4, magnitude 1: 32-bit gradients hold every kernel size) + one byte for
/// the |G| image being encoded with `--intermediate`, whichever is larger. One variant without a check: 4.
/// docs/cli.md ("Memory") lists the figures; `tests/memory.rs` holds a real run's peak RSS to it.
pub fn peak_bytes_per_pixel(header: &Header, variants: usize, intermediate: bool, reference: bool) -> u64 {
    let compute =
        3 + variants as u64 + if reference { cpu::scalar::STAGES_BYTES_PER_PIXEL } else { 0 } + u64::from(intermediate);
    header.decode_peak_bytes_per_pixel().max(compute)
}

/// The outputs of a run, checked before any work: the edge image and, with `--intermediate`, its siblings.
pub fn plan_outputs(opts: &Options) -> Result<Vec<Target>> {
    let inputs = [opts.input.clone()];
    let kind = opts.product.kind(&opts.filter.stencil());
    image_io::output::check_holds(&opts.output, kind, &format!("--output {}", opts.product.name()))?;
    let main = image_io::output::plan(&opts.output, &inputs)?;
    let mut targets = vec![main];
    if opts.intermediate {
        if !matches!(targets[0], Target::File { .. }) {
            return Err(crate::error::Error::Write {
                path: opts.output.clone(),
                source: std::io::Error::other(
                    "--intermediate needs a file name for --out (its siblings are named after it)",
                ),
            });
        }
        for suffix in INTERMEDIATES {
            targets.push(image_io::output::plan(&sibling(&opts.output, suffix), &inputs)?);
        }
    }
    Ok(targets)
}

/// The intermediate images' suffixes, in the order they are written.
const INTERMEDIATES: [&str; 3] = ["grey", "gx", "gy"];

/// Runs every selected variant on one image and writes the outputs; see the module doc.
pub fn run(opts: &Options) -> Result<Report> {
    run_keeping_engine(opts).map(|(report, _engine)| report)
}

/// [`run`], handing back the engine (and with it the GPU context) instead of closing it: a command that
/// exits next can leave it to the OS ([`crate::interrupt::exit_now`]). Closing it cost 56–70 ms of a 0.3 s
/// command on the H200, and the driver's exit hooks another ~95 ms (`CUDA_SOBEL_TRACE=1`).
pub fn run_keeping_engine(opts: &Options) -> Result<(Report, Engine)> {
    // Output problems are found before any work.
    let targets = plan_outputs(opts)?;
    if let Some(streamed) = streamed::run(opts, &targets)? {
        return Ok(streamed);
    }

    // The image is decoded while the GPU opens; `auto` chooses its variant from the header.
    let decode::Opened { engine, mut variants, decoded, decode_ms } = decode::decode_and_open(opts)?;
    let mut notes_before = Vec::new();
    if let (true, Some(v)) = (opts.auto, variants.first()) {
        let (w, h) = decoded.rgb.dimensions();
        notes_before.push(auto_note(*v, w, h));
    }
    if opts.auto && variants.iter().any(|v| v.is_gpu()) && !engine.has_gpu() {
        notes_before.push(auto_without_gpu(&engine));
        variants = vec![Variant::CpuRayon];
    }
    let gpu_status = gpu_status(variants.iter().any(|v| v.is_gpu()), &engine);

    let image_io::Decoded { rgb, mut notes } = decoded;
    notes.extend(notes_before);
    let (width, height) = rgb.dimensions();

    // The reference runs only when variants are compared (or its stages are asked for): `--variant X` alone
    // runs X and nothing else. Every variant's output is its bytes (gradients: both planes), compared whole.
    let output = opts.product.output(&opts.filter.stencil());
    let (reference, scalar_ms) = if opts.needs_reference() {
        let ((stages, bytes), ms) = timed(|| {
            let stages = cpu::scalar::sobel_stages(&rgb, opts.filter);
            let bytes = match &opts.canny {
                Some(c) => c.edges(&stages.gx, &stages.gy, width as usize, height as usize),
                None => cpu::scalar::output_bytes(&stages, opts.filter, output),
            };
            (stages, bytes)
        });
        (Some((stages, bytes)), ms)
    } else {
        (None, 0.0)
    };

    let mut measured = Vec::new();
    for &variant in &variants {
        // The fast path runs once; a teaching run warms up and repeats, to time the kernels.
        let run_opts =
            if opts.auto { RunOptions::default() } else { RunOptions { warm_up: true, reps: opts.gpu_reps } };
        if output == crate::sobel::Output::Edges && opts.canny.is_none() && engine.streams(variant, &rgb) {
            notes.push(format!(
                "{}: streamed (staged through pinned buffers, overlapped bands); one pass, its kernels' time",
                variant.name()
            ));
        }
        let outcome = match (variant, &reference) {
            // The reference already ran (its stages feed --intermediate): its row reuses that run.
            (Variant::CpuScalar, Some((_, bytes))) => Ok((bytes.clone(), scalar_ms, None)),
            (v, _) if v.is_gpu() && !engine.has_gpu() => Err("GPU unavailable (reason above)".to_string()),
            (v, _) => match &opts.canny {
                Some(c) => engine.run_canny(v, &rgb, opts.filter, c, run_opts),
                None => engine.run_output(v, &rgb, opts.filter, output, run_opts),
            }
            .map(|r| (r.output, r.compute_ms, r.gpu_memory_ms))
            .map_err(|e| e.to_string()),
        };
        measured.push((variant, outcome));
    }
    let pixels = width as f64 * height as f64;
    crate::trace::mark("variants ran");

    // The edge image: the reference's bytes, else the one variant's (or, when it could not run, cpu-rayon's,
    // so that a missing GPU still gives the user edges — and a line says so, naming what ran instead).
    let edges: std::borrow::Cow<[u8]> = match (&reference, measured.iter().find_map(|(_, o)| o.as_ref().ok())) {
        (Some((_, bytes)), _) => (&bytes[..]).into(),
        (None, Some((bytes, ..))) => (&bytes[..]).into(),
        (None, None) => {
            let asked: Vec<&str> = variants.iter().map(|v| v.name()).collect();
            notes.push(fallback_note(&asked.join(", "), &engine, &opts.output));
            let src = cpu::rayon::PackedRgb::new(rgb.as_raw(), width as usize, height as usize);
            match &opts.canny {
                Some(c) => c.edges_of(&src, opts.filter).into(),
                None => cpu::rayon::output_bytes(&src, opts.filter, output).into(),
            }
        }
    };
    let stages = reference.as_ref().map(|(stages, _)| stages);
    let (written, encode_ms) = timed(|| {
        // An 8-bit edge image for a PNG file is deflated on the GPU when one is open (as in batch mode); data
        // that does not compress, `best`, or a failure there (named in a note) leaves it to the CPU encoder.
        let on_gpu = output == crate::sobel::Output::Edges
            && image_io::output::format_of(&opts.output)
                .is_ok_and(|f| crate::engine::deflates_on_gpu(f, opts.compression));
        let zlib = match on_gpu.then(|| engine.png_data_on_gpu(&edges, width, height)) {
            Some(Ok(Some(zlib))) => {
                notes.push("PNG data deflated on the GPU (cuda/deflate.cu)".to_string());
                Some(zlib)
            }
            Some(Err(e)) => {
                notes.push(format!("PNG encoded on the CPU: deflating on the GPU failed ({e})"));
                None
            }
            _ => None,
        };
        product::write(opts, &targets, width, height, &edges, stages, zlib.as_deref())
    });
    written?;
    crate::trace::mark("outputs written");
    let io_ms = decode_ms + encode_ms;

    let rows = measured
        .into_iter()
        .map(|(variant, outcome)| Row {
            variant,
            outcome: match outcome {
                Ok((bytes, compute_ms, gpu_memory_ms)) => Outcome::Ran {
                    timings: Timings {
                        io_ms,
                        gpu_memory_ms,
                        compute_ms,
                        total_ms: io_ms + compute_ms + gpu_memory_ms.unwrap_or(0.0),
                        effective_gbps: variant.is_gpu().then(|| 4.0 * pixels / (compute_ms * 1e6)),
                    },
                    mismatched_pixels: reference.as_ref().map(|(_, r)| count_mismatches(&bytes, r)),
                },
                Err(reason) => Outcome::Skipped { reason },
            },
        })
        .collect();

    Ok((
        Report {
            input: opts.input.clone(),
            output: opts.output.clone(),
            width,
            height,
            filter: opts.filter,
            product: opts.product,
            n1: opts.n1,
            gpu_reps: opts.gpu_reps,
            decode_ms,
            encode_ms,
            gpu: gpu_status,
            rows,
            notes,
        },
        engine,
    ))
}

/// `--variant auto`'s choice and both predictions, in one line; without a CUDA driver, only that (no GPU
/// figure is predicted for a machine that has no GPU).
pub(crate) fn auto_note(chosen: Variant, width: u32, height: u32) -> String {
    if !crate::engine::driver_present() {
        return format!("--variant auto: {} (no CUDA driver on this machine: the GPU is not an option)", chosen.name());
    }
    let (cpu, gpu) = AUTO.predict(width as f64 * height as f64, rayon::current_num_threads());
    format!(
        "--variant auto: {} (predicted cpu-rayon {cpu:.0} ms, gpu-strip {gpu:.0} ms with its start-up)",
        chosen.name()
    )
}

/// The variant asked for could not run (`engine` has no usable GPU): the edges written are cpu-rayon's.
pub(crate) fn fallback_note(asked: &str, engine: &Engine, output: &Path) -> String {
    let reason = engine.gpu_error().map_or_else(|| "no GPU".into(), |e| e.to_string());
    format!(
        "{asked} could not run ({reason}); the edges in {} were computed by cpu-rayon instead (--gpu-required \
         makes this an error, exit 3)",
        output.display()
    )
}

/// `--variant auto` chose the GPU, which could not be opened.
pub(crate) fn auto_without_gpu(engine: &Engine) -> String {
    let reason = engine.gpu_error().map_or_else(String::new, |e| e.to_string());
    format!("--variant auto: cpu-rayon, as the GPU could not be used: {reason}")
}

/// The report's GPU line: not asked for, opened (and what that cost), or why it could not be.
pub(crate) fn gpu_status(wants_gpu: bool, engine: &Engine) -> GpuStatus {
    match (wants_gpu, engine.startup(), engine.gpu_error()) {
        (false, ..) => GpuStatus::NotRequested,
        (true, Some(s), _) => GpuStatus::Available {
            device: engine.device_name().unwrap_or_default().to_owned(),
            context_init_ms: s.context_init_ms,
            kernel_load_ms: s.kernel_load_ms,
            kernels: s.kernel_stats,
        },
        (true, None, e) => GpuStatus::Unavailable { reason: e.map_or_else(String::new, |e| e.to_string()) },
    }
}

/// `out/x_sobel.jpg` → `out/x_sobel_<suffix>.jpg`: the same folder and format (no extension stays none).
pub fn sibling(output: &Path, suffix: &str) -> PathBuf {
    let stem = output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = output.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    output.with_file_name(format!("{stem}_{suffix}{ext}"))
}
