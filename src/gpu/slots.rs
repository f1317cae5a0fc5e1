//! GPU slots for batch mode: a bounded pool, each slot a stream of its own with pinned host buffers and
//! device buffers for one image. A worker takes a free slot (waiting if none is free), runs one image
//! through it, and gives it back; so at most `slots` images are on the GPU at once, their copies and
//! kernels overlapping on separate streams, and memory stays bounded however many images there are.
//!
//! Pinned (page-locked) buffers make the copies run at the link's speed (55 GB/s here, against 9 GB/s
//! from pageable memory, ../shared/GPU.md). The input buffer is write-combined (fast to upload from, slow
//! for the CPU to read, and the CPU only writes it); the output buffer is ordinary pinned memory, which
//! the CPU reads.

use std::sync::{Condvar, Mutex};

use cudarc::driver::PinnedHostSlice;
use image::RgbImage;

use super::buffers::DeviceImage;
use super::patterns::Dims;
use super::{Gpu, GpuError};
use crate::sobel::Filter;
use crate::variant::Variant;

/// One slot: a `Gpu` view bound to the slot's own stream, and buffers for the last image size it ran.
pub struct Slot {
    gpu: Gpu,
    buffers: Option<SlotBuffers>,
}

struct SlotBuffers {
    width: u32,
    height: u32,
    pinned_in: PinnedHostSlice<u8>,
    pinned_out: PinnedHostSlice<u8>,
    device: DeviceImage,
}

impl Slot {
    fn buffers_for(&mut self, width: u32, height: u32) -> Result<&mut SlotBuffers, GpuError> {
        let fits = matches!(&self.buffers, Some(b) if (b.width, b.height) == (width, height));
        if !fits {
            self.buffers = None; // free the old size first
            let pixels = width as usize * height as usize;
            let ctx = &self.gpu.ctx;
            // SAFETY (pinned allocations): the memory starts uninitialised; `run` writes pinned_in in full
            // before uploading it, and the download writes pinned_out in full before it is read.
            let (pinned_in, pinned_out) = unsafe {
                (
                    ctx.alloc_pinned_with_flags(3 * pixels, cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED)?,
                    ctx.alloc_pinned_with_flags(pixels, 0)?,
                )
            };
            let device = DeviceImage::alloc(&self.gpu, Variant::GpuStrip, pixels)?;
            let b = SlotBuffers { width, height, pinned_in, pinned_out, device };
            self.buffers = Some(b);
        }
        Ok(self.buffers.as_mut().expect("just set"))
    }

    /// gpu-strip on `rgb` through this slot's pinned buffers and stream; returns the edge image's bytes.
    pub fn run(&mut self, rgb: &RgbImage, filter: Filter) -> Result<Vec<u8>, GpuError> {
        let d = Dims::new(rgb.width(), rgb.height())?;
        let gpu = self.gpu.for_filter(filter)?;
        let b = self.buffers_for(rgb.width(), rgb.height())?;
        b.pinned_in.as_mut_slice()?.copy_from_slice(rgb.as_raw());
        b.device.upload_pinned(&gpu, &b.pinned_in)?;
        b.device.launch(&gpu, d, filter.border)?;
        b.device.download_pinned(&gpu, &mut b.pinned_out)?;
        gpu.stream.synchronize()?;
        Ok(b.pinned_out.as_slice()?.to_vec())
    }
}

/// A fixed number of slots; `take` waits for a free one.
pub struct SlotPool {
    free: Mutex<Vec<Slot>>,
    returned: Condvar,
}

impl SlotPool {
    /// `slots` slots, each with a stream of its own on `gpu`'s device.
    pub fn new(gpu: &Gpu, slots: usize) -> Result<SlotPool, GpuError> {
        let mut free = Vec::with_capacity(slots.max(1));
        for _ in 0..slots.max(1) {
            free.push(Slot { gpu: gpu.on_stream(gpu.ctx.new_stream()?), buffers: None });
        }
        Ok(SlotPool { free: Mutex::new(free), returned: Condvar::new() })
    }

    /// Runs `f` with a slot, waiting until one is free.
    pub fn with_slot<T>(&self, f: impl FnOnce(&mut Slot) -> T) -> T {
        let mut slot = {
            let mut free = self.free.lock().expect("no panics while holding the pool lock");
            loop {
                if let Some(s) = free.pop() {
                    break s;
                }
                free = self.returned.wait(free).expect("no panics while holding the pool lock");
            }
        };
        let result = f(&mut slot);
        self.free.lock().expect("no panics while holding the pool lock").push(slot);
        self.returned.notify_one();
        result
    }
}
