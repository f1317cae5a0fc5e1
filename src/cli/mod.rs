//! The command line: clap definitions (here), turned into typed [`pipeline::Options`] (in [`run`]). Only this module and
//! `main.rs` know about clap — the core's enums only list their values (`ALL`) and names, and
//! `named!` makes them clap values here; exit codes are decided here, in one place.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod named;
mod run;
use named::named;
pub use run::run;

use crate::memory;
use crate::pipeline::{self, Mapping, Variant};
use crate::sobel::{Border, Compat, Filter, Grey, Ksize, Norm, Operator};
use crate::{generate, image_io};

/// What `--variant` takes on the image command: a variant, or `auto`, the fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VariantChoice {
    /// cpu-rayon or gpu-strip by the image's size ([`pipeline::auto_variant`]).
    Auto,
    One(Variant),
}

impl clap::ValueEnum for VariantChoice {
    fn value_variants<'a>() -> &'a [Self] {
        const CHOICES: [VariantChoice; Variant::EDGES.len() + 1] = {
            let mut c = [VariantChoice::Auto; Variant::EDGES.len() + 1];
            let mut i = 0;
            while i < Variant::EDGES.len() {
                c[i + 1] = VariantChoice::One(Variant::EDGES[i]);
                i += 1;
            }
            c
        };
        &CHOICES
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            VariantChoice::Auto => PossibleValue::new("auto")
                .help("the fast path: cpu-rayon, or gpu-strip on large images when a GPU is there; no reference"),
            VariantChoice::One(v) => PossibleValue::new(v.name()).help(v.row().pattern).aliases(v.row().alias),
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
  cuda_sobel photo.png --ksize 5 --grey bt601 --border reflect101   OpenCV's Sobel(ksize=5) bytes
  cuda_sobel photo.png --output gx --out gx.npy                     the exact gradient, as a NumPy file
  cuda_sobel --emit-ptx ptx/                  write the PTX of every kernel file, to read
  cuda_sobel imgs_in/2048x1024.png --kernel-file cuda/exercises/01_map.cu --sweep   check and time your kernel
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
    /// Pixels per thread for the gpu-n1 variant, 1..=64 [default: 1]
    #[arg(value_name = "N")]
    n: Option<String>,
    /// More images: the image command takes one (it says so, pointing to `batch`)
    #[arg(hide = true)]
    more: Vec<PathBuf>,
    /// Variants to run (comma-separated); default: all. With several, cpu-scalar runs as the reference
    /// and every output is compared with it; one alone runs alone (see --check). auto: for people who
    /// just want edges, the faster of cpu-rayon and gpu-strip for the image's size, run once
    #[arg(long, value_enum, value_delimiter = ',')]
    variant: Vec<VariantChoice>,
    #[command(flatten)]
    filter: FilterArgs,
    /// How gpu-n1 maps threads to pixels (report: the report's overlapping mapping, n-fold work)
    #[arg(long, value_parser = named::<Mapping>(), default_value = Mapping::default().name())]
    mapping: Mapping,
    /// Output file; its extension chooses the format (.png .jpg .bmp .tif .webp .pgm .npy) [default:
    /// imgs_out/<stem>_sobel.png, or <stem>_<output>.npy for the gradients and the direction]; - writes a PNG
    /// to standard output (the table then goes to standard error)
    #[arg(long)]
    out: Option<PathBuf>,
    /// What to write: the edges (magnitude, or l1: |Gx| + |Gy|), a gradient (gx, gy: exact integers), the
    /// direction (radians, float32), Canny's four directions (direction4: 0–3) or Canny's edges (canny: 0 or 255,
    /// OpenCV's cv2.Canny; with --low and --high)
    #[arg(long, value_parser = named::<pipeline::Product>(), default_value = pipeline::Product::default().name())]
    output: pipeline::Product,
    /// With --output canny: the lower hysteresis threshold (cv2.Canny's threshold1; swapped with --high when larger)
    #[arg(long, allow_negative_numbers = true)]
    low: Option<f64>,
    /// With --output canny: the upper threshold (threshold2)
    #[arg(long, allow_negative_numbers = true)]
    high: Option<f64>,
    /// With --output canny: the gradient's norm, l1 (|Gx| + |Gy|, OpenCV's default) or l2 (L2gradient=true)
    #[arg(long, value_parser = ["l1", "l2"])]
    norm: Option<String>,
    #[command(flatten)]
    safety: SafetyArgs,
    /// Print the measurements as JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Also write the grey, |Gx| and |Gy| images (like the report's INTERMEDIATE_OUTPUT)
    #[arg(long)]
    intermediate: bool,
    /// PNG compression effort for the output, counted in the I/O time (fast: the image crate's and OpenCV's
    /// default level, 4–7× faster to encode; the files of photos' edges come out 9 % smaller to 12 % larger,
    /// those of the synthetic scene ~5× larger)
    #[arg(long, value_parser = named::<image_io::PngCompression>(), default_value = image_io::PngCompression::default().name())]
    png_compression: image_io::PngCompression,
    /// Where a JPEG is decoded: auto and cpu: the CPU, while the GPU opens (for one image nvJPEG's start-up costs
    /// ~0.6 s more); gpu: nvJPEG, the decoder batch uses (or an error). The decoders' RGB differ slightly
    /// (docs/cli.md); every variant reads the one that ran
    #[arg(long, value_parser = named::<crate::engine::JpegDecoder>(), default_value = crate::engine::JpegDecoder::default().name())]
    jpeg_decoder: crate::engine::JpegDecoder,
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
    #[command(flatten)]
    student: StudentArgs,
}

/// A student's kernel, checked and timed as ours are (docs/exercises.md).
#[derive(Args, Debug)]
struct StudentArgs {
    /// Compile this .cu file with NVRTC and run it as one more variant, checked byte for byte. Contract: the
    /// signature of sobel_fused, `extern "C" __global__ void NAME(const unsigned char* rgb, unsigned char*
    /// out, int width, int height, int border)`, border one of cuda/sobel.cuh's BORDER_* (the file may
    /// #include "sobel.cuh"); one thread per pixel on a 2-D grid of --block blocks. With --emit-ptx DIR:
    /// compile only, no GPU needed
    #[arg(long, value_name = "FILE")]
    kernel_file: Option<PathBuf>,
    /// The entry point, when the file has more than one extern "C" __global__ function
    #[arg(long, requires = "kernel_file")]
    kernel_name: Option<String>,
    /// Threads per block of the student's kernel, WxH
    #[arg(long, default_value = "16x16", value_parser = generate::parse_size, requires = "kernel_file")]
    block: (u32, u32),
    /// Pixels each thread of the student's kernel computes along its row (the grid shrinks by as much)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64), requires = "kernel_file")]
    pixels_per_thread: u32,
    /// Also check the student's kernel on awkward sizes (1×1, 1×7, 7×1, 33×17, 1025×3, …) for every border
    #[arg(long, requires = "kernel_file")]
    sweep: bool,
}

/// What every variant computes: operator, border and arithmetic (shared by the image, batch and bench
/// commands).
#[derive(Args, Debug)]
struct FilterArgs {
    /// The gradient operator
    #[arg(long, value_parser = named::<Operator>(), default_value = Operator::default().name())]
    operator: Operator,
    /// The operator's kernel size, as OpenCV's Sobel takes it (Scharr: 3 only)
    #[arg(long, value_parser = named::<Ksize>(), default_value = Ksize::default().name())]
    ksize: Ksize,
    /// What the stencil sees beyond the image edge [default: replicate; zero with --compat report]
    #[arg(long, value_parser = named::<Border>())]
    border: Option<Border>,
    /// Arithmetic: exact (integers, rounded, saturated) or report (the report's C program: doubles
    /// truncated, gradients and magnitude wrapped mod 256, zero border)
    #[arg(long, value_parser = named::<Compat>(), default_value = Compat::default().name())]
    compat: Compat,
    /// How RGB becomes grey: percent, (30R + 59G + 11B + 50) / 100, or bt601, OpenCV's cvtColor
    #[arg(long, value_parser = named::<Grey>(), default_value = Grey::default().name())]
    grey: Grey,
}

impl FilterArgs {
    /// The filter these options name, with `norm`, or the conflict in one line.
    fn filter_with(&self, norm: Norm) -> anyhow::Result<Filter> {
        let base = Filter {
            operator: self.operator,
            ksize: self.ksize,
            compat: self.compat,
            grey: self.grey,
            norm,
            ..Filter::default()
        };
        Filter::resolve(base, self.border).map_err(|c| anyhow::anyhow!(c.message(cli_option)))
    }

