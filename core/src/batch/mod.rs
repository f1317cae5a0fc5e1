//! `cuda_sobel batch`: many images, the GPU kept fed.
//!
//! Decoding and encoding PNGs costs milliseconds an image; the GPU part (with pinned buffers) a fraction
//! of one. So rayon runs decode → Sobel → encode → atomic write for many files at once on all CPU cores,
//! and each worker borrows a GPU slot (its own stream and pinned buffers, [`crate::gpu::slots`]) only for
//! the copies and the kernel — or, for a PNG the GPU unfilters, hands it once inflated to a thread of the
//! slots' own (the GPU's part and the write) and goes on inflating. The first PNGs are read while the GPU
//! opens (`ahead.rs`). Memory is bounded by the budget's reservations, whatever the number of files.
//! A file that fails is recorded with its reason and the batch goes on.
//!
//! What it never does (docs/cli.md, "Many images"): write over an input or over another output of the same
//! batch — two inputs whose outputs would share a name, or an output that is an input, refuse the whole
//! batch before any work; take its own outputs (images carrying its `Software` marker) or files that are not
//! images as inputs when it lists a folder ([`inputs`]); hold more memory than the budget — each worker
//! reserves its image's estimated peak before decoding, and waits while others hold the rest.

mod ahead;
mod checks;
mod engines;
mod handoff;
pub mod inputs;
mod kernel;
mod stages;
mod summary;
mod waves;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use crate::cpu;
use crate::engine::{Edges, Engine, JpegEdges, Want};
use crate::error::{one_line, Error};
use crate::image_io::filtered::{self, Filtered};
use crate::image_io::{self, jpeg, output, Format, PngCompression};
use crate::memory::{self, Budget};
use crate::sobel::Filter;
use ahead::Ahead;
pub use ahead::ReadAhead;
use checks::{check_against_scalar, check_png};
use engines::open_devices;
pub use engines::{jpeg_engine_slots, Resident, DEFAULT_SLOTS, JPEG_BACKEND_SLOTS};
use handoff::{Inflated, Order};
pub use inputs::{plan, Input, Inputs, Jobs};
pub use kernel::KernelJob;
use stages::Stages;
pub use summary::{summary_text, BatchSummary};

/// What a GPU thread is handed (`handoff.rs`): a PNG inflated on the CPU, or an image of a wave nvCOMP inflated
/// (`waves.rs`).
enum ToGpu<'p> {
    Rows(Inflated<'p>),
    InWave(waves::InWave<'p>),
}

/// Edge images by (width, height), for the baseline.
type EdgeCache = Mutex<HashMap<(u32, u32), Arc<Vec<u8>>>>;

/// What one batch run does.
#[derive(Clone, Debug)]
pub struct BatchOptions {
    /// Files, and folders whose images are taken (see [`inputs`]).
    pub inputs: Vec<PathBuf>,
    /// Also the images of the folders' sub-folders, their edge images in the same sub-folders of `out_dir`.
    pub recursive: bool,
    /// Folder for the edge images (`<stem>_sobel.<ext>`).
    pub out_dir: PathBuf,
    /// The edge images' format.
    pub format: Format,
    /// Operator, border and arithmetic.
    pub filter: Filter,
    /// PNG encoder effort.
    pub compression: PngCompression,
    /// GPU slots (streams with pinned buffers) per device; `None`: [`DEFAULT_SLOTS`], or [`JPEG_BACKEND_SLOTS`]
    /// where JPEGs are decoded without the GPU's JPEG engine.
    pub slots: Option<usize>,
    /// Devices to spread the images over; `None`: every visible device.
    pub devices: Option<Vec<usize>>,
    /// Also compute cpu-scalar for every image and fail the image if the bytes differ.
    pub check: bool,
    /// Decode (whole, on the CPU) and encode only, no Sobel: the codecs' own rate batch mode is measured
    /// against (with a GPU, batch leaves part of a PNG's decode to it and can run faster). Each image is
    /// encoded as the edge image computed once for the first image of its size.
    pub baseline: bool,
    /// Host memory all workers together may use.
    pub budget: Budget,
    /// Keep the stored orientation instead of applying the EXIF one.
    pub keep_orientation: bool,
    /// Where JPEGs are decoded.
    pub jpeg_decoder: JpegDecoder,
    /// Where PNG outputs are encoded.
    pub png_encoder: PngEncoder,
    /// Where PNG inputs are inflated.
    pub png_inflate: PngInflate,
    /// `--kernel`: the filter command's kernel instead of the edges (`kernel.rs`).
    pub kernel: Option<KernelJob>,
    /// `--output canny`: OpenCV's Canny of every image instead of the edges (`kernel.rs`).
    pub canny: Option<crate::canny::Canny>,
}

/// Where a batch encodes its PNG outputs (`--png-encoder`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PngEncoder {
    /// Deflated on the GPU (`cuda/deflate.cu`, repeated strings found as zlib finds them) for images the GPU
    /// computed at the fast and default levels, unless the stream would be larger than the edges (data that
    /// does not compress): those, `--png-compression best` and every other image on the CPU.
    #[default]
    Auto,
    /// The CPU (zlib-rs, or fdeflate at the fast level) for every image.
    Cpu,
}

