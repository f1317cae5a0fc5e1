//! PNGs inflated on the GPU, hundreds at once (nvCOMP), with the CPU's cores inflating others meanwhile.
//!
//! nvCOMP inflates a deflate stream with one warp, so one 2048×1024 PNG takes a large part of a second on the GPU,
//! and its rate is the number of PNGs in flight (docs/performance.md v0.32). So a producer thread reads
//! PNGs from the front of the list without inflating them ([`filtered::read_compressed`]: the IDAT chunks'
//! deflate stream), gathers them into waves of up to [`wave_images`] and queues each wave on nvCOMP
//! ([`Engine::inflate`]) on one of [`STREAMS`] streams, so that several waves inflate at once; the calling
//! thread takes the waves in order as they finish, and a pool of threads of its own, one a slot ([`SLOTS`]), runs
//! each image of a wave through a GPU slot — filters undone, gpu-strip, deflated on the GPU — and writes it. Meanwhile [`cpu_lane_threads`] threads take
//! PNGs from the back of the list and run them the usual way (inflated on the CPU): the first wave's half
//! second is not lost, and the cores are busy while the GPU inflates.
//!
//! Measured (docs/performance.md v0.44–v0.45, H100 host with 16 cores, 2000 copies of the 2048×1024 test scene):
//! nvCOMP inflates a wave of 512 in 0.13–0.25 s and the next wave is inflated before the last is done; the whole
//! path ran at 1068–1106 images/s against the CPU inflate's 896–947 in the same call with the outputs on tmpfs, but
//! level on the machine's disk, where writing the files became the limit — so it is `--png-inflate gpu`, not the
//! default.
//!
//! A PNG the producer cannot read this way (not 8-bit RGB/RGBA, interlaced, damaged chunks), or that nvCOMP
//! does not inflate to exactly its rows, runs the usual way too, which reads it again and says what is wrong
//! in the png crate's words; a row naming a filter type PNG does not have fails the image with the CPU's words.

use std::ops::Range;
use std::path::Path;
use std::sync::Mutex;

use rayon::prelude::*;

use super::{BatchOptions, Stages};
use crate::engine::{Edges, Engine, PngInflate, Want, Wave};
use crate::error::{one_line, Error};
use crate::image_io::{self, filtered};
use crate::memory;

/// Streams nvCOMP's waves go to in turn: waves queued on different streams inflate side by side.
pub const STREAMS: usize = 4;

/// Most PNGs a wave: nvCOMP's rate grows with the PNGs in flight up to ~2048 (the H200, v0.32), and up to
/// [`STREAMS`] waves are in flight. `CUDA_SOBEL_WAVE` sets it (for measuring).
fn wave_images() -> usize {
    std::env::var("CUDA_SOBEL_WAVE").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(512)
}

/// Threads inflating PNGs on the CPU beside the waves: half the cores (the other half run the waves' slots,
/// reading and writing). `CUDA_SOBEL_CPU_LANE` sets it (for measuring; 0: the waves alone).
fn cpu_lane_threads() -> usize {
    let half = std::thread::available_parallelism().map_or(1, |n| n.get() / 2);
    std::env::var("CUDA_SOBEL_CPU_LANE").ok().and_then(|v| v.parse().ok()).unwrap_or(half)
}

/// GPU slots a device by default with `--png-inflate gpu`, and threads taking a wave's images through them. A
/// thread holds a slot while its image's GPU work runs (~8–10 ms for the 2048×1024 scene: the unfilter wavefront,
/// gpu-strip, the deflate) and then writes the file, so the rate is the threads over that time; the slots' streams
/// have hardware queues of their own ([`crate::engine::HARDWARE_QUEUES`]). Measured (docs/performance.md v0.45,
/// H100, 2000 scenes, outputs on tmpfs): v0.44's 8 slots on rayon's 16 threads 802–827 images/s, 24 slots on 24 threads
/// of their own 1068–1106 in the same call.
pub const SLOTS: usize = 24;

/// Host bytes a pixel of an image between its slot and its file: the edges in the slot's pinned buffer, and their
/// PNG data (or bytes) on their way out — the filtered rows stay on the device (`docs/cli.md`, memory).
const SLOT_BYTES_PER_PIXEL: u64 = 2;

/// PNGs read ahead at once when gathering a wave (in parallel).
const READ_AHEAD: usize = 64;

/// The producer's threads (reading files, packing a wave's streams for upload).
const READERS: usize = 4;

