//! The command line: clap definitions, turned into typed [`pipeline::Options`]. Only this module and
//! `main.rs` know about clap — the core's enums only list their values (`ALL`) and names, and
//! `value_enum!` makes them clap values here; exit codes are decided here, in one place.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::memory::{self, Budget};
use crate::pipeline::{self, Mapping, Variant, N1};
use crate::sobel::{Border, Compat, Filter, Operator};
use crate::{generate, image_io, report};

/// Makes the core's value enums (each with `ALL` and `name()`) clap values, named as the core names them.
macro_rules! value_enum {
    ($($t:ty),* $(,)?) => {$(
        impl clap::ValueEnum for $t {
            fn value_variants<'a>() -> &'a [Self] {
                &<$t>::ALL
            }
            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.name()))
            }
        }
    )*};
}
value_enum!(Variant, Mapping, Operator, Border, Compat, image_io::PngCompression, crate::bench::Peer);

/// What `--variant` takes on the image command: a variant, or `auto`, the fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VariantChoice {
    /// cpu-rayon or gpu-strip by the image's size ([`pipeline::auto_variant`]).
    Auto,
    One(Variant),
}

impl clap::ValueEnum for VariantChoice {
    fn value_variants<'a>() -> &'a [Self] {
        const CHOICES: [VariantChoice; 12] = {
            let mut c = [VariantChoice::Auto; 12];
            let mut i = 0;
            while i < Variant::ALL.len() {
                c[i + 1] = VariantChoice::One(Variant::ALL[i]);
                i += 1;
            }
            c
        };
        &CHOICES
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(match self {
            VariantChoice::Auto => clap::builder::PossibleValue::new("auto")
                .help("the fast path: cpu-rayon, or gpu-strip on large images when a GPU is there; no reference"),
            VariantChoice::One(v) => clap::builder::PossibleValue::new(v.name()),
        })
    }
}

const EXAMPLES: &str = "\
Examples:
  cuda_sobel imgs_in/2048x1024.png            every variant, n = 1, output in imgs_out/
  cuda_sobel imgs_in/2048x1024.png 4          gpu-n1 with 4 pixels per thread
  cuda_sobel photo.jpg --variant cpu-rayon,gpu-fused --border reflect101 --out edges.png
  cuda_sobel imgs_in/512x512.png --intermediate --json
  cuda_sobel imgs_in/2048x1024.png --compat report        the report's C program's bytes, in every variant
  cuda_sobel imgs_in/2048x1024.png 8 --variant gpu-n1 --mapping report   the report's n:1 mapping
  cuda_sobel imgs_in/2048x1024.png --operator scharr
  cuda_sobel --emit-ptx ptx/                  write the PTX of every kernel file, to read
  cuda_sobel generate 7680x4320               draw a test image into imgs_in/7680x4320.png
  cuda_sobel bench                            the report's experiments (or: bash bench.sh)
  cuda_sobel bench --sizes 2048x1024,7680x4320 --runs 5 --variant gpu-fused,cpu-rayon
  cuda_sobel bench --peers npp                also time NVIDIA NPP on the same images
  cuda_sobel batch photos/ --out edges/       every image of a folder, failures listed at the end

Exit codes: 0 success, 1 a variant's output differs from cpu-scalar, 2 bad input or usage,
3 --gpu-required and the GPU variants could not run.";