impl BatchOptions {
    /// What the decoders are told: the memory budget and whether to keep the stored orientation.
    fn decode_options(&self) -> image_io::DecodeOptions {
        image_io::DecodeOptions { budget: self.budget, keep_orientation: self.keep_orientation }
    }
}

impl PngEncoder {
    /// Every choice, in `--help`'s order.
    pub const ALL: [PngEncoder; 2] = [PngEncoder::Auto, PngEncoder::Cpu];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PngEncoder::Auto => "auto",
            PngEncoder::Cpu => "cpu",
        }
    }
}

pub use crate::engine::{JpegDecoder, PngInflate};

/// Peak host bytes per pixel of one batch image of `opts`: the decode, or the RGB image + the edges (+ with `--check`
/// cpu-scalar's stages and output, and Canny's copies of the gradients and magnitudes, + a GPU slot's pinned input
/// and output), whichever is larger. On the GPU a PNG may instead go up still filtered: its stored rows and a
/// slot's pinned copy of them, with the edges in pinned memory and out (two stored pixels and two bytes).
pub fn peak_bytes_per_pixel(header: &image_io::Header, opts: &BatchOptions, gpu: bool) -> u64 {
    let canny = if opts.canny.is_some() { 24 } else { 0 };
    let check = if opts.check { cpu::scalar::STAGES_BYTES_PER_PIXEL + 1 + canny } else { 0 };
    let compute = 3 + 1 + check + if gpu { 4 } else { 0 };
    let filtered = if gpu { 2 * header.stored_bytes_per_pixel + 2 } else { 0 };
    header.decode_peak_bytes_per_pixel().max(compute).max(filtered)
}

/// Runs a batch: plans every output, then decodes, computes and writes on all cores. nvJPEG is loaded only where an
/// input is a JPEG (its first bytes) or `--jpeg-decoder gpu` asks: 0.9 s of a 2000-PNG folder's 3.6 s. The
/// devices open (the driver, a context and kernels each: ~0.25 s) while the inputs are planned (15–35 ms)
/// and the first PNGs are read (`ahead.rs`).
pub fn run(opts: &BatchOptions) -> anyhow::Result<BatchSummary> {
    let (summary, resident) = run_keeping(opts)?;
    resident.close();
    crate::trace::mark("engines closed");
    Ok(summary)
}

/// Whether a batch of `opts` over `jobs` loads nvJPEG where the GPU has it: an input is a JPEG (by its first bytes),
/// and the edges or Canny are computed (`--kernel`'s filters and the baseline decode on the CPU).
pub fn has_jpegs(opts: &BatchOptions, jobs: &[(PathBuf, PathBuf)]) -> bool {
    !opts.baseline
        && opts.kernel.is_none()
        && jobs.iter().any(|(path, _)| crate::image_io::jpeg::starts_like_jpeg(path))
}