    fn filter(&self) -> anyhow::Result<Filter> {
        self.filter_with(Norm::L2)
    }
}

/// An option with its value as the command line writes it (the norm is chosen by `--output`).
fn cli_option(name: &str, value: &str) -> String {
    match name {
        "norm" => format!("--output {value}"),
        _ => format!("--{name} {value}"),
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
    /// A 2-D convolution of the grey image (or of each RGB channel): box blurs, Gaussians, the filter studies' Scharr
    /// family, Sobel, or an integer matrix from a file, in exact integers, by any of the studies' strategies
    Filter(FilterCmdArgs),
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
        /// Draw Canny's hardest case instead: a one-pixel spiral of grey 40 on black, its first 3 pixels 255 (with
        /// --output canny --low 60 --high 500, every edge hangs on that seed through one chain)
        #[arg(long)]
        spiral: bool,
    },
}

#[derive(Args, Debug)]
struct FilterCmdArgs {
    /// The image to filter
    image: PathBuf,
    /// The kernel: box:D, gaussian:D (D odd, up to 15), scharr:D (3 to 15: the filter study's Scharr dilated),
    /// sobel:K (1, 3, 5, 7), or a file holding an integer matrix (docs/filter.md)
    #[arg(long)]
    kernel: String,
    /// The output PNG [default: <stem>_<kernel>.png beside the input]
    #[arg(long)]
    out: Option<PathBuf>,
    /// Filter R, G and B each and write RGB [default: the grey image, one channel]
    #[arg(long)]
    rgb: bool,
    /// What the filter sees beyond the image edge
    #[arg(long, value_parser = named::<Border>(), default_value = Border::default().name())]
    border: Border,
    /// The strategy [default, where a GPU opens: the one the studies measured fastest for the kernel's kind
    /// (docs/filter.md); else cpu-rayon]
    #[arg(long, value_parser = named::variants(&Variant::KERNELS))]
    variant: Option<Variant>,
    /// Also compute cpu-scalar and fail (exit 1) if any byte differs
    #[arg(long)]
    check: bool,
    /// Host memory it may use (see the image command's --max-memory)
    #[arg(long, value_parser = memory::parse_size)]
    max_memory: Option<u64>,
}

#[derive(Args, Debug)]
struct BatchArgs {
    /// Image files and folders (a folder's images are taken; files that are not images, hidden files and
    /// this tool's earlier outputs are skipped and counted)
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Folder for the edge images (<stem>_sobel.<format>)
    #[arg(long)]
    out: PathBuf,
    /// The edges' norm: magnitude, or l1 (|Gx| + |Gy|); or canny: OpenCV's Canny (<stem>_canny.<format>, with --low
    /// and --high, computed on the CPU). Batch writes images (the gradients and the direction: the image command, one
    /// file at a time)
    #[arg(long, value_enum, default_value = "magnitude")]
    output: run::BatchOutput,
    /// With --output canny: the lower hysteresis threshold (cv2.Canny's threshold1; swapped with --high when larger)
    #[arg(long, allow_negative_numbers = true)]
    low: Option<f64>,
    /// With --output canny: the upper threshold (threshold2)
    #[arg(long, allow_negative_numbers = true)]
    high: Option<f64>,
    /// With --output canny: the gradient's norm, l1 (|Gx| + |Gy|, OpenCV's default) or l2 (L2gradient=true)
    #[arg(long, value_parser = ["l1", "l2"])]
    norm: Option<String>,
    /// Filter every image by this kernel instead, as the filter command does (box:D, gaussian:D, scharr:D, sobel:K or
    /// a matrix file), into <stem>_<kernel>.<format> (box:5: <stem>_box5.png)
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["output", "baseline"])]
    kernel: Option<String>,
    /// With --kernel: filter R, G and B apart (an RGB result) instead of the grey image
    #[arg(long, requires = "kernel")]
    rgb: bool,
    /// Also take the folders' sub-folders, their edge images going to the same sub-folders of --out
    #[arg(short, long)]
    recursive: bool,
    /// Format of the edge images (jpg is lossy: its files do not hold the exact edges)
    #[arg(long, value_parser = named::<image_io::Format>(), default_value = image_io::Format::default().name())]
    format: image_io::Format,
    #[command(flatten)]
    filter: FilterArgs,
    #[command(flatten)]
    safety: SafetyArgs,
    /// PNG compression effort for the outputs
    #[arg(long, value_parser = named::<image_io::PngCompression>(), default_value = image_io::PngCompression::default().name())]
    png_compression: image_io::PngCompression,
    /// GPU slots: images on the GPU at once, each with its own stream and pinned buffers [default: 16; with JPEGs,
    /// twice the GPU's JPEG decoders and 2 (16 on an H100), 4 without a JPEG engine]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    slots: Option<u32>,
    /// Also compute cpu-scalar for every image; an image whose bytes differ fails
    #[arg(long)]
    check: bool,
    /// CUDA devices to spread the images over (comma-separated ordinals) [default: every visible one]
    #[arg(long, value_delimiter = ',')]
    devices: Vec<usize>,
    /// Decode (whole, on the CPU) and encode only, no Sobel: the codecs' own rate, to compare batch throughput with
    #[arg(long)]
    baseline: bool,
    /// Where JPEGs are decoded: auto (nvJPEG on the GPU when it loads, else the CPU), gpu (nvJPEG or refuse to
    /// start), cpu. The decoders' RGB differ slightly (docs/cli.md); the edges are exact for the one that ran
    #[arg(long, value_parser = named::<crate::engine::JpegDecoder>(), default_value = crate::engine::JpegDecoder::default().name())]
    jpeg_decoder: crate::engine::JpegDecoder,
    /// Where PNG outputs are encoded: auto (the GPU deflates the edges of the images it computed, at the fast
    /// and default levels, unless the stream would be larger than the edges; docs/cli.md), cpu
    #[arg(long, value_parser = named::<crate::batch::PngEncoder>(), default_value = crate::batch::PngEncoder::Auto.name())]
    png_encoder: crate::batch::PngEncoder,
    /// Where PNG inputs are inflated: cpu (the filters undone on the GPU), gpu (nvCOMP, hundreds at once, from the end
    /// of the list while the cores inflate from its start; refuse to start without it). On the machines measured gpu
    /// is the slower by the clock: nvCOMP takes the GPU from the slots (docs/cli.md)
    #[arg(long, value_parser = named::<crate::engine::PngInflate>(), default_value = crate::engine::PngInflate::default().name())]
    png_inflate: crate::engine::PngInflate,
}

