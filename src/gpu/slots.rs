//! GPU slots for batch mode: a bounded pool, each slot a stream of its own with pinned host buffers and
//! device buffers for one image. A worker takes a free slot (waiting if none is free), runs one image
//! through it, and gives it back; so at most `slots` images are on the GPU at once, their copies and
//! kernels overlapping on separate streams, and memory stays bounded however many images there are.
//!
//! Pinned (page-locked) buffers make the copies run at the link's speed (55 GB/s here, against 9 GB/s
//! from pageable memory, ../shared/GPU.md). The input buffer is write-combined (fast to upload from, slow
//! for the CPU to read, and the CPU only writes it); the output buffer is ordinary pinned memory, which
//! the CPU reads.
//!
//! A PNG can also arrive still filtered ([`Slot::run_filtered`]): the stored rows go up instead of RGB,
//! and `cuda/unfilter.cu` turns them into RGB on the device before gpu-strip runs, so that the CPU only
//! inflates the file (`docs/performance.md` v0.20).

use std::sync::{Condvar, Mutex};

use cudarc::driver::{CudaSlice, PinnedHostSlice};
use image::RgbImage;

use super::buffers::DeviceImage;
use super::patterns::unfilter::{self, Unfilter};
use super::patterns::Dims;
use super::{Gpu, GpuError};
use crate::image_io::filtered::Filtered;
use crate::sobel::Filter;
use crate::variant::Variant;

/// One slot: a `Gpu` view bound to the slot's own stream, and buffers for the last image size it ran.
pub struct Slot {
    gpu: Gpu,
    buffers: Option<SlotBuffers>,
    /// The stored rows of a still-filtered PNG, pinned and on the device, for the last size it ran.
    filtered: Option<RowBuffers>,
}

struct RowBuffers {
    /// The image size and bytes a pixel these are for.
    size: (u32, u32, usize),
    pinned: PinnedHostSlice<u8>,
    device: CudaSlice<u8>,
    scratch: unfilter::Scratch,
}

struct SlotBuffers {
    width: u32,
    height: u32,
    /// The RGB upload's buffer: allocated by the first [`Slot::run`], never by [`Slot::run_filtered`],
    /// whose input is the stored rows.
    pinned_in: Option<PinnedHostSlice<u8>>,
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
            // SAFETY (pinned allocation): the memory starts uninitialised; the download writes it in full
            // before it is read.
            let pinned_out = unsafe { ctx.alloc_pinned_with_flags(pixels, 0)? };
            let device = DeviceImage::alloc(&self.gpu, Variant::GpuStrip, pixels)?;
            let b = SlotBuffers { width, height, pinned_in: None, pinned_out, device };
            self.buffers = Some(b);
        }
        Ok(self.buffers.as_mut().expect("just set"))
    }

    /// gpu-strip on `rgb` through this slot's pinned buffers and stream; returns the edge image's bytes.
    pub fn run(&mut self, rgb: &RgbImage, filter: Filter) -> Result<Vec<u8>, GpuError> {
        let d = Dims::new(rgb.width(), rgb.height())?;
        let gpu = self.gpu.for_filter(filter)?;
        let ctx = self.gpu.ctx.clone();
        let b = self.buffers_for(rgb.width(), rgb.height())?;
        let pinned_in = match &mut b.pinned_in {
            Some(p) => p,
            // SAFETY (pinned allocation): the memory starts uninitialised; it is written in full just below,
            // before it is uploaded.
            none => none.insert(unsafe {
                ctx.alloc_pinned_with_flags(rgb.as_raw().len(), cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED)?
            }),
        };
        pinned_in.as_mut_slice()?.copy_from_slice(rgb.as_raw());
        b.device.upload_pinned(&gpu, pinned_in)?;
        b.device.launch(&gpu, d, filter.border)?;
        b.device.download_pinned(&gpu, &mut b.pinned_out)?;
        gpu.stream.synchronize()?;
        Ok(b.pinned_out.as_slice()?.to_vec())
    }

    /// gpu-strip on a PNG whose filters are still to be undone: its stored rows go up, `cuda/unfilter.cu`
    /// writes the RGB image into the device input, gpu-strip runs on it. Returns the edge image's bytes,
    /// identical to [`Slot::run`] on the decoded image.
    pub fn run_filtered(&mut self, png: &Filtered, filter: Filter) -> Result<Vec<u8>, GpuError> {
        let d = Dims::new(png.width, png.height)?;
        let gpu = self.gpu.for_filter(filter)?;
        let unfilter = gpu.kernels.unfilter()?;
        let (n, size) = (png.rows.len(), (png.width, png.height, png.bytes_per_pixel));
        let mut rows = match self.filtered.take() {
            Some(r) if r.size == size => r,
            old => {
                drop(old); // free the old size first
                let scratch = unfilter::Scratch::alloc(&self.gpu.stream, d, png.bytes_per_pixel)?;
                // SAFETY (pinned allocation, device allocation): the pinned buffer is written in full below
                // before it is uploaded; the upload writes the device buffer in full before the kernel reads it.
                let (pinned, device) = unsafe {
                    (
                        self.gpu.ctx.alloc_pinned_with_flags(n, cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED)?,
                        self.gpu.stream.alloc::<u8>(n)?,
                    )
                };
                RowBuffers { size, pinned, device, scratch }
            }
        };
        let edges = self.unfilter_and_run(&gpu, unfilter, &mut rows, png, d, filter);
        self.filtered = Some(rows);
        edges
    }

    fn unfilter_and_run(
        &mut self,
        gpu: &Gpu,
        unfilter: &Unfilter,
        rows: &mut RowBuffers,
        png: &Filtered,
        d: Dims,
        filter: Filter,
    ) -> Result<Vec<u8>, GpuError> {
        let b = self.buffers_for(png.width, png.height)?;
        rows.pinned.as_mut_slice()?.copy_from_slice(&png.rows);
        gpu.stream.memcpy_htod(&rows.pinned, &mut rows.device)?;
        unfilter.enqueue(&gpu.stream, &rows.device, &mut rows.scratch, b.device.input_mut(), d, png.bytes_per_pixel)?;
        b.device.launch(gpu, d, filter.border)?;
        b.device.download_pinned(gpu, &mut b.pinned_out)?;
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
            free.push(Slot { gpu: gpu.on_stream(gpu.ctx.new_stream()?), buffers: None, filtered: None });
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
