//! The engines a batch computes with: a device's context and kernels, nvJPEG where JPEGs are among the inputs,
//! nvCOMP for `--png-inflate gpu`, and each device's slots — and the one line that says what they are.

use std::path::PathBuf;

use super::{waves, BatchOptions, BatchSummary, JpegDecoder, PngInflate};
use crate::engine::{AsleepForNow, Device, Engine};
use crate::memory;

/// GPU slots a device by default. 2000 PNG scenes, H100: 16 slots 1231–1267 images/s against 8 slots' 1150–1173 and
/// 4 slots' 591 (batch's line); 12 and 24 no faster than 16. Whatever their number, the slots share the driver's 8
/// hardware queues (unless the user sets `CUDA_DEVICE_MAX_CONNECTIONS`): with 32, a context is made 0.33–0.45 s
/// later, and 24 or 32 slots on 32 queues took 2.45–3.26 s for 2000 PNG scenes against 2.07–2.74 on 8, with the
/// CPU's inflate or nvCOMP's.
pub const DEFAULT_SLOTS: usize = 16;

/// Slots where the GPU's JPEG engine decodes JPEGs, for an engine of `width` decoders (`gpu::jpeg_batch`): two
/// calls' worth — one call's JPEGs decoding while the next call's gather — and two more on their way. 1000 photos,
/// H100 (7 decoders), its calls in whole rounds: 8 / 14 / 16 slots 448–449 / 530–546 / 536–543 images/s.
pub fn jpeg_engine_slots(width: usize) -> usize {
    2 * width + 2
}

/// Slots where nvJPEG's default backend decodes JPEGs (no JPEG engine): 4 slots 340–355 images/s, 8 298–408.
pub const JPEG_BACKEND_SLOTS: usize = 4;

/// Everything a batch computes with, opened once: the engines of its devices (each with its slots), what they are in
/// one line, and the worker threads beside the slots (with the slots' contexts asleep while they wait). `cuda_sobel
/// batch` opens one per run; a Dask worker keeps one for its life and runs every task through it
/// ([`Resident::run`]), so a task pays for no context, kernels, nvJPEG, pinned slots or threads. Several tasks may run
/// through one at once: their jobs share its threads, slots and the memory pool they are given.
pub struct Resident {
    pub(super) engines: Vec<Engine>,
    pub(super) description: String,
    pub(super) workers: Option<rayon::ThreadPool>,
    pub(super) notes: Vec<String>,
    /// Why devices asked for did not open.
    reasons: Vec<String>,
    _asleep: Vec<AsleepForNow>,
}

impl Resident {
    /// The engines of `opts.devices` (default: every visible one), opened at once, each with its slot pool; without
    /// any GPU, one CPU engine; none for the baseline. `jpegs`: JPEGs are among the inputs (nvJPEG is loaded unless
    /// `--jpeg-decoder cpu`); without, nvJPEG only where `--jpeg-decoder gpu` asks. `threads`: workers beside the
    /// slots (`None`: one a core, or the global pool where `RAYON_NUM_THREADS` chose).
    pub fn open(opts: &BatchOptions, jpegs: bool, threads: Option<usize>) -> anyhow::Result<Resident> {
        Resident::from_devices(opts, open_devices(opts), jpegs, threads)
    }

    /// [`Resident::open`] from devices already opened by [`open_devices`].
    pub(super) fn from_devices(
        opts: &BatchOptions,
        devices: Vec<(usize, Result<Engine, String>)>,
        jpegs: bool,
        threads: Option<usize>,
    ) -> anyhow::Result<Resident> {
        let reasons =
            devices.iter().filter_map(|(o, d)| d.as_ref().err().map(|e| format!("device {o}: {e}"))).collect();
        let (engines, description) = engines_from(opts, devices, jpegs)?;
        let (asleep, notes, workers) = workers(&engines, threads);
        Ok(Resident { engines, description, workers, notes, reasons, _asleep: asleep })
    }

    /// What computes the jobs of `opts`, in one line (the summary's).
    pub fn description(&self, opts: &BatchOptions) -> String {
        match &opts.kernel {
            _ if opts.canny.is_some() => format!("{} after {}", canny_line(opts), self.description),
            Some(k) => kernel_line(k, &self.engines, &self.reasons),
            None => self.description.clone(),
        }
    }

    /// How many engines (devices, or the one CPU engine).
    pub fn engine_count(&self) -> usize {
        self.engines.len()
    }