/// [`run`], handing back the engines instead of closing them: a command that ends next can leave them to the OS
/// ([`crate::interrupt::exit_now`]) — closing a device's JPEG engine alone takes ~0.3 s.
pub fn run_keeping(opts: &BatchOptions) -> anyhow::Result<(BatchSummary, Resident)> {
    let pool = memory::Pool::new(opts.budget);
    let (planned, devices, ahead) = std::thread::scope(|s| {
        let devices = s.spawn(|| open_devices(opts));
        let planned = plan(opts).map(|(jobs, skipped)| {
            let jpegs = has_jpegs(opts, &jobs);
            (jobs, skipped, jpegs)
        });
        crate::trace::mark("inputs planned");
        let ahead = match &planned {
            // Not with --png-inflate gpu: the waves take from the back of the order, and a file read ahead that a
            // wave took instead would hold its memory to the end.
            Ok((jobs, _, _)) if !opts.baseline && opts.png_inflate == PngInflate::Cpu && opts.kernel.is_none() => {
                let ahead = Ahead::read_while(opts, jobs, &pool, || devices.is_finished());
                crate::trace::mark(&format!("{} PNGs read while the GPU opened", ahead.len()));
                ahead
            }
            _ => Ahead::default(),
        };
        (planned, devices.join().unwrap_or_else(|_| vec![(0, Err("opening the GPU failed".into()))]), ahead)
    });
    let (jobs, skipped, jpegs) = planned?;
    let resident = Resident::from_devices(opts, devices, jpegs, None)?;
    let summary = run_jobs(opts, &resident, &jobs, &pool, ahead);
    crate::trace::mark("batch done");
    Ok((BatchSummary { skipped, ..summary }, resident))
}

