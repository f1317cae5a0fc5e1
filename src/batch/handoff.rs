//! Batch's workers, and the GPU threads they hand inflated PNGs to.
//!
//! The workers take jobs in one order from a shared counter (the files read ahead first: `ahead.rs`). A PNG the
//! GPU unfilters is handed, once inflated, through a channel of one place a thread to the GPU threads — one a slot,
//! asleep while their slot's GPU work runs — which undo its filters, compute and deflate its edges on the slot and
//! write the file; its worker goes on to the next file. Every other job runs whole on its worker.
//!
//! Why: when the worker waited for its slot itself, each of 24 workers inflated a scene (12 ms of thread time), then
//! slept through its slot's GPU work (9 ms), and the cores idled meanwhile; 2000 PNG scenes on the H100 host ran
//! 2.13–2.45 s by the clock, and 1.99–2.38 s with the handoff and the reads ahead (docs/performance.md v0.51).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::image_io::filtered::Filtered;
use crate::memory::Reservation;

/// A PNG inflated but not unfiltered, with its share of the memory budget.
pub(super) type Inflated<'p> = (Filtered, Reservation<'p>);

/// Runs the jobs of `order` on `workers` (the global pool if `None`) and up to `gpu_threads` GPU threads:
/// `job(i, pass)` runs job `i` whole, or with `pass` may hand back its PNG inflated, which a GPU thread gives to
/// `on_gpu`; `finish` sees every job's result once. Returns the threads used.
pub(super) fn run<'p>(
    order: &[usize],
    workers: Option<&rayon::ThreadPool>,
    gpu_threads: usize,
    job: impl Fn(usize, bool) -> Result<Option<Inflated<'p>>, String> + Sync,
    on_gpu: impl Fn(usize, Filtered) -> Result<(), String> + Sync,
    finish: impl Fn(usize, Result<(), String>) + Sync,
) -> usize {
    let next = AtomicUsize::new(0);
    let (to_gpu, from_workers) = std::sync::mpsc::sync_channel::<(usize, Inflated<'p>)>(gpu_threads);
    let from_workers = Mutex::new(from_workers);
    std::thread::scope(|s| {
        let gpu_thread = || loop {
            // The lock is let go before the work: the threads take turns to wait, not to compute.
            let taken = from_workers.lock().expect("no panic while locked").recv();
            let Ok((i, (png, reservation))) = taken else { break };
            finish(i, on_gpu(i, png));
            drop(reservation);
        };
        // A thread the system refuses is one fewer; with none, every job runs whole on its worker.
        let started = (0..gpu_threads)
            .filter(|k| std::thread::Builder::new().name(format!("batch-gpu-{k}")).spawn_scoped(s, gpu_thread).is_ok())
            .count();
        let to_gpu = to_gpu;
        let run_jobs = |_: rayon::BroadcastContext<'_>| {
            while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                match job(i, started > 0) {
                    Ok(Some(inflated)) => {
                        if let Err(unsent) = to_gpu.send((i, inflated)) {
                            finish(unsent.0 .0, Err("the GPU threads ended early".into()));
                        }
                    }
                    done => finish(i, done.map(drop)),
                }
            }
        };
        let workers = match workers {
            Some(pool) => {
                pool.broadcast(run_jobs);
                pool.current_num_threads()
            }
            None => {
                rayon::broadcast(run_jobs);
                rayon::current_num_threads()
            }
        };
        started + workers
        // `to_gpu` is dropped here: the GPU threads end once they have taken what was sent.
    })
}