/// What the waves need from the batch run.
pub(super) struct Job<'a> {
    pub opts: &'a BatchOptions,
    pub engines: &'a [Engine],
    pub jobs: &'a [(std::path::PathBuf, std::path::PathBuf)],
    pub decode_opts: &'a image_io::DecodeOptions,
    pub pool: &'a memory::Pool,
    pub want: Want,
    pub stages: &'a Stages,
    pub by_nvcomp: &'a std::sync::atomic::AtomicU64,
    /// One job the usual way.
    pub run_job: &'a (dyn Fn(usize) -> Result<(), String> + Sync),
    /// A job's end (progress bar, failures).
    pub finish: &'a (dyn Fn(usize, Result<(), String>) + Sync),
    /// `--check` of edges whose input the CPU did not decode.
    pub check_decoded: &'a (dyn Fn(&Path, &Edges) -> Result<(), String> + Sync),
    /// Writes an edge image.
    pub write_edges: &'a (dyn Fn(&Path, Edges) -> Result<(), String> + Sync),
}

/// The jobs that go in waves (PNGs, with `--png-inflate gpu` and engines that loaded nvCOMP) and the others,
/// as indices into `jobs`.
pub(super) fn split(
    opts: &BatchOptions,
    engines: &[Engine],
    jobs: &[(std::path::PathBuf, std::path::PathBuf)],
) -> (Vec<usize>, Vec<usize>) {
    let gpu = engines.first().is_some_and(|e| e.png_inflater().is_ok());
    if opts.baseline || !gpu || opts.png_inflate != PngInflate::Gpu {
        return (Vec::new(), (0..jobs.len()).collect());
    }
    let is_png = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
    (0..jobs.len()).partition(|&i| is_png(&jobs[i].0))
}

/// The part of the list not yet taken: waves take from the front, the CPU lane from the back.
struct Untaken(Mutex<Range<usize>>);

impl Untaken {
    fn front(&self, n: usize) -> Range<usize> {
        let mut r = self.0.lock().expect("no panic while locked");
        let end = (r.start + n).min(r.end);
        let taken = r.start..end;
        r.start = end;
        taken
    }

    /// Gives back the last `n` of what [`Untaken::front`] just took (only the producer takes from the front, and
    /// the CPU lane only takes what is after it).
    fn unfront(&self, n: usize) {
        self.0.lock().expect("no panic while locked").start -= n;
    }

    fn back(&self) -> Option<usize> {
        let mut r = self.0.lock().expect("no panic while locked");
        (r.start < r.end).then(|| {
            r.end -= 1;
            r.end
        })
    }
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

/// Runs the jobs `in_waves` (indices into `job.jobs`).
pub(super) fn run(job: &Job, in_waves: &[usize]) {
    let untaken = Untaken(Mutex::new(0..in_waves.len()));
    let engines = job.engines.len();
    std::thread::scope(|s| {
        // Waves queued ahead: up to STREAMS inflating at once (one being read, the others queued or taken).
        let (tx, rx) = std::sync::mpsc::sync_channel::<Queued>(STREAMS.saturating_sub(2));
        let untaken = &untaken;
        s.spawn(move || {
            // The producer reads and packs on threads of its own: on rayon's, its work would wait behind the
            // waves' images (each blocking on a slot), and the next wave would start only when one was done.
            let own =
                rayon::ThreadPoolBuilder::new().num_threads(READERS).thread_name(|i| format!("wave-read-{i}")).build();
            let gather = |n: usize| {
                let (e, stream) = (n % engines, n / engines % STREAMS);
                match &own {
                    Ok(pool) => pool.install(|| gather(job, e, stream, untaken, in_waves)),
                    Err(_) => gather(job, e, stream, untaken, in_waves),
                }
            };
            for n in 0.. {
                let Some(queued) = gather(n) else { break };
                if tx.send(queued).is_err() {
                    break;
                }
            }
        });
        for _ in 0..cpu_lane_threads() {
            s.spawn(move || {
                while let Some(k) = untaken.back() {
                    (job.finish)(in_waves[k], (job.run_job)(in_waves[k]));
                }
            });
        }
        // A wave's images go through the slots on threads of their own, one a slot: they mostly wait for the GPU.
        let threads = job.engines.iter().map(Engine::slot_count).sum::<usize>().max(1);
        let consumers =
            rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("wave-slot-{i}")).build();
        for queued in rx {
            match &consumers {
                Ok(pool) => pool.install(|| run_wave(job, queued)),
                Err(_) => run_wave(job, queued),
            }
        }
    });
}

