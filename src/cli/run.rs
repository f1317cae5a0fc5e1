//! What each command does with its parsed arguments (the definitions are in the parent module, whose
//! private fields this child module may read); exit codes are decided here, in one place.

use std::path::PathBuf;
use std::process::ExitCode;

use super::*;
use crate::memory::{self, Budget};
use crate::pipeline::{self, Variant, N1};
use crate::{generate, image_io, report};

impl Cli {
    /// The CUDA devices the command may use, known before it starts the driver: `batch --devices`'s, device 0 for
    /// the image, filter and bench commands; `None` for every visible one (`batch` without `--devices`) or none
    /// (`generate`). `main` shows the driver only these ([`crate::gpu::visible::show_only`]).
    pub fn devices(&self) -> Option<Vec<usize>> {
        match &self.command {
            Some(Command::Batch(b)) => (!b.devices.is_empty()).then(|| b.devices.clone()),
            Some(Command::Generate { .. }) => None,
            Some(Command::Filter(_) | Command::Bench(_)) | None => Some(vec![0]),
        }
    }
}

/// Parses the arguments, runs, and returns the exit code; errors are returned for `main` to print.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // From here on, an interrupt removes the temporary files this process made, then exits 130 / 143 / 129.
    crate::interrupt::install();
    match cli.command {
        Some(Command::Generate { size: (w, h), out, max_memory, spiral }) => {
            let out = out.unwrap_or_else(|| PathBuf::from(format!("imgs_in/{w}x{h}.png")));
            let target = image_io::output::plan(&out, &[])?;
            let needed = memory::image_bytes(w, h, generate::BYTES_PER_PIXEL);
            Budget::new(max_memory).check(&out, w, h, needed)?;
            let img = if spiral { generate::spiral(w, h, 40, 255) } else { generate::scene(w, h) };
            let picture = image_io::Picture {
                width: w,
                height: h,
                samples: image_io::format::Samples::U8(img.as_raw()),
                color: png::ColorType::Rgb,
                compression: image_io::PngCompression::Default,
                format: image_io::output::format_of(&out)?,
            };
            image_io::output::write(&target, &picture)?;
            crate::say!("wrote {}\n", out.display());
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Bench(args)) => run_bench(args),
        Some(Command::Filter(args)) => run_filter(args),
        Some(Command::Batch(args)) => run_batch(args),
        None => run_image(cli.run),
    }
}

fn run_filter(a: FilterCmdArgs) -> anyhow::Result<ExitCode> {
    use crate::conv::{self, ConvKernel, Planes};
    let kernel = ConvKernel::parse(&a.kernel)?;
    let out = a.out.unwrap_or_else(|| conv::default_output(&a.image, &kernel));
    let target = image_io::output::plan(&out, std::slice::from_ref(&a.image))?;
    let budget = Budget::new(a.max_memory);
    let opts = image_io::decode::DecodeOptions { budget, keep_orientation: false };
    // Decoded RGB, its planes, the result and its interleaved copy: at most 3 + 3 + 3 + 3 bytes a pixel.
    let (decoded, ()) = image_io::decode::decode(&a.image, &opts, |h| {
        budget.check(&a.image, h.width, h.height, memory::image_bytes(h.width, h.height, 12))
    })?;
    let planes = if a.rgb { Planes::channels(&decoded.rgb) } else { Planes::grey(&decoded.rgb) };
    drop(decoded);
    let (result, note) = crate::engine::filter::apply(&planes, &kernel, a.variant, a.border)?;
    if let Some(note) = note {
        eprintln!("cuda_sobel: {note}");
    }
    if a.check && conv::filter_scalar(&planes, &kernel, a.border) != result {
        eprintln!("cuda_sobel: {}: --check: the result differs from cpu-scalar's", a.image.display());
        return Ok(ExitCode::from(1));
    }
    let pixels = result.interleaved();
    let picture = image_io::Picture {
        width: result.width as u32,
        height: result.height as u32,
        samples: image_io::format::Samples::U8(&pixels),
        color: if a.rgb { png::ColorType::Rgb } else { png::ColorType::Grayscale },
        compression: image_io::PngCompression::Default,
        format: image_io::output::format_of(&out)?,
    };
    image_io::output::write(&target, &picture)?;
    crate::say!("wrote {}\n", out.display());
    Ok(ExitCode::SUCCESS)
}