#[derive(Parser, Debug)]
#[command(
    name = "cuda_sobel",
    version,
    about = "Sobel edge detection on the GPU and CPU, every variant checked byte for byte against a scalar reference",
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
/// The whole command line.
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Image to process (PNG, JPEG, BMP, GIF, TIFF, WebP; alpha is dropped, 16-bit rounded to 8; - reads
    /// standard input)
    #[arg(required_unless_present = "emit_ptx")]
    image: Option<PathBuf>,
    /// Pixels per thread for the gpu-n1 variant
    #[arg(default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    n: u32,
    /// Variants to run (comma-separated); default: all. With several, cpu-scalar runs as the reference
    /// and every output is compared with it; one alone runs alone (see --check). auto: for people who
    /// just want edges, the faster of cpu-rayon and gpu-strip for the image's size, run once
    #[arg(long, value_enum, value_delimiter = ',')]
    variant: Vec<VariantChoice>,
    #[command(flatten)]
    filter: FilterArgs,
    /// How gpu-n1 maps threads to pixels (report: the report's overlapping mapping, n-fold work)
    #[arg(long, value_enum, default_value_t)]
    mapping: Mapping,
    /// Output PNG [default: imgs_out/<stem>_sobel.png]; - writes it to standard output (the table then goes
    /// to standard error)
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    safety: SafetyArgs,
    /// Print the measurements as JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Also write the grey, |Gx| and |Gy| images (like the report's INTERMEDIATE_OUTPUT)
    #[arg(long)]
    intermediate: bool,
    /// PNG compression effort for the output (fast: the image crate's and OpenCV's default level, ~5×
    /// larger files; counted in the I/O time)
    #[arg(long, value_enum, default_value_t)]
    png_compression: image_io::PngCompression,
    /// Print nothing but errors
    #[arg(short, long)]
    quiet: bool,
    /// Timed repetitions of each GPU variant's kernels (the median is shown)
    #[arg(long, default_value_t = pipeline::GPU_REPS as u32, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Also run cpu-scalar and compare byte for byte when one variant is selected (several are always
    /// compared)
    #[arg(long)]
    check: bool,
    /// Exit with code 3 if the GPU variants could not run (default: they are reported as skipped, exit 0)
    #[arg(long)]
    gpu_required: bool,
    /// Write the PTX NVRTC makes of each cuda/*.cu file into DIR (needs NVRTC, not a GPU); the
    /// --operator and --compat given select which build
    #[arg(long, value_name = "DIR")]
    emit_ptx: Option<PathBuf>,
}

/// What every variant computes: operator, border and arithmetic (shared by the image, batch and bench
/// commands).
#[derive(Args, Debug)]
struct FilterArgs {
    /// The gradient operator
    #[arg(long, value_enum, default_value_t)]
    operator: Operator,
    /// What the stencil sees beyond the image edge [default: replicate; zero with --compat report]
    #[arg(long, value_enum)]
    border: Option<Border>,
    /// Arithmetic: exact (integers, rounded, saturated) or report (the report's C program: doubles
    /// truncated, gradients and magnitude wrapped mod 256, zero border)
    #[arg(long, value_enum, default_value_t)]
    compat: Compat,
}

impl FilterArgs {
    fn filter(&self) -> anyhow::Result<Filter> {
        let border = match (self.compat, self.border) {
            (Compat::Report, Some(b)) if b != Border::Zero => {
                anyhow::bail!("--compat report uses the report's zero border; leave out --border {}", b.name())
            }
            (Compat::Report, _) => Border::Zero,
            (Compat::Exact, b) => b.unwrap_or_default(),
        };
        Ok(Filter { operator: self.operator, border, compat: self.compat })
    }
}

/// Memory and input handling, shared by the image and batch commands.
#[derive(Args, Debug)]
struct SafetyArgs {
    /// Host memory a run may use, e.g. 4G or 512MiB; an image whose estimated peak is larger is refused from
    /// its header [default: 80 % of available memory and of the address-space limit]
    #[arg(long, value_parser = memory::parse_size)]
    max_memory: Option<u64>,
    /// Keep the stored orientation instead of applying the EXIF one (as viewers and OpenCV's imread do)
    #[arg(long)]
    keep_orientation: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Many images: decode and encode on all cores, the GPU fed through a bounded pool of streams with
    /// pinned buffers; a bad file is listed, not fatal
    Batch(BatchArgs),
    /// The report's experiments: whole-pipeline ten-run averages per size and variant, the n:1 sweep,
    /// computation-only medians against the copy-bandwidth roofline; tables, CSV, JSON and SVG plots
    Bench(BenchArgs),
    /// Draw the deterministic test scene (rings, lines, texture, text) tiled to WIDTHxHEIGHT
    Generate {
        /// Size as WIDTHxHEIGHT, e.g. 7680x4320
        #[arg(value_parser = generate::parse_size)]
        size: (u32, u32),
        /// Output PNG [default: imgs_in/<W>x<H>.png]
        #[arg(long)]
        out: Option<PathBuf>,
        /// Host memory it may use (see the image command's --max-memory)
        #[arg(long, value_parser = memory::parse_size)]
        max_memory: Option<u64>,
    },
}

