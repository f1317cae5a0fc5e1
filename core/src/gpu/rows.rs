//! Page-locked row buffers for batch's PNGs: a worker inflates a PNG's stored rows straight into memory the driver
//! has locked, and the slot uploads from there — instead of inflating into fresh memory and copying the 6 MB of a
//! 2048×1024 scene into the slot's pinned buffer first, on the slot's time.
//!
//! Why: on the H100 host batch was bound by the CPU (16 cores ~all busy for 2000 scenes: 22 s of user time, most of
//! it the inflate, the copy a tenth of it). Without the copy a fifth of that time went, and the GPU slots, not the
//! cores, became the limit.
//!
//! Locking memory costs ~0.5 ms for 6 MB (`cuMemHostRegister`), so buffers are kept
//! from image to image: a buffer given back goes to the pool's idle list, still locked, up to [`RowPool`]'s `keep`;
//! beyond that it is unlocked and freed. The driver knows locked memory by its address, so a buffer is unlocked
//! before its memory is freed — always: [`PinnedRows`] owns its memory, and its `Drop` does both.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{cuMemHostRegister_v2, cuMemHostUnregister, CUresult};
use cudarc::driver::CudaContext;

use crate::image_io::filtered::RowStore;

/// Locked row buffers of one device's context, kept for reuse.
pub struct RowPool {
    ctx: Arc<CudaContext>,
    /// Buffers given back, still locked.
    idle: Mutex<Vec<Vec<u8>>>,
    /// Most buffers kept idle (memory outside any image's reservation: `docs/cli.md`, memory).
    keep: usize,
}

/// A row buffer locked for `RowPool`'s device: the slots upload from it without a copy
/// ([`super::slots::Slot::run_filtered`]).
pub struct PinnedRows {
    rows: Vec<u8>,
    /// The address the driver locked.
    locked: usize,
    pool: Arc<RowPool>,
}

impl RowPool {
    /// A pool for `ctx`'s device keeping up to `keep` idle buffers.
    pub fn new(ctx: &Arc<CudaContext>, keep: usize) -> Arc<RowPool> {
        Arc::new(RowPool { ctx: ctx.clone(), idle: Mutex::new(Vec::new()), keep })
    }

    /// A locked buffer of `bytes` (what it holds is left from its last image), or `None` where the driver refuses
    /// to lock more (the caller then inflates into plain memory, which the slot copies).
    pub fn take(self: &Arc<Self>, bytes: usize) -> Option<PinnedRows> {
        let kept = {
            let mut idle = self.idle.lock().expect("no panic while locked");
            idle.iter().position(|b| b.len() == bytes).map(|k| idle.swap_remove(k))
        };
        let rows = match kept {
            Some(rows) => rows,
            None => {
                let rows = vec![0u8; bytes];
                self.ctx.bind_to_thread().ok()?;
                // SAFETY: `rows` is `bytes` bytes this function owns; once locked it is owned by the `PinnedRows`
                // returned, whose `Drop` unlocks it before it is freed.
                match unsafe { cuMemHostRegister_v2(rows.as_ptr() as *mut _, bytes, 0) } {
                    CUresult::CUDA_SUCCESS => rows,
                    _ => return None,
                }
            }
        };
        Some(PinnedRows { locked: rows.as_ptr() as usize, rows, pool: self.clone() })
    }

    /// Unlocks `rows`, locked at `locked`.
    fn unlock(&self, locked: usize) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: `locked` was locked by `take` and not unlocked since (each buffer is unlocked once, by its owner's
        // drop); no copy from it is in flight (the slot waits for its stream before the rows go).
        unsafe { cuMemHostUnregister(locked as *mut _) };
    }
}

impl Drop for RowPool {
    fn drop(&mut self) {
        for rows in std::mem::take(self.idle.get_mut().expect("no panic while locked")) {
            self.unlock(rows.as_ptr() as usize);
        }
    }
}

impl PinnedRows {
    /// Whether the buffer is still where the driver locked it (the decoder never moves it; if anything did, the
    /// slot copies instead).
    pub fn is_locked(&self) -> bool {
        self.rows.as_ptr() as usize == self.locked
    }
}

impl Drop for PinnedRows {
    fn drop(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        if rows.as_ptr() as usize == self.locked {
            let mut idle = self.pool.idle.lock().expect("no panic while locked");
            if idle.len() < self.pool.keep {
                idle.push(rows);
                return;
            }
        }
        self.pool.unlock(self.locked);
        drop(rows);
    }
}

impl Deref for PinnedRows {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.rows
    }
}

impl DerefMut for PinnedRows {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.rows
    }
}

impl RowStore for PinnedRows {
    fn as_vec(&mut self) -> &mut Vec<u8> {
        &mut self.rows
    }
}
