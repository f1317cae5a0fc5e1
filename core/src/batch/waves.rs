//! PNGs inflated on the GPU, hundreds at once (nvCOMP), while the CPU's cores inflate the others.
//!
//! nvCOMP inflates a deflate stream with one warp, so one 2048×1024 PNG takes a large part of a second on the GPU,
//! and its rate is the number of PNGs in flight. So a producer thread takes PNGs from
//! the back of batch's order (`handoff.rs`; the workers take from the front and inflate on the CPU), reads them
//! without inflating them ([`filtered::read_compressed`]: the IDAT chunks' deflate stream), gathers them into a
//! wave of up to [`wave_images`] and queues it on nvCOMP ([`Engine::inflate`]) on one of [`STREAMS`] streams; a
//! second thread waits for each wave and hands its images, one at a time, to the same GPU threads the workers hand
//! theirs to, which run each through a slot — filters undone, gpu-strip, deflated on the GPU — and write it. The
//! producer takes a wave only while enough is left that the workers will not run out before it is inflated
//! ([`wave_least`]): what is left then is the workers'.
//!
//! A PNG the producer cannot read this way (not 8-bit RGB/RGBA, interlaced, damaged chunks, too large for a slot),
//! or that nvCOMP does not inflate to exactly its rows, runs the usual way, which reads it again and says what is
//! wrong in the png crate's words; a row naming a filter type PNG does not have fails the image with the CPU's
//! words.

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::handoff::{hand_on, Order, ToGpuThreads};
use super::{BatchOptions, Stages, ToGpu};
use crate::engine::{Edges, Engine, PngInflate, Want, Wave};
use crate::error::{one_line, Error};
use crate::image_io::{self, filtered};
use crate::memory::{self, Reservation};

/// Streams nvCOMP's waves go to in turn: waves queued on different streams inflate side by side.
pub const STREAMS: usize = 4;

/// Most PNGs a wave: nvCOMP's rate grows with the PNGs in flight up to ~2048 (the H200), but the wave's
/// images reach the slots only when all of it is inflated. `CUDA_SOBEL_WAVE` sets it (for measuring).
fn wave_images() -> usize {
    env_count("CUDA_SOBEL_WAVE").filter(|&n| n > 0).unwrap_or(384)
}

/// Jobs that must be left beyond a wave for the producer to take it: what the workers inflate while a wave is read,
/// inflated and run (~0.5 s at ~1200 images/s on the H100 host). `CUDA_SOBEL_WAVE_LEAST` sets it (for measuring).
fn wave_least() -> usize {
    env_count("CUDA_SOBEL_WAVE_LEAST").unwrap_or(512)
}

/// Whether the waves take every PNG, none left to the workers (`CUDA_SOBEL_CPU_LANE=0`, for measuring and tests:
/// which PNGs nvCOMP inflates is then known).
pub(super) fn alone() -> bool {
    env_count("CUDA_SOBEL_CPU_LANE") == Some(0)
}

fn env_count(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Host bytes a pixel of an image between its slot and its file: the edges in the slot's pinned buffer, and their
/// PNG data (or bytes) on their way out — the filtered rows stay on the device (`docs/cli.md`, memory).
const SLOT_BYTES_PER_PIXEL: u64 = 2;

/// PNGs read at once when gathering a wave (in parallel).
const READ_AHEAD: usize = 64;

/// The producer's threads (reading files, packing a wave's streams for upload).
const READERS: usize = 4;

/// What the waves need from the batch run.
pub(super) struct Job<'a, 'p> {
    pub opts: &'a BatchOptions,
    pub engines: &'a [Engine],
    pub jobs: &'a [(std::path::PathBuf, std::path::PathBuf)],
    pub decode_opts: &'a image_io::DecodeOptions,
    pub pool: &'p memory::Pool,
    pub want: Want,
    pub stages: &'a Stages,
    pub by_nvcomp: &'a std::sync::atomic::AtomicU64,
    /// One job the usual way, up to its GPU work.
    pub usual: &'a (dyn Fn(usize) -> Result<Option<ToGpu<'p>>, String> + Sync),
    /// A job's end (progress bar, failures).
    pub finish: &'a (dyn Fn(usize, Result<(), String>) + Sync),
    /// `--check` of edges whose input the CPU did not decode.
    pub check_decoded: &'a (dyn Fn(&Path, &Edges) -> Result<(), String> + Sync),
    /// Writes an edge image.
    pub write_edges: &'a (dyn Fn(&Path, Edges) -> Result<(), String> + Sync),
}

