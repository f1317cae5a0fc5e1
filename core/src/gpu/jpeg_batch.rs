//! One call to the GPU's JPEG engine for all the JPEGs the slots have waiting: the *combining* pattern.
//!
//! The engine decodes a call's images side by side, so one image a call wastes it (160 photos/s on the H200
//! against 870 with sixteen a call), and calls from several threads only take turns.
//! So a slot's thread does not call it alone: it puts its JPEG in a queue, and
//! - if no call is running, it becomes the caller: it takes every job waiting (its own among them, at most
//!   [`MAX_BATCH`]), decodes them in one call on its own stream, posts each job's outcome and wakes the others;
//! - otherwise it waits; when the running call ends, it finds its own outcome posted, or (its job came too late
//!   for that call) it makes the next call itself.
//!
//! Nobody waits for a batch to fill: a call takes whatever is waiting, so batches are as large as the engine is
//! busy, and a lone image is decoded at once. But a call's time steps with each round of its decoders: the H100's
//! 7 decode 1–7 photos in 6–7 ms, 8 in 12, 16 in 18. So where more are waiting than
//! the decoders take, a call takes a whole number of rounds ([`call_size`]) and the rest wait for the next call,
//! with whatever arrives meanwhile. A job's outcome is `true` when the engine decoded it; `false`
//! when the engine does not take the file (a progressive JPEG) or the call failed (one bad file fails the whole
//! call) — its slot then decodes it alone with nvJPEG's default backend, which names the file's own problem.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use super::nvjpeg::{Hardware, Job};
use crate::trace::TimeSum;

/// The most JPEGs in one call (each slot has at most one waiting, so `--slots` bounds it first).
pub const MAX_BATCH: usize = 64;

/// How many of `waiting` JPEGs one call takes, on an engine that decodes `width` side by side: all of them when
/// fewer than `width` wait (the engine would idle otherwise), else whole rounds of `width`, at most [`MAX_BATCH`].
pub fn call_size(waiting: usize, width: usize) -> usize {
    let width = width.clamp(1, MAX_BATCH);
    match waiting.min(MAX_BATCH) {
        n if n < width => n,
        n => n - n % width,
    }
}

/// The engine and the queue of jobs for it.
pub struct Batcher {
    hardware: Mutex<Hardware>,
    /// The engine's decoders × cores ([`Hardware::width`]).
    width: usize,
    queue: Mutex<Queue>,
    posted: Condvar,
    /// For `CUDA_SOBEL_TRACE`: calls made, images they decoded, seconds in calls, and the jobs' seconds from
    /// posting to their outcome.
    calls: AtomicU64,
    images: AtomicU64,
    in_calls: TimeSum,
    jobs_waited: TimeSum,
}

/// What the engine did for a batch ([`Batcher::stats`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct EngineStats {
    /// Calls made.
    pub calls: u64,
    /// JPEGs those calls decoded.
    pub images: u64,
    /// Seconds the engine spent in calls.
    pub in_calls: f64,
    /// Thread-seconds jobs spent from posting to their outcome (queued, then in a call).
    pub jobs_waited: f64,
}

#[derive(Default)]
struct Queue {
    waiting: Vec<(u64, Job)>,
    /// Whether a call is running (its caller holds `hardware`).
    busy: bool,
    /// Outcomes posted by a call, taken by the jobs' owners.
    outcomes: HashMap<u64, bool>,
    next_id: u64,
}

impl Batcher {
    /// A batcher for the engine behind `hardware`.
    pub fn new(hardware: Hardware) -> Batcher {
        Batcher {
            width: hardware.width,
            hardware: Mutex::new(hardware),
            queue: Mutex::default(),
            posted: Condvar::new(),
            calls: AtomicU64::new(0),
            images: AtomicU64::new(0),
            in_calls: TimeSum::default(),
            jobs_waited: TimeSum::default(),
        }
    }

    /// How many JPEGs the engine decodes side by side ([`Hardware::width`]).
    pub fn width(&self) -> usize {
        self.width
    }

    /// What the engine has done so far.
    pub fn stats(&self) -> EngineStats {
        EngineStats {
            calls: self.calls.load(Ordering::Relaxed),
            images: self.images.load(Ordering::Relaxed),
            in_calls: self.in_calls.seconds(),
            jobs_waited: self.jobs_waited.seconds(),
        }
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().expect("no panics while holding the queue lock")
    }