    /// Closes the engines, all at once: a device's JPEG engine takes ~0.3 s to close, and one after the other they
    /// made the end of a 4-GPU batch wait for each in turn.
    pub fn close(self) {
        let Resident { engines, _asleep, .. } = self;
        drop(_asleep);
        on_threads(engines, drop);
    }

    /// Each (input, output) of `jobs`, already planned by [`super::plan`] (a Dask task runs its share of one plan),
    /// within the memory of `pool`; those of its files that `ahead` read first (as batch takes the files it read while
    /// the GPU opened: not with `--png-inflate gpu` or `--kernel`).
    pub fn run(
        &self,
        opts: &BatchOptions,
        jobs: &[(PathBuf, PathBuf)],
        pool: &memory::Pool,
        ahead: Option<&super::ReadAhead>,
    ) -> BatchSummary {
        let ahead = match ahead {
            Some(a) if opts.png_inflate == PngInflate::Cpu && opts.kernel.is_none() => a.take_for(jobs),
            _ => super::ahead::Ahead::default(),
        };
        super::run_jobs(opts, self, jobs, pool, ahead)
    }
}

/// Each device of `opts.devices` (default: every visible one) opened with gpu-strip's kernels, or why not; none
/// for the baseline. The devices open at once, each on a thread of its own: a context and its kernels take
/// ~0.25 s a device, and one after the other they made two GPUs' fixed cost twice one's.
pub(super) fn open_devices(opts: &BatchOptions) -> Vec<(usize, Result<Engine, String>)> {
    if opts.baseline {
        return Vec::new();
    }
    let ordinals = opts.devices.clone().unwrap_or_else(|| (0..Engine::device_count().max(1)).collect());
    let open = |o: usize| Engine::new(Device::Cuda(o), opts.filter).map_err(|e| e.to_string());
    on_threads(ordinals, |o| (o, open(o)))
}

