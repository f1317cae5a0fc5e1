//! The pool of a device's slots: a worker takes a free one (waiting if none is free), runs one image through it and
//! gives it back.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::Slot;
use crate::gpu::rows::RowPool;
use crate::gpu::{Gpu, GpuError};
use crate::image_io::filtered::RowStore;
use crate::trace::TimeSum;

/// A fixed number of slots; `take` waits for a free one.
pub struct SlotPool {
    count: usize,
    free: Mutex<Vec<Slot>>,
    returned: Condvar,
    /// Time threads spent waiting for a free slot, and holding one, summed over threads.
    waited: TimeSum,
    held: TimeSum,
    /// Page-locked buffers PNGs are inflated into, for [`Slot::run_filtered`] to upload without a copy.
    rows: Arc<RowPool>,
}

impl SlotPool {
    /// `slots` slots, each with a stream of its own on `gpu`'s device.
    pub fn new(gpu: &Gpu, slots: usize) -> Result<SlotPool, GpuError> {
        let mut free = Vec::with_capacity(slots.max(1));
        for _ in 0..slots.max(1) {
            free.push(Slot { gpu: gpu.on_stream(gpu.ctx.new_stream()?), buffers: None, filtered: None, jpeg: None });
        }
        Ok(SlotPool {
            count: free.len(),
            free: Mutex::new(free),
            returned: Condvar::new(),
            waited: TimeSum::default(),
            held: TimeSum::default(),
            // As many idle as slots, as the slots' own pinned upload buffers are (now used only for rows inflated
            // before the GPU was open, `batch/ahead.rs`).
            rows: RowPool::new(&gpu.ctx, slots.max(1)),
        })
    }

    /// Memory for `bytes` of a PNG's stored rows ([`crate::image_io::filtered::read_into`]): page-locked for
    /// [`Slot::run_filtered`] to upload from, or plain memory where the driver locks no more.
    pub fn row_store(&self, bytes: usize) -> Box<dyn RowStore> {
        match self.rows.take(bytes) {
            Some(rows) => Box::new(rows),
            None => Box::new(vec![0; bytes]),
        }
    }

    /// How many slots it has.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Runs `f` with a slot, waiting until one is free.
    pub fn with_slot<T>(&self, f: impl FnOnce(&mut Slot) -> T) -> T {
        let asked = Instant::now();
        let mut slot = {
            let mut free = self.free.lock().expect("no panics while holding the pool lock");
            loop {
                if let Some(s) = free.pop() {
                    break s;
                }
                free = self.returned.wait(free).expect("no panics while holding the pool lock");
            }
        };
        let taken = Instant::now();
        let result = f(&mut slot);
        self.free.lock().expect("no panics while holding the pool lock").push(slot);
        self.returned.notify_one();
        self.waited.add(taken - asked);
        self.held.add(taken.elapsed());
        result
    }

    /// Seconds threads spent waiting for a free slot, and holding one (summed over threads, since the pool
    /// was made): where a batch's workers wait (`CUDA_SOBEL_TRACE`).
    pub fn times(&self) -> (f64, f64) {
        (self.waited.seconds(), self.held.seconds())
    }
}