/// Whether PNGs go in waves: `--png-inflate gpu`, engines that loaded nvCOMP, not the baseline.
pub(super) fn wanted(opts: &BatchOptions, engines: &[Engine]) -> bool {
    !opts.baseline && opts.png_inflate == PngInflate::Gpu && engines.iter().all(|e| e.png_inflater().is_ok())
}

/// An image's place in its wave, and its width, height and bytes a pixel.
type Place = (usize, (u32, u32, usize));

/// A wave queued on nvCOMP: which engine, its jobs (with each one's place in the wave and image size, or `None`
/// for a job to run the usual way), and the wave (or why none).
struct Queued {
    engine: usize,
    items: Vec<(usize, Option<Place>)>,
    wave: Result<Wave, String>,
}

/// One image of an inflated wave, handed to a GPU thread with its share of the memory budget.
pub(super) struct InWave<'p> {
    engine: usize,
    wave: Arc<Wave>,
    place: Place,
    held: Reservation<'p>,
}

/// The producer (`handoff::run`'s): takes waves from the back of `order` while enough is left, queues them on
/// nvCOMP, and hands their images to the GPU threads through `to_gpu` as each wave is inflated.
pub(super) fn feed<'p>(job: &Job<'_, 'p>, order: &Order, to_gpu: &ToGpuThreads<ToGpu<'p>>) {
    let engines = job.engines.len();
    std::thread::scope(|s| {
        // Waves queued ahead: up to STREAMS inflating at once (one being read, the others queued or taken).
        let (tx, rx) = std::sync::mpsc::sync_channel::<Queued>(STREAMS.saturating_sub(2));
        s.spawn(move || {
            for queued in rx {
                hand_over(job, queued, to_gpu);
            }
        });
        // The producer reads and packs on threads of its own: on rayon's, its reads would wait behind the workers.
        let own =
            rayon::ThreadPoolBuilder::new().num_threads(READERS).thread_name(|i| format!("wave-read-{i}")).build();
        for n in 0.. {
            let (e, stream) = (n % engines, n / engines % STREAMS);
            let queued = match &own {
                Ok(pool) => pool.install(|| gather(job, e, stream, order)),
                Err(_) => gather(job, e, stream, order),
            };
            let Some(queued) = queued else { break };
            if tx.send(queued).is_err() {
                break;
            }
        }
    });
}

/// Reads the next wave's PNGs from the back of `order` and queues them on engine `e`'s nvCOMP (stream `stream`);
/// `None` when too little is left for a wave.
fn gather(job: &Job, e: usize, stream: usize, order: &Order) -> Option<Queued> {
    let engine = &job.engines[e];
    crate::trace::mark("gathering a wave");
    let (most, least) = (wave_images(), wave_least());
    // Device bytes a wave may take (its streams and rows): an eighth of what is free, at most 4 GiB — with up
    // to STREAMS waves alive, half the free memory at most.
    let budget = engine.free_device_bytes().map_or(1 << 30, |free| (free / 8).min(4 << 30));
    // Host memory: each file's stream is held twice until the wave is queued (read, then packed for the upload),
    // under a reservation each; the wave stops at half the budget, so that the producer, which holds many
    // reservations at once, never waits on its own.
    let host_budget = job.pool.budget().bytes / 2;
    let (mut items, mut read, mut bytes, mut host) = (Vec::new(), Vec::new(), 0usize, 0u64);
    while items.len() < most && bytes < budget {
        let n = READ_AHEAD.min(most - items.len());
        let mut taken = order.back(n, n + least);
        if taken.is_empty() {
            break;
        }
        // Each file's host bytes: its stream, and its copy in the wave's upload.
        let needs: Vec<u64> =
            taken.iter().map(|&i| 2 * std::fs::metadata(&job.jobs[i].0).map_or(0, |m| m.len())).collect();
        // The files nearest the back go first; what does not fit goes back to the order.
        let mut fit = 0;
        while fit < needs.len() && host + needs[needs.len() - 1 - fit] <= host_budget {
            host += needs[needs.len() - 1 - fit];
            fit += 1;
        }
        if fit == 0 && items.is_empty() {
            // A first file over half the budget goes alone (the pool refuses one over the whole of it).
            host += needs[needs.len() - 1];
            fit = 1;
        }
        order.unback(taken.len() - fit);
        let needs = &needs[needs.len() - fit..];
        taken.drain(..taken.len() - fit);
        if fit == 0 {
            break;
        }
        let got: Vec<_> = taken
            .par_iter()
            .zip(needs)
            .map(|(&i, &need)| {
                let path = &job.jobs[i].0;
                let admit = |h: &image_io::Header| job.pool.reserve(path, h.width, h.height, need);
                let png = job.stages.read.time(|| filtered::read_compressed(path, job.decode_opts, admit));
                // One too large for a slot goes the usual way (in bands), read again.
                (i, png.ok().flatten().filter(|(p, _)| engine.fits_a_slot(p.width, p.height, job.want)))
            })
            .collect();
        for (i, png) in got {
            match png {
                Some((png, reservation)) => {
                    bytes += png.deflate.len() + png.inflated_bytes();
                    items.push((i, Some((read.len(), (png.width, png.height, png.bytes_per_pixel)))));
                    read.push((png, reservation));
                }
                None => items.push((i, None)),
            }
        }
    }
    if items.is_empty() {
        return None;
    }
    let streams: Vec<&[u8]> = read.iter().map(|(p, _)| p.deflate.as_slice()).collect();
    let sizes: Vec<usize> = read.iter().map(|(p, _)| p.inflated_bytes()).collect();
    let compressed_mb = streams.iter().map(|s| s.len()).sum::<usize>() >> 20;
    crate::trace::mark(&format!("wave of {} PNGs read ({compressed_mb} MB compressed)", read.len()));
    let wave = match engine.inflate(stream, &streams, &sizes) {
        Ok(Some(w)) => Ok(w),
        Ok(None) => Err("no nvCOMP".to_string()),
        Err(e) => Err(one_line(&e)),
    };
    // Uploaded: the host's copies and their reservations go.
    drop(read);
    crate::trace::mark("wave queued");
    Some(Queued { engine: e, items, wave })
}