#[derive(Args, Debug)]
struct BenchArgs {
    /// Rerun one of the convolution studies on this GPU instead (docs/patterns.md): filter-sizes, constant-local,
    /// box-blur or prefetch; 20 timed runs per case unless --runs says otherwise
    #[arg(long, value_enum)]
    study: Option<crate::bench::study::Study>,
    /// Image sizes (made on demand when not in imgs_in/)
    #[arg(long, value_delimiter = ',', value_parser = generate::parse_size,
          default_value = "512x512,1024x512,1024x1024,2048x1024")]
    sizes: Vec<(u32, u32)>,
    /// Whole-pipeline runs per size and variant (after one warm-up run) [default: 10; --study: 20]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    runs: Option<u32>,
    /// Computation-only repetitions (the median is reported)
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    kernel_reps: u32,
    /// Pixels per thread for the gpu-n1 sweep
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    ns: Vec<u32>,
    /// Variants to measure (comma-separated); default: all
    #[arg(long, value_parser = named::variants(&Variant::EDGES), value_delimiter = ',')]
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
    /// and warm, on the largest size, and gpu-strip warm on a 1×1 image, the floor (0: skip)
    #[arg(long, default_value_t = 5)]
    wait_runs: usize,
    /// A smoke run: sizes 64x48 and 161x97, 2 runs, 5 repetitions, n in 1,2,4, 2 whole commands each
    /// (overrides those flags)
    #[arg(long)]
    quick: bool,
    /// Computation alone (every output still checked against cpu-scalar) and --peers only: no whole-pipeline,
    /// host → host, OpenCV or whole-command runs; for tuning a kernel
    #[arg(long)]
    kernel_only: bool,
    /// Host memory it may use; a size whose estimate is larger is refused before any work
    #[arg(long, value_parser = memory::parse_size)]
    max_memory: Option<u64>,
    /// A student's kernel to check and time beside every variant at every size (see the image command's
    /// --kernel-file)
    #[arg(long, value_name = "FILE")]
    kernel_file: Option<PathBuf>,
    /// Threads per block of --kernel-file's kernel, WxH
    #[arg(long, default_value = "16x16", value_parser = generate::parse_size)]
    block: (u32, u32),
    /// Canny instead of the edges, with these thresholds (cv2.Canny's threshold1,threshold2), the aperture --ksize:
    /// computation alone (implies --kernel-only), every output checked against the definition; --peers npp times
    /// NPP's Canny on the device-resident grey
    #[arg(long, value_name = "LOW,HIGH", value_delimiter = ',', allow_negative_numbers = true)]
    canny: Vec<f64>,
    /// With --canny: the gradient's norm, l1 (OpenCV's default) or l2
    #[arg(long, value_parser = ["l1", "l2"], default_value = "l1")]
    canny_norm: String,
}