/// Each (input, output) of `jobs` on `resident`, within the memory of `pool`, with the files `ahead` read before the
/// engines were open.
fn run_jobs<'p>(
    opts: &BatchOptions,
    resident: &Resident,
    jobs: &[(PathBuf, PathBuf)],
    pool: &'p memory::Pool,
    ahead: Ahead<'p>,
) -> BatchSummary {
    let engines = &resident.engines[..];
    // PNGs go to the GPU still filtered on every engine, or on none (no GPU): then what was read ahead is dropped.
    let filtered_on_gpu = engines.iter().all(Engine::unfilters_on_gpu);
    if !filtered_on_gpu {
        ahead.clear();
    }
    let decode_opts = opts.decode_options();
    // Baseline: one edge image per size, computed on first use.
    let baseline_edges: EdgeCache = Mutex::new(HashMap::new());

    let progress = ProgressBar::new(jobs.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} images · {per_sec} · {msg}")
            .expect("a valid template"),
    );
    let failures = Mutex::new(Vec::new());
    let notes = Mutex::new(Vec::new());
    let input_bytes = std::sync::atomic::AtomicU64::new(0);
    // JPEGs nvJPEG decoded, for the progress bar (which decoder is running, as it runs).
    let by_nvjpeg = std::sync::atomic::AtomicU64::new(0);
    // Of them, those the GPU's JPEG engine decoded (the rest: nvJPEG's default backend).
    let by_engine = std::sync::atomic::AtomicU64::new(0);
    // PNGs deflated on the GPU, and inflated there, likewise.
    let by_gpu_deflate = std::sync::atomic::AtomicU64::new(0);
    let by_nvcomp = std::sync::atomic::AtomicU64::new(0);
    // Thread-seconds in each stage, for CUDA_SOBEL_TRACE's account of where the workers' time goes.
    let stages = Stages::default();
    stages.read.add(ahead.time());
    let start = Instant::now();

    // What the slots compute — the edges, or Canny's — and hand back: the PNG data deflated on the GPU when the
    // outputs are PNGs it may encode, the edge bytes as well for --check.
    let want = Want {
        canny: opts.canny,
        png: opts.png_encoder == PngEncoder::Auto && crate::engine::deflates_on_gpu(opts.format, opts.compression),
        bytes: opts.check,
    };
    let text = |e: Error| one_line(&e);
    let write_edges = |out: &Path, edges: Edges| -> Result<(), String> {
        match (&edges.zlib, &edges.bytes) {
            (Some(zlib), bytes) => {
                let target = output::target(out).map_err(text)?;
                output::write_png_zlib(&target, edges.width, edges.height, zlib).map_err(text)?;
                by_gpu_deflate.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                match (opts.check, bytes) {
                    (true, Some(bytes)) => check_png(out, bytes),
                    _ => Ok(()),
                }
            }
            (None, Some(bytes)) => {
                kernel::write_pixels(opts, out, (edges.width, edges.height), bytes, png::ColorType::Grayscale)
            }
            (None, None) => unreachable!("a slot hands back the bytes when it has no PNG data"),
        }
    };
    // --check of edges computed from a PNG the CPU did not decode: the whole decode on the CPU, within the
    // reservation already held.
    let check_decoded = |path: &Path, edges: &Edges| -> Result<(), String> {
        if let (true, Some(bytes)) = (opts.check, &edges.bytes) {
            let (decoded, ()) = image_io::decode(path, &decode_opts, |_| Ok(())).map_err(text)?;
            check_against_scalar(path, &decoded.rgb, bytes, opts)?;
        }
        Ok(())
    };
    let admit_in = |engine: Option<&Engine>, path: &Path, h: &image_io::Header| {
        let needed =
            memory::image_bytes(h.width, h.height, peak_bytes_per_pixel(h, opts, engine.is_some_and(Engine::has_gpu)));
        pool.reserve(path, h.width, h.height, needed)
    };

    // The GPU's part of a PNG read still filtered: a slot undoes its filters, computes and deflates the edges;
    // then the file.
    let on_rows = |i: usize, png: Filtered| -> Result<(), String> {
        let (path, out) = (&jobs[i].0, &jobs[i].1);
        let edges = stages
            .gpu
            .time(|| engines[i % engines.len()].sobel_filtered(&png, opts.filter, want))
            .map_err(|e| format!("{}: {}", path.display(), one_line(&e)))?;
        drop(png);
        check_decoded(path, &edges)?;
        stages.write.time(|| write_edges(out, edges))
    };
    // One job, start to end — or, with `pass`, up to a PNG read still filtered, handed back for a GPU thread.
    let job = |i: usize, pass: bool| -> Result<Option<ToGpu<'p>>, String> {
        let (path, out) = (&jobs[i].0, &jobs[i].1);
        let engine = (!engines.is_empty()).then(|| &engines[i % engines.len()]);
        if let Some(k) = &opts.kernel {
            return kernel::run_one(opts, k, engine, (path, out), pool).map(|()| None);
        }
        let admit = |h: &image_io::Header| admit_in(engine, path, h);
        // With GPU slots, a PNG the GPU can unfilter is only inflated here (image_io::filtered): the CPU's
        // share of its decode falls by half.
        // They are inflated into the slots' page-locked row buffers (`gpu/rows.rs`), which the slot uploads from.
        if let Some(engine) = engine.filter(|e| e.unfilters_on_gpu() && !opts.baseline) {
            let read = match ahead.take(i) {
                Some(read) => Some(read),
                None => {
                    let admit = |h: &image_io::Header| admit(h).map(Some);
                    let store = |bytes| engine.row_store(bytes);
                    stages.read.time(|| filtered::read_into(path, &decode_opts, admit, store)).map_err(text)?
                }
            };
            match read {
                Some(read) if pass => return Ok(Some(ToGpu::Rows(read))),
                Some((png, _reservation)) => return on_rows(i, png).map(|()| None),
                None => {}
            }
        }
        // With nvJPEG, a JPEG is only read here: the slot decodes it on the GPU into gpu-strip's input. A file
        // nvJPEG refuses goes on to the CPU decoder below, and a note says so.
        if let Some(engine) = engine.filter(|e| e.decodes_jpeg_on_gpu() && !opts.baseline) {
            if let Some((jpeg, _reservation)) = jpeg::read(path, &decode_opts, admit).map_err(text)? {
                match engine.sobel_jpeg(&jpeg.bytes, opts.filter, want, opts.check) {
                    Ok(Some(JpegEdges { edges, rgb, on_engine })) => {
                        by_nvjpeg.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if on_engine {
                            by_engine.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        if let (Some(rgb), Some(bytes)) = (rgb, &edges.bytes) {
                            check_against_scalar(path, &rgb, bytes, opts)?;
                        }
                        return write_edges(out, edges).map(|()| None);
                    }
                    Ok(None) => {}
                    Err(e) => notes.lock().expect("no panic while locked").push(format!(
                        "{}: decoded on the CPU ({})",
                        path.display(),
                        one_line(&e)
                    )),
                }
            }
        }
        let (decoded, _reservation) = image_io::decode(path, &decode_opts, admit).map_err(text)?;
        notes.lock().expect("no panic while locked").extend(decoded.notes);
        let rgb = decoded.rgb;
        let (w, h) = rgb.dimensions();
        if opts.baseline {
            let edges = baseline_edges
                .lock()
                .expect("no panic while locked")
                .entry((w, h))
                .or_insert_with(|| Arc::new(cpu::rayon::sobel(&rgb, opts.filter).into_raw()))
                .clone();
            return kernel::write_pixels(opts, out, (w, h), &edges, png::ColorType::Grayscale).map(|()| None);
        }
        let engine = engine.expect("an engine unless baseline");
        let edges = engine
            .sobel_for_batch(&rgb, opts.filter, want)
            .map_err(|e| format!("{}: {}", path.display(), one_line(&e)))?;
        if let (true, Some(bytes)) = (opts.check, &edges.bytes) {
            check_against_scalar(path, &rgb, bytes, opts)?;
        }
        write_edges(out, edges).map(|()| None)
    };
    let usual = |i: usize| job(i, true);

    // A job's end: the progress bar, or the failure recorded.
    let finish = |i: usize, result: Result<(), String>| {
        let path = &jobs[i].0;
        match result {
            Ok(()) => {
                let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                let total = input_bytes.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed) + bytes;
                let mut message = format!("{:.0} MB/s", total as f64 / 1e6 / start.elapsed().as_secs_f64());
                for (count, what) in [
                    (&by_nvjpeg, "JPEGs decoded by nvJPEG"),
                    (&by_engine, "of them on its JPEG engine"),
                    (&by_nvcomp, "PNGs inflated by nvCOMP"),
                    (&by_gpu_deflate, "PNGs deflated on the GPU"),
                ] {
                    match count.load(std::sync::atomic::Ordering::Relaxed) {
                        0 => {}
                        n => message.push_str(&format!(" · {n} {what}")),
                    }
                }
                progress.set_message(message);
            }
            Err(reason) => failures.lock().expect("no panic while locked").push((path.clone(), reason)),
        }
        progress.inc(1);
    };

    notes.lock().expect("no panic while locked").extend(resident.notes.iter().cloned());
    // A PNG the GPU unfilters goes to a GPU thread, one a slot, once its worker has inflated it (`handoff.rs`); with
    // --png-inflate gpu, waves of PNGs nvCOMP inflates are taken from the back of the order (`waves.rs`).
    let gpu_threads: usize = if filtered_on_gpu { engines.iter().map(Engine::slot_count).sum() } else { 0 };
    let in_waves = waves::wanted(opts, engines);
    let order = ahead.order(jobs.len());
    let order = Order::new(&order, in_waves && waves::alone());
    let waves = waves::Job {
        opts,
        engines,
        jobs,
        decode_opts: &decode_opts,
        pool,
        want,
        stages: &stages,
        by_nvcomp: &by_nvcomp,
        usual: &usual,
        finish: &finish,
        check_decoded: &check_decoded,
        write_edges: &write_edges,
    };
    let feed = |to_gpu: &handoff::ToGpuThreads<ToGpu<'p>>| waves::feed(&waves, &order, to_gpu);
    let producer: Option<handoff::Producer<ToGpu<'p>>> = in_waves.then_some(&feed);
    let on_gpu = |i: usize, work: ToGpu<'p>| match work {
        ToGpu::Rows((png, _reservation)) => on_rows(i, png),
        ToGpu::InWave(image) => waves::sobel(&waves, i, image),
    };
    let threads = handoff::run(&order, resident.workers.as_ref(), gpu_threads, job, on_gpu, finish, producer);
    progress.finish_and_clear();
    stages.trace(engines, start.elapsed().as_secs_f64(), jobs.len(), threads);

    let mut failures = failures.into_inner().expect("no panic while locked");
    failures.sort();
    let mut notes = notes.into_inner().expect("no panic while locked");
    notes.sort();
    BatchSummary {
        images: jobs.len(),
        failures,
        seconds: start.elapsed().as_secs_f64(),
        input_bytes: input_bytes.into_inner(),
        engine: resident.description(opts),
        skipped: Vec::new(),
        notes,
        gpu_deflated: by_gpu_deflate.into_inner(),
        nvcomp_inflated: by_nvcomp.into_inner(),
        nvjpeg_decoded: (by_nvjpeg.into_inner(), by_engine.into_inner()),
    }
}
