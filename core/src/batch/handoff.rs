//! Batch's workers, and the GPU threads they hand inflated PNGs to.
//!
//! The workers take jobs from the front of one order (the files read ahead first: `ahead.rs`). A PNG the GPU
//! unfilters is handed, once inflated, through a channel of one place a thread to the GPU threads — one a slot,
//! asleep while their slot's GPU work runs — which undo its filters, compute and deflate its edges on the slot and
//! write the file; its worker goes on to the next file. Every other job runs whole on its worker. A producer may
//! take jobs from the back of the same order and hand the GPU threads work of its own (`waves.rs`: PNGs inflated
//! on the GPU), so that the two meet wherever their rates put them.
//!
//! Why: when the worker waited for its slot itself, each of 24 workers inflated a scene (12 ms of thread time), then
//! slept through its slot's GPU work (9 ms), and the cores idled meanwhile; 2000 PNG scenes on the H100 host ran
//! 2.13–2.45 s by the clock, and 1.99–2.38 s with the handoff and the reads ahead.

use std::ops::Range;
use std::sync::mpsc::SyncSender;
use std::sync::Mutex;

use crate::image_io::filtered::Filtered;
use crate::memory::Reservation;

/// A PNG inflated but not unfiltered, with its share of the memory budget.
pub(super) type Inflated<'p> = (Filtered, Reservation<'p>);

/// Where GPU work goes: to the GPU threads, with its job's index.
pub(super) type ToGpuThreads<T> = SyncSender<(usize, T)>;

/// A producer of GPU work beside the workers (see [`run`]).
pub(super) type Producer<'a, T> = &'a (dyn Fn(&ToGpuThreads<T>) + Sync);

/// The jobs of one order not yet taken: the workers take from the front, a producer from the back.
pub(super) struct Order<'o> {
    order: &'o [usize],
    untaken: Mutex<Range<usize>>,
    /// Whether the front is closed: every job is the producer's (for measuring and tests).
    back_only: bool,
}

impl<'o> Order<'o> {
    /// `order`, taken from both ends, or with `back_only` only from the back.
    pub fn new(order: &'o [usize], back_only: bool) -> Self {
        Order { order, untaken: Mutex::new(0..order.len()), back_only }
    }

    /// The next job from the front.
    pub fn front(&self) -> Option<usize> {
        let mut r = self.untaken.lock().expect("no panic while locked");
        (r.start < r.end && !self.back_only).then(|| {
            r.start += 1;
            self.order[r.start - 1]
        })
    }

    /// Up to `n` jobs from the back, if at least `least` are left (fewer are left to the front, unless it is
    /// closed).
    pub fn back(&self, n: usize, least: usize) -> Vec<usize> {
        let mut r = self.untaken.lock().expect("no panic while locked");
        if r.is_empty() || (r.len() < least && !self.back_only) {
            return Vec::new();
        }
        let from = r.end - n.min(r.len());
        let taken = self.order[from..r.end].to_vec();
        r.end = from;
        taken
    }

    /// Gives back the first `n` of what [`Order::back`] just took (only one thread takes from the back).
    pub fn unback(&self, n: usize) {
        self.untaken.lock().expect("no panic while locked").end += n;
    }
}

/// Runs the jobs of `order` on `workers` (the global pool if `None`) and up to `gpu_threads` GPU threads:
/// `job(i, pass)` runs job `i` whole, or with `pass` may hand back GPU work, which a GPU thread gives to
/// `on_gpu`; `finish` sees every job's result once. `producer`, on a thread of its own, may take jobs from the back
/// of the order and send GPU work for them (it must then see each one finished, itself or through the channel).
/// Returns the threads used.
pub(super) fn run<T: Send>(
    order: &Order,
    workers: Option<&rayon::ThreadPool>,
    gpu_threads: usize,
    job: impl Fn(usize, bool) -> Result<Option<T>, String> + Sync,
    on_gpu: impl Fn(usize, T) -> Result<(), String> + Sync,
    finish: impl Fn(usize, Result<(), String>) + Sync,
    producer: Option<Producer<T>>,
) -> usize {
    let (to_gpu, from_workers) = std::sync::mpsc::sync_channel::<(usize, T)>(gpu_threads);
    let from_workers = Mutex::new(from_workers);
    std::thread::scope(|s| {
        let gpu_thread = || loop {
            // The lock is let go before the work: the threads take turns to wait, not to compute.
            let taken = from_workers.lock().expect("no panic while locked").recv();
            let Ok((i, work)) = taken else { break };
            finish(i, on_gpu(i, work));
        };
        // A thread the system refuses is one fewer; with none, every job runs whole on its worker.
        let started = (0..gpu_threads)
            .filter(|k| std::thread::Builder::new().name(format!("batch-gpu-{k}")).spawn_scoped(s, gpu_thread).is_ok())
            .count();
        let producing = match producer {
            Some(produce) if started > 0 => {
                let to_gpu = to_gpu.clone();
                std::thread::Builder::new().name("batch-producer".into()).spawn_scoped(s, move || produce(&to_gpu)).ok()
            }
            _ => None,
        };
        let to_gpu = to_gpu;
        let run_jobs = |_: rayon::BroadcastContext<'_>| {
            while let Some(i) = order.front() {
                hand_on(&to_gpu, &finish, i, job(i, started > 0));
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
        started + workers + usize::from(producing.is_some())
        // `to_gpu` is dropped here, and the producer's copy when it ends: the GPU threads end once they have taken
        // what was sent.
    })
}

/// Job `i`'s outcome: its GPU work sent to the GPU threads, or, where it has none (it ran whole, or failed), its
/// result given to `finish`.
pub(super) fn hand_on<T, F: Fn(usize, Result<(), String>) + ?Sized>(
    to_gpu: &ToGpuThreads<T>,
    finish: &F,
    i: usize,
    outcome: Result<Option<T>, String>,
) {
    match outcome {
        Ok(Some(work)) => {
            if to_gpu.send((i, work)).is_err() {
                finish(i, Err("the GPU threads ended early".into()));
            }
        }
        done => finish(i, done.map(drop)),
    }
}

#[cfg(test)]
mod tests {
    use super::Order;

    #[test]
    fn the_front_and_the_back_take_each_job_once_and_the_back_leaves_the_least() {
        let jobs = [5, 3, 8, 1, 9, 0, 2];
        let order = Order::new(&jobs, false);
        assert_eq!(order.front(), Some(5));
        assert_eq!(order.back(2, 0), vec![0, 2]);
        // Four are left: a take that would leave fewer than asked is refused whole.
        assert_eq!(order.back(2, 5), Vec::<usize>::new());
        assert_eq!(order.back(3, 4), vec![8, 1, 9]);
        order.unback(2);
        assert_eq!(order.front(), Some(3));
        assert_eq!(order.front(), Some(8));
        assert_eq!(order.front(), Some(1));
        assert_eq!((order.front(), order.back(1, 0)), (None, vec![]));

        let closed = Order::new(&jobs, true);
        assert_eq!(closed.front(), None);
        assert_eq!(closed.back(4, 100), vec![1, 9, 0, 2]);
        assert_eq!(closed.back(4, 100), vec![5, 3, 8]);
        assert_eq!(closed.back(4, 100), Vec::<usize>::new());
    }
}