/// `--output canny`'s thresholds, norm and aperture, checked; `None` for the other outputs, which take none of them.
fn canny_of(
    product: pipeline::Product,
    (low, high, norm): (Option<f64>, Option<f64>, Option<&str>),
    filter: crate::sobel::Filter,
) -> anyhow::Result<Option<crate::canny::Canny>> {
    use crate::sobel::{Compat, Norm, Operator};
    if product != pipeline::Product::Canny {
        if low.is_some() || high.is_some() || norm.is_some() {
            anyhow::bail!("--low, --high and --norm go with --output canny (the edges' norm is --output l1)");
        }
        return Ok(None);
    }
    let (Some(low), Some(high)) = (low, high) else {
        anyhow::bail!("--output canny needs both --low and --high (cv2.Canny's two thresholds)");
    };
    if filter.operator != Operator::Sobel || filter.compat != Compat::Exact {
        anyhow::bail!("--output canny: OpenCV's Canny takes the exact Sobel, not --operator scharr or --compat report");
    }
    let norm = if norm == Some("l2") { Norm::L2 } else { Norm::L1 };
    crate::canny::Canny::new(low, high, norm, filter.ksize).map(Some).map_err(anyhow::Error::msg)
}

fn run_image(args: RunArgs) -> anyhow::Result<ExitCode> {
    let filter = args.filter.filter_with(args.output.norm())?;
    let canny = canny_of(args.output, (args.low, args.high, args.norm.as_deref()), filter)?;
    if let Some(file) = args.student.kernel_file {
        let opts = crate::student::StudentOptions {
            file,
            kernel_name: args.student.kernel_name,
            launch: crate::engine::Launch {
                block: args.student.block,
                pixels_per_thread: args.student.pixels_per_thread,
            },
            sweep: args.student.sweep,
            reps: args.reps as usize,
            emit_ptx: args.emit_ptx,
            canny,
        };
        return Ok(ExitCode::from(crate::student::run(args.image.as_deref(), filter, &opts)?));
    }
    if let Some(dir) = &args.emit_ptx {
        for path in crate::engine::emit_ptx(dir, filter)? {
            if !args.quiet {
                crate::say!("wrote {}\n", path.display());
            }
        }
    }
    let Some(input) = args.image else { return Ok(ExitCode::SUCCESS) };
    let n = pixels_per_thread(&input, args.n.as_deref(), &args.more)?;
    let output = args.out.unwrap_or_else(|| match args.output {
        pipeline::Product::Magnitude | pipeline::Product::L1 => pipeline::default_output(&input),
        other => other.default_output(&input),
    });
    let n1 = N1 { n, mapping: args.mapping };
    let auto = args.variant.contains(&VariantChoice::Auto);
    if auto && args.variant.len() > 1 {
        anyhow::bail!("--variant auto picks one variant itself; leave out the others");
    }
    let chosen = args.variant.iter().filter_map(|c| match c {
        VariantChoice::One(v) => Some(*v),
        VariantChoice::Auto => None,
    });
    let mut variants: Vec<Variant> = if args.variant.is_empty() { Variant::EDGES.to_vec() } else { chosen.collect() };
    variants.iter_mut().for_each(|v| *v = v.with_n1(n1));
    variants.sort_by_key(|v| v.order());
    variants.dedup();
    let opts = pipeline::Options {
        input,
        output,
        n1,
        filter,
        product: args.output,
        canny,
        variants,
        intermediate: args.intermediate,
        gpu_reps: args.reps as usize,
        compression: args.png_compression,
        budget: Budget::new(args.safety.max_memory),
        keep_orientation: args.safety.keep_orientation,
        check: args.check,
        auto,
        jpeg_decoder: args.jpeg_decoder,
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

/// gpu-n1's pixels per thread from the second positional argument (default 1). What is not a number there, or
/// any third argument, means several images were given (a shell glob, say): one line points to `batch`.
fn pixels_per_thread(image: &std::path::Path, n: Option<&str>, more: &[PathBuf]) -> anyhow::Result<u32> {
    let several = |others: Vec<String>| {
        let mut all = vec![image.display().to_string()];
        all.extend(others);
        let shown = if all.len() > 3 { format!("{} …", all[..3].join(" ")) } else { all.join(" ") };
        anyhow::anyhow!(
            "{} images given, but the image command takes one; for several, run `cuda_sobel batch {shown} --out DIR`",
            all.len()
        )
    };
    let others = || more.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
    match n.map(|s| (s, s.parse::<u32>())) {
        None => Ok(1),
        Some((s, Err(_))) => Err(several(std::iter::once(s.to_owned()).chain(others()).collect())),
        Some(_) if !more.is_empty() => Err(several(others())),
        Some((_, Ok(v))) if (1..=64).contains(&v) => Ok(v),
        Some((s, Ok(_))) => {
            anyhow::bail!("invalid value '{s}' for '[N]': {s} is not in 1..=64 (pixels per thread of gpu-n1)")
        }
    }
}

/// What `--output` takes on batch: the edges in either norm (the gradients and the direction: the image command).
#[derive(Clone, Copy, Debug)]
pub(super) struct BatchOutput(pub(super) pipeline::Product);
impl clap::ValueEnum for BatchOutput {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            BatchOutput(pipeline::Product::Magnitude),
            BatchOutput(pipeline::Product::L1),
            BatchOutput(pipeline::Product::Canny),
        ]
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()))
    }
}