    /// Decodes `job` on the engine, in one call with whatever other jobs are waiting; `false` when the engine
    /// did not decode it (see the module's note).
    ///
    /// # Safety
    /// As [`Hardware::decode`] for `job`, with `stream` a live stream of the context current on this thread: this
    /// thread may make the call for other threads' jobs too, on `stream`.
    pub unsafe fn decode(&self, job: Job, stream: cudarc::driver::sys::CUstream) -> bool {
        let posted = Instant::now();
        let mut queue = self.queue();
        let id = queue.next_id;
        queue.next_id += 1;
        queue.waiting.push((id, job));
        loop {
            if let Some(decoded) = queue.outcomes.remove(&id) {
                self.jobs_waited.add(posted.elapsed());
                return decoded;
            }
            if queue.busy {
                queue = self.posted.wait(queue).expect("no panics while holding the queue lock");
                continue;
            }
            queue.busy = true;
            let n = call_size(queue.waiting.len(), self.width);
            let jobs: Vec<(u64, Job)> = queue.waiting.drain(..n).collect();
            drop(queue);
            // Whatever happens in the call, the outcomes are posted and the queue freed (a guard, so that a
            // panic cannot leave the other threads waiting for ever).
            let mut post = Post { batcher: self, outcomes: jobs.iter().map(|&(id, _)| (id, false)).collect() };
            // SAFETY: the caller's guarantees for this job and stream; every other job's owner waits in this
            // function until its outcome is posted, so its bytes and buffer stay valid through the call.
            unsafe { self.call(&jobs, stream, &mut post.outcomes) };
            drop(post);
            queue = self.queue();
        }
    }

    /// One call for `jobs`: those the engine takes, decoded together; `outcomes` marks them.
    ///
    /// # Safety
    /// As [`Batcher::decode`], for every job.
    unsafe fn call(&self, jobs: &[(u64, Job)], stream: cudarc::driver::sys::CUstream, outcomes: &mut [(u64, bool)]) {
        let mut hardware = self.hardware.lock().expect("no panics while holding the engine");
        let taken: Vec<usize> = (0..jobs.len())
            .filter(|&i| {
                let job = jobs[i].1;
                // SAFETY: the job's bytes are valid (this function's contract).
                hardware.supports(unsafe { std::slice::from_raw_parts(job.bytes, job.len) })
            })
            .collect();
        if taken.is_empty() {
            return;
        }
        let batch: Vec<Job> = taken.iter().map(|&i| jobs[i].1).collect();
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.images.fetch_add(batch.len() as u64, Ordering::Relaxed);
        // SAFETY: this function's contract.
        if self.in_calls.time(|| unsafe { hardware.decode(&batch, stream) }).is_ok() {
            for i in taken {
                outcomes[i].1 = true;
            }
        }
    }
}

/// Posts a call's outcomes and frees the queue when dropped.
struct Post<'a> {
    batcher: &'a Batcher,
    outcomes: Vec<(u64, bool)>,
}

impl Drop for Post<'_> {
    fn drop(&mut self) {
        let mut queue = self.batcher.queue();
        queue.outcomes.extend(self.outcomes.drain(..));
        queue.busy = false;
        drop(queue);
        self.batcher.posted.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_takes_whole_rounds_of_the_decoders_or_all_that_wait() {
        // Worked by hand for the H100's 7 decoders: fewer than 7 all go; 8 → 7 (the eighth would cost a second
        // round, 6 ms, alone); 15 → 14; 70 → 63 (64 at most, in whole rounds).
        let sizes: Vec<usize> = [0, 1, 6, 7, 8, 13, 14, 15, 70].iter().map(|&w| call_size(w, 7)).collect();
        assert_eq!(sizes, [0, 1, 6, 7, 7, 7, 14, 14, 63]);
        // One decoder (or an engine that does not say): every waiting JPEG, up to the cap.
        assert_eq!([1, 5, 64, 65].map(|w| call_size(w, 1)), [1, 5, 64, 64]);
        // A100-like 5: 12 → 10.
        assert_eq!(call_size(12, 5), 10);
    }
}