#[derive(Args, Debug)]
struct BatchArgs {
    /// Image files and folders (a folder's files are all taken, not its sub-folders)
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Folder for the edge images (<stem>_sobel.png)
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    filter: FilterArgs,
    #[command(flatten)]
    safety: SafetyArgs,
    /// PNG compression effort for the outputs
    #[arg(long, value_enum, default_value_t)]
    png_compression: image_io::PngCompression,
    /// GPU slots: images on the GPU at once, each with its own stream and pinned buffers
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    slots: u32,
    /// Also compute cpu-scalar for every image; an image whose bytes differ fails
    #[arg(long)]
    check: bool,
    /// CUDA devices to spread the images over (comma-separated ordinals) [default: every visible one]
    #[arg(long, value_delimiter = ',')]
    devices: Vec<usize>,
    /// Decode and encode only, no Sobel: the I/O ceiling to compare batch throughput with
    #[arg(long)]
    baseline: bool,
}

#[derive(Args, Debug)]
struct BenchArgs {
    /// Image sizes (made on demand when not in imgs_in/)
    #[arg(long, value_delimiter = ',', value_parser = generate::parse_size,
          default_value = "512x512,1024x512,1024x1024,2048x1024")]
    sizes: Vec<(u32, u32)>,
    /// Whole-pipeline runs per size and variant (after one warm-up run)
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Computation-only repetitions (the median is reported)
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    kernel_reps: u32,
    /// Pixels per thread for the gpu-n1 sweep
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    ns: Vec<u32>,
    /// Variants to measure (comma-separated); default: all
    #[arg(long, value_enum, value_delimiter = ',')]
    variant: Vec<Variant>,
    #[command(flatten)]
    filter: FilterArgs,
    /// Folder for results.{json,csv,md} and the SVG plots
    #[arg(long, default_value = "bench/out")]
    out: PathBuf,
    /// Folder where sizes not in imgs_in/ are drawn and kept
    #[arg(long, default_value = "bench/images")]
    images: PathBuf,
    /// Also time these implementations on the same images (npp: NVIDIA NPP, loaded at run time)
    #[arg(long, value_enum, value_delimiter = ',')]
    peers: Vec<crate::bench::Peer>,
    /// Also measure batch mode against decode + encode alone on this many copies of the first size's image
    #[arg(long, default_value_t = 0)]
    batch: usize,
    /// "What you wait for": whole commands (cpu-rayon, gpu-strip, auto), each run this many times cold
    /// and warm, on the largest size (0: skip)
    #[arg(long, default_value_t = 5)]
    wait_runs: usize,
    /// A smoke run: sizes 64x48 and 161x97, 2 runs, 5 repetitions, n in 1,2,4, 2 whole commands each
    /// (overrides those flags)
    #[arg(long)]
    quick: bool,
    /// Host memory it may use; a size whose estimate is larger is refused before any work
    #[arg(long, value_parser = memory::parse_size)]
    max_memory: Option<u64>,
}

/// Parses the arguments, runs, and returns the exit code; errors are returned for `main` to print.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // From here on, an interrupt removes the temporary files this process made, then exits 130 / 143 / 129.
    crate::interrupt::install();
    match cli.command {
        Some(Command::Generate { size: (w, h), out, max_memory }) => {
            let out = out.unwrap_or_else(|| PathBuf::from(format!("imgs_in/{w}x{h}.png")));
            let target = image_io::output::plan(&out, &[])?;
            let needed = memory::image_bytes(w, h, generate::BYTES_PER_PIXEL);
            Budget::new(max_memory).check(&out, w, h, needed)?;
            let img = generate::scene(w, h);
            let png = image_io::Png {
                width: w,
                height: h,
                pixels: img.as_raw(),
                color: png::ColorType::Rgb,
                compression: image_io::PngCompression::Default,
            };
            image_io::output::write(&target, &png)?;
            crate::say!("wrote {}\n", out.display());
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Bench(args)) => run_bench(args),
        Some(Command::Batch(args)) => run_batch(args),
        None => run_image(cli.run),
    }
}