/// Reads the next wave's PNGs from the front of the list and queues them on engine `e`'s nvCOMP (stream
/// `stream`); `None` when the list is all taken.
fn gather(job: &Job, e: usize, stream: usize, untaken: &Untaken, in_waves: &[usize]) -> Option<Queued> {
    let engine = &job.engines[e];
    crate::trace::mark("gathering a wave");
    let most = wave_images();
    // Device bytes a wave may take (its streams and rows): an eighth of what is free, at most 4 GiB — with up
    // to STREAMS waves alive, half the free memory at most.
    let budget = engine.free_device_bytes().map_or(1 << 30, |free| (free / 8).min(4 << 30));
    // Host memory: each file's stream is held twice until the wave is queued (read, then packed for the upload),
    // under a reservation each; the wave stops at half the budget, so that the producer, which holds many
    // reservations at once, never waits on its own.
    let host_budget = job.pool.budget().bytes / 2;
    let (mut items, mut read, mut bytes, mut host) = (Vec::new(), Vec::new(), 0usize, 0u64);
    while read.len() < most && bytes < budget {
        let mut taken = untaken.front(READ_AHEAD.min(most - read.len()));
        if taken.is_empty() {
            break;
        }
        // Each file's host bytes: its stream, and its copy in the wave's upload.
        let needs: Vec<u64> =
            taken.clone().map(|k| 2 * std::fs::metadata(&job.jobs[in_waves[k]].0).map_or(0, |m| m.len())).collect();
        let mut fit = 0;
        while fit < needs.len() && host + needs[fit] <= host_budget {
            host += needs[fit];
            fit += 1;
        }
        if fit == 0 && items.is_empty() {
            // A first file over half the budget goes alone (the pool refuses one over the whole of it).
            host += needs[0];
            fit = 1;
        }
        untaken.unfront(taken.len() - fit);
        taken.end = taken.start + fit;
        if fit == 0 {
            break;
        }
        let first = taken.start;
        let got: Vec<_> = taken
            .into_par_iter()
            .map(|k| {
                let i = in_waves[k];
                let path = &job.jobs[i].0;
                let admit = |h: &image_io::Header| job.pool.reserve(path, h.width, h.height, needs[k - first]);
                let png = job.stages.read.time(|| filtered::read_compressed(path, job.decode_opts, admit));
                (i, png.ok().flatten())
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

/// Waits for a wave and runs each of its images through a slot (or the usual way, where the wave failed it).
fn run_wave(job: &Job, queued: Queued) {
    let engine = &job.engines[queued.engine];
    crate::trace::mark(&format!("wave of {} taken", queued.items.len()));
    let finished = match &queued.wave {
        Ok(wave) => wave.finish().map_err(|e| one_line(&e)),
        Err(why) => Err(why.clone()),
    };
    crate::trace::mark("wave inflated");
    if let Err(why) = &finished {
        crate::trace::mark(&format!("nvCOMP wave of {} PNGs failed ({why}): inflated on the CPU", queued.items.len()));
    }
    queued.items.par_iter().for_each(|&(i, place)| {
        let (path, out) = (&job.jobs[i].0, &job.jobs[i].1);
        let inflated = match (place, &queued.wave, &finished) {
            (Some((k, size)), Ok(wave), Ok(statuses)) if statuses[k].is_ok() => Some((wave, k, size)),
            _ => None,
        };
        let Some((wave, k, size)) = inflated else { return (job.finish)(i, (job.run_job)(i)) };
        // From its slot to its file the image holds host memory — the edges in the slot's pinned buffer and on their
        // way out, and with --check the whole decode on the CPU — under a reservation, as the usual path's image does.
        let (width, height, stored) = size;
        let header = image_io::Header { width, height, stored_bytes_per_pixel: stored as u64, reorients: false };
        let per_pixel =
            if job.opts.check { super::peak_bytes_per_pixel(&header, true, true) } else { SLOT_BYTES_PER_PIXEL };
        let held = match job.pool.reserve(path, width, height, memory::image_bytes(width, height, per_pixel)) {
            Ok(held) => held,
            Err(e) => return (job.finish)(i, Err(one_line(&e))),
        };
        let edges = job.stages.gpu.time(|| engine.sobel_inflated(wave, k, size, job.opts.filter, job.want));
        let result = match edges {
            Ok(Some(edges)) => {
                job.by_nvcomp.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                (job.check_decoded)(path, &edges).and_then(|()| job.stages.write.time(|| (job.write_edges)(out, edges)))
            }
            Ok(None) => {
                // The usual way takes a reservation of its own: a thread holds one at a time (memory::Pool).
                drop(held);
                (job.run_job)(i)
            }
            Err(e) => match e.bad_data() {
                Some(detail) => Err(one_line(&Error::Decode { path: path.clone(), detail: detail.to_string() })),
                None => Err(format!("{}: {}", path.display(), one_line(&e))),
            },
        };
        (job.finish)(i, result);
    });
    crate::trace::mark("wave done");
}