fn run_batch(a: BatchArgs) -> anyhow::Result<ExitCode> {
    let filter = a.filter.filter_with(a.output.0.norm())?;
    let kernel = match &a.kernel {
        Some(_) if filter != crate::sobel::Filter::with_border(filter.border) => anyhow::bail!(
            "--kernel takes --border alone: --operator, --ksize, --compat and --grey choose the edges' filter"
        ),
        Some(spec) => Some(crate::batch::KernelJob { kernel: crate::conv::ConvKernel::parse(spec)?, rgb: a.rgb }),
        None => None,
    };
    let canny = canny_of(a.output.0, (a.low, a.high, a.norm.as_deref()), filter)?;
    if canny.is_some() && a.baseline {
        anyhow::bail!("--baseline times the edges' codecs: it takes no --output canny");
    }
    let (summary, _engines) = crate::batch::run_keeping(&crate::batch::BatchOptions {
        inputs: a.inputs,
        recursive: a.recursive,
        out_dir: a.out,
        format: a.format,
        filter,
        compression: a.png_compression,
        slots: a.slots.map(|n| n as usize),
        devices: (!a.devices.is_empty()).then_some(a.devices),
        check: a.check,
        baseline: a.baseline,
        budget: Budget::new(a.safety.max_memory),
        keep_orientation: a.safety.keep_orientation,
        jpeg_decoder: a.jpeg_decoder,
        png_encoder: a.png_encoder,
        png_inflate: a.png_inflate,
        kernel,
        canny,
    })?;
    crate::say!("{}", crate::batch::summary_text(&summary));
    // Every output is in place: the engines are left to the OS (`exit_now` does not return), not closed one by one.
    crate::trace::mark("summary written");
    crate::interrupt::exit_now(if summary.failures.is_empty() { 0 } else { 2 })
}

fn run_bench(a: BenchArgs) -> anyhow::Result<ExitCode> {
    if let Some(study) = a.study {
        let paths = crate::bench::study::run(study, a.runs.unwrap_or(20) as usize, &a.out)?;
        for p in paths {
            crate::say!("wrote {}\n", p.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut opts = crate::bench::BenchOptions {
        sizes: a.sizes,
        runs: a.runs.unwrap_or(10) as usize,
        kernel_reps: a.kernel_reps as usize,
        cpu_budget_s: 2.0,
        ns: a.ns,
        variants: if a.variant.is_empty() { Variant::EDGES.to_vec() } else { a.variant },
        filter: a.filter.filter()?,
        image_dir: a.images,
        out_dir: a.out,
        peers: a.peers,
        batch_images: a.batch,
        budget: Budget::new(a.max_memory),
        wait_runs: a.wait_runs,
        student: a.kernel_file.map(|file| crate::student::StudentOptions {
            file,
            kernel_name: None,
            launch: crate::engine::Launch { block: a.block, pixels_per_thread: 1 },
            sweep: false,
            reps: a.kernel_reps as usize,
            emit_ptx: None,
            canny: None,
        }),
        kernel_only: a.kernel_only || !a.canny.is_empty(),
        canny: None,
    };
    if !matches!(a.canny.len(), 0 | 2) {
        anyhow::bail!("--canny takes two thresholds, LOW,HIGH (cv2.Canny's threshold1,threshold2)");
    }
    if !a.canny.is_empty() && opts.student.is_some() {
        anyhow::bail!(
            "--kernel-file with --canny: the bench times an edges kernel; check and time Canny's link step with \
             `cuda_sobel IMAGE --kernel-file FILE --output canny --low L --high H`"
        );
    }
    if let [low, high] = a.canny[..] {
        let norm = if a.canny_norm == "l2" { crate::sobel::Norm::L2 } else { crate::sobel::Norm::L1 };
        opts.canny = Some(crate::canny::Canny::new(low, high, norm, opts.filter.ksize).map_err(anyhow::Error::msg)?);
    }
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
        Err(e) if e.downcast_ref::<crate::bench::DiffersFromReference>().is_some() => {
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