/// `f` of each item, each on a scoped thread of its own, in order.
fn on_threads<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items.into_iter().map(|item| s.spawn(move || f(item))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

/// The engines of [`Resident::open`], from its devices opened: nvJPEG, nvCOMP and the slots added to each device at
/// once (loading nvJPEG and pinning a device's slots take tenths of a second each).
fn engines_from(
    opts: &BatchOptions,
    devices: Vec<(usize, Result<Engine, String>)>,
    jpegs: bool,
) -> anyhow::Result<(Vec<Engine>, String)> {
    if opts.baseline {
        return Ok((Vec::new(), "none (baseline: decode + encode only)".to_string()));
    }
    let nvjpeg = opts.jpeg_decoder == JpegDecoder::Gpu || (jpegs && opts.jpeg_decoder == JpegDecoder::Auto);
    let ready = |(ordinal, opened): (usize, Result<Engine, String>)| {
        let ready = opened.and_then(|e| {
            let e = if nvjpeg { e.with_nvjpeg() } else { e };
            let e = if opts.png_inflate == PngInflate::Gpu { e.with_nvcomp(waves::STREAMS) } else { e };
            let default = match (jpegs, e.jpeg_engine_width()) {
                (true, Some(width)) => jpeg_engine_slots(width),
                (true, None) => JPEG_BACKEND_SLOTS,
                (false, _) => DEFAULT_SLOTS,
            };
            e.with_slots(opts.slots.unwrap_or(default)).map_err(|e| e.to_string())
        });
        ready.map_err(|e| format!("device {ordinal}: {e}"))
    };
    let (mut engines, mut reasons) = (Vec::new(), Vec::new());
    for ready in on_threads(devices, ready) {
        match ready {
            Ok(e) => engines.push(e),
            Err(e) => reasons.push(e),
        }
    }
    let slots = engines.first().map_or(0, Engine::slot_count);
    let jpeg = match engines.first().map(Engine::jpeg_decoder) {
        _ if !nvjpeg && opts.jpeg_decoder == JpegDecoder::Auto => "no JPEG among the inputs (nvJPEG not loaded)".into(),
        Some(Ok(lib)) => format!("JPEGs decoded by nvJPEG ({lib})"),
        Some(Err(why)) if opts.jpeg_decoder == JpegDecoder::Gpu => anyhow::bail!("--jpeg-decoder gpu: {why}"),
        None if opts.jpeg_decoder == JpegDecoder::Gpu => anyhow::bail!("--jpeg-decoder gpu: {}", reasons.join("; ")),
        Some(Err(why)) => format!("JPEGs decoded on the CPU: {why}"),
        None => "JPEGs decoded on the CPU: no GPU".to_string(),
    };
    let png = match (opts.png_inflate, engines.first().map(Engine::png_inflater)) {
        (PngInflate::Cpu, _) => String::new(),
        (PngInflate::Gpu, Some(Ok(lib))) => format!("; PNGs inflated by nvCOMP ({lib})"),
        (PngInflate::Gpu, Some(Err(why))) => anyhow::bail!("--png-inflate gpu: {why}"),
        (PngInflate::Gpu, None) => anyhow::bail!("--png-inflate gpu: {}", reasons.join("; ")),
    };
    let mut description = match (engines.first(), &opts.kernel) {
        (_, Some(k)) => kernel_line(k, &engines, &reasons),
        (Some(e), None) => format!("{} ({} device(s)), {} slots each; {jpeg}{png}", e.describe(), engines.len(), slots),
        (None, None) => format!("cpu-rayon (GPU variants skipped: {}); {jpeg}", reasons.join("; ")),
    };
    if !engines.is_empty() && !reasons.is_empty() {
        description.push_str(&format!(" — skipped {}", reasons.join("; ")));
    }
    if engines.is_empty() {
        engines.push(Engine::new(Device::Cpu, opts.filter)?);
    }
    Ok((engines, description))
}

/// `--output canny`'s parameters, which the summary's line puts before what computes its gradients (`cuda/canny.cu`
/// after gpu-strip's on a GPU, cpu-rayon's without).
fn canny_line(opts: &BatchOptions) -> String {
    let c = opts.canny.expect("called for --output canny");
    format!(
        "Canny (aperture {}, norm {}, thresholds {} and {})",
        c.ksize.name(),
        if c.norm == crate::sobel::Norm::L1 { "l1" } else { "l2" },
        c.low,
        c.high
    )
}

/// What computes `batch --kernel`'s job `k` on `engines` (the GPU ones; none: the CPU, for the `reasons` given).
fn kernel_line(k: &super::KernelJob, engines: &[Engine], reasons: &[String]) -> String {
    match engines.iter().find(|e| e.has_gpu()) {
        Some(e) => {
            let strategy = crate::variant::Variant::auto_for(&k.kernel).name();
            let gpus = engines.iter().filter(|e| e.has_gpu()).count();
            format!("{} by {strategy} on {} ({gpus} device(s))", k.kernel.name, e.device_name().unwrap_or("?"))
        }
        None => format!("{} by cpu-rayon (no GPU: {})", k.kernel.name, reasons.join("; ")),
    }
}

/// The threads a batch's jobs run on beside GPU slots, and the slots' contexts set to wait asleep until the guards
/// are dropped: a worker holding a slot mostly waits for the GPU (a photo's decode and edges on the JPEG engine),
/// and asleep it leaves its core to the workers that inflate and decode — so there are as many workers as cores
/// and half as many more as slots. 2000 PNG scenes, H100 (16 cores, 8 slots), when their workers still held the
/// slots: 16 workers spinning 990–1020 images/s, asleep 1006–1019; 24 asleep 1044–1048, spinning 955–963; 32
/// asleep 985–1025. Now a PNG's GPU part runs on the slots' own
/// threads, and 14, 16 or 24 workers ran those scenes alike (2.13–2.27, 2.04–2.23, 1.99–2.25 s).
/// `None` (the global pool) without slots, or where `RAYON_NUM_THREADS` chose the threads and `threads` does not. A context whose waits
/// cannot be set asleep keeps spinning (the batch still runs, slower): one note each says so.
fn workers(engines: &[Engine], threads: Option<usize>) -> (Vec<AsleepForNow>, Vec<String>, Option<rayon::ThreadPool>) {
    let slots: usize = engines.iter().map(Engine::slot_count).sum();
    if slots == 0 || (threads.is_none() && std::env::var_os("RAYON_NUM_THREADS").is_some()) {
        return (Vec::new(), Vec::new(), None);
    }
    let (mut asleep, mut notes) = (Vec::new(), Vec::new());
    for engine in engines {
        match engine.wait_asleep_for_now() {
            Some(Ok(guard)) => asleep.push(guard),
            Some(Err(e)) => notes.push(format!(
                "{}: the GPU's waits could not be set asleep, so they spin beside the workers ({})",
                engine.device_name().unwrap_or("GPU"),
                crate::error::one_line(&e)
            )),
            None => {}
        }
    }
    let threads = threads.unwrap_or_else(rayon::current_num_threads) + slots.div_ceil(2);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("batch-{i}")).build().ok();
    (asleep, notes, pool)
}