/// Waits for a wave and hands each of its images to the GPU threads (or runs it the usual way, where the wave
/// failed it, and hands that on).
fn hand_over<'p>(job: &Job<'_, 'p>, queued: Queued, to_gpu: &ToGpuThreads<ToGpu<'p>>) {
    crate::trace::mark(&format!("wave of {} taken", queued.items.len()));
    let finished = match &queued.wave {
        Ok(wave) => wave.finish().map_err(|e| one_line(&e)),
        Err(why) => Err(why.clone()),
    };
    crate::trace::mark("wave inflated");
    if let Err(why) = &finished {
        crate::trace::mark(&format!("nvCOMP wave of {} PNGs failed ({why}): inflated on the CPU", queued.items.len()));
    }
    let wave = queued.wave.ok().map(Arc::new);
    let send = |i: usize, work| hand_on(to_gpu, job.finish, i, work);
    for (i, place) in queued.items {
        let inflated = match (place, &wave, &finished) {
            (Some(place), Some(wave), Ok(statuses)) if statuses[place.0].is_ok() => Some((wave, place)),
            _ => None,
        };
        let Some((wave, place)) = inflated else {
            send(i, (job.usual)(i));
            continue;
        };
        // From its slot to its file the image holds host memory — the edges in the slot's pinned buffer and on their
        // way out, and with --check the whole decode on the CPU — under a reservation, as the usual path's image does.
        let path = &job.jobs[i].0;
        let (width, height, stored) = place.1;
        let header = image_io::Header { width, height, stored_bytes_per_pixel: stored as u64, reorients: false };
        let per_pixel =
            if job.opts.check { super::peak_bytes_per_pixel(&header, job.opts, true) } else { SLOT_BYTES_PER_PIXEL };
        let work = job
            .pool
            .reserve(path, width, height, memory::image_bytes(width, height, per_pixel))
            .map(|held| Some(ToGpu::InWave(InWave { engine: queued.engine, wave: wave.clone(), place, held })));
        send(i, work.map_err(|e| one_line(&e)));
    }
    crate::trace::mark("wave handed over");
}

/// A GPU thread's part of an image of a wave: its slot's work, then the file.
pub(super) fn sobel(job: &Job, i: usize, image: InWave) -> Result<(), String> {
    let (path, out) = (&job.jobs[i].0, &job.jobs[i].1);
    let InWave { engine, wave, place: (k, size), held: _held } = image;
    let engine = &job.engines[engine];
    let edges = job.stages.gpu.time(|| engine.sobel_inflated(&wave, k, size, job.opts.filter, job.want));
    // The wave's device memory goes with its last image; the reservation stays until the file is written.
    drop(wave);
    match edges {
        Ok(Some(edges)) => {
            job.by_nvcomp.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (job.check_decoded)(path, &edges).and_then(|()| job.stages.write.time(|| (job.write_edges)(out, edges)))
        }
        // gather() takes only images that fit a slot.
        Ok(None) => Err(format!("{}: too large for a GPU slot after all", path.display())),
        Err(e) => match e.bad_data() {
            Some(detail) => Err(one_line(&Error::Decode { path: path.clone(), detail: detail.to_string() })),
            None => Err(format!("{}: {}", path.display(), one_line(&e))),
        },
    }
}