fn run_image(args: RunArgs) -> anyhow::Result<ExitCode> {
    let filter = args.filter.filter()?;
    if let Some(dir) = &args.emit_ptx {
        for path in crate::engine::emit_ptx(dir, filter)? {
            if !args.quiet {
                crate::say!("wrote {}\n", path.display());
            }
        }
    }
    let Some(input) = args.image else { return Ok(ExitCode::SUCCESS) };
    let output = args.out.unwrap_or_else(|| pipeline::default_output(&input));
    let n1 = N1 { n: args.n, mapping: args.mapping };
    let auto = args.variant.contains(&VariantChoice::Auto);
    if auto && args.variant.len() > 1 {
        anyhow::bail!("--variant auto picks one variant itself; leave out the others");
    }
    let chosen = args.variant.iter().filter_map(|c| match c {
        VariantChoice::One(v) => Some(*v),
        VariantChoice::Auto => None,
    });
    let mut variants: Vec<Variant> = if args.variant.is_empty() { Variant::ALL.to_vec() } else { chosen.collect() };
    variants.iter_mut().for_each(|v| *v = v.with_n1(n1));
    variants.sort_by_key(|v| v.order());
    variants.dedup();
    let opts = pipeline::Options {
        input,
        output,
        n1,
        filter,
        variants,
        intermediate: args.intermediate,
        gpu_reps: args.reps as usize,
        compression: args.png_compression,
        budget: Budget::new(args.safety.max_memory),
        keep_orientation: args.safety.keep_orientation,
        check: args.check,
        auto,
    };

    let (report, engine) = pipeline::run_keeping_engine(&opts)?;
    if !args.quiet {
        for note in &report.notes {
            eprintln!("cuda_sobel: {note}");
        }
    }
    // With the image on standard output, the measurements go to standard error.
    let text = if args.json {
        Some(format!("{}\n", report::json(&report)))
    } else {
        (!args.quiet).then(|| report::table(&report))
    };
    match text {
        Some(t) if opts.output.as_os_str() == image_io::output::STDOUT => eprint!("{t}"),
        Some(t) => crate::say!("{t}"),
        None => {}
    }
    let code = if !report.all_identical() {
        1
    } else if args.gpu_required && matches!(report.gpu, pipeline::GpuStatus::Unavailable { .. }) {
        eprintln!("cuda_sobel: --gpu-required, but the GPU variants could not run");
        3
    } else {
        0
    };
    crate::trace::mark("done");
    if engine.has_gpu() {
        // Every output is in place: leave the GPU context to the OS instead of the driver's slow teardown.
        crate::interrupt::exit_now(code);
    }
    Ok(ExitCode::from(code))
}

fn run_batch(a: BatchArgs) -> anyhow::Result<ExitCode> {
    let summary = crate::batch::run(&crate::batch::BatchOptions {
        inputs: a.inputs,
        out_dir: a.out,
        filter: a.filter.filter()?,
        compression: a.png_compression,
        slots: a.slots as usize,
        devices: (!a.devices.is_empty()).then_some(a.devices),
        check: a.check,
        baseline: a.baseline,
        budget: Budget::new(a.safety.max_memory),
        keep_orientation: a.safety.keep_orientation,
    })?;
    crate::say!("{}", crate::batch::summary_text(&summary));
    Ok(if summary.failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

fn run_bench(a: BenchArgs) -> anyhow::Result<ExitCode> {
    let mut opts = crate::bench::BenchOptions {
        sizes: a.sizes,
        runs: a.runs as usize,
        kernel_reps: a.kernel_reps as usize,
        cpu_budget_s: 2.0,
        ns: a.ns,
        variants: if a.variant.is_empty() { Variant::ALL.to_vec() } else { a.variant },
        filter: a.filter.filter()?,
        image_dir: a.images,
        out_dir: a.out,
        peers: a.peers,
        batch_images: a.batch,
        budget: Budget::new(a.max_memory),
        wait_runs: a.wait_runs,
    };
    if a.quick {
        opts = crate::bench::BenchOptions {
            sizes: vec![(64, 48), (161, 97)],
            runs: 2,
            kernel_reps: 5,
            cpu_budget_s: 0.2,
            ns: vec![1, 2, 4],
            wait_runs: opts.wait_runs.min(2),
            ..opts
        };
    }
    opts.ns.sort_unstable();
    opts.ns.dedup();
    let results = match crate::bench::run(&opts) {
        Err(e) if e.downcast_ref::<crate::bench::Mismatch>().is_some() => {
            eprintln!("cuda_sobel: bench: {e:#}");
            return Ok(ExitCode::from(1));
        }
        other => other?,
    };
    crate::say!("{}", crate::bench::export::markdown(&results));
    for path in crate::bench::export::write_all(&results, &opts.out_dir)? {
        crate::say!("wrote {}\n", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
