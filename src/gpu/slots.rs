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
//!
//! A JPEG can arrive still compressed ([`Slot::run_jpeg`]): nvJPEG decodes it on the slot's stream straight
//! into gpu-strip's device input, so the CPU only reads the file.

use std::sync::{Condvar, Mutex};

use cudarc::driver::{CudaSlice, PinnedHostSlice};
use image::RgbImage;

use super::buffers::DeviceImage;
use super::nvjpeg::{DecodeState, Info, Nvjpeg};
use super::patterns::unfilter;
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
    /// This slot's nvJPEG decode state, made by its first JPEG.
    jpeg: Option<DecodeState>,
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

impl SlotBuffers {
    /// `buffers` for a `width × height` image: kept when they are that size, else allocated afresh (the old
    /// ones freed first).
    fn for_size<'b>(
        gpu: &Gpu,
        buffers: &'b mut Option<SlotBuffers>,
        width: u32,
        height: u32,
    ) -> Result<&'b mut SlotBuffers, GpuError> {
        if !matches!(buffers, Some(b) if (b.width, b.height) == (width, height)) {
            *buffers = None;
            let pixels = width as usize * height as usize;
            // SAFETY (pinned allocation): the memory starts uninitialised; the download writes it in full
            // before it is read.
            let pinned_out = unsafe { gpu.ctx.alloc_pinned_with_flags(pixels, 0)? };
            let device = DeviceImage::alloc(gpu, Variant::GpuStrip, pixels)?;
            *buffers = Some(SlotBuffers { width, height, pinned_in: None, pinned_out, device });
        }
        Ok(buffers.as_mut().expect("just set"))
    }

    /// gpu-strip on the device input (uploaded or written there), the edges downloaded; waits for them.
    fn strip_and_download(&mut self, gpu: &Gpu, d: Dims, filter: Filter) -> Result<Vec<u8>, GpuError> {
        self.device.launch(gpu, d, filter.border)?;
        self.device.download_pinned(gpu, &mut self.pinned_out)?;
        gpu.stream.synchronize()?;
        Ok(self.pinned_out.as_slice()?.to_vec())
    }
}

/// `bytes` of write-combined pinned memory, for an upload's source (fast to upload from, slow for the CPU to
/// read, and the CPU only writes it).
///
/// # Safety
/// The memory starts uninitialised: the caller writes it in full before uploading it.
unsafe fn upload_buffer(gpu: &Gpu, bytes: usize) -> Result<PinnedHostSlice<u8>, GpuError> {
    // SAFETY: forwarded to the caller.
    Ok(unsafe { gpu.ctx.alloc_pinned_with_flags(bytes, cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED)? })
}

impl Slot {
    /// gpu-strip on `rgb` through this slot's pinned buffers and stream; returns the edge image's bytes.
    pub fn run(&mut self, rgb: &RgbImage, filter: Filter) -> Result<Vec<u8>, GpuError> {
        let d = Dims::new(rgb.width(), rgb.height())?;
        let gpu = self.gpu.for_filter(filter)?;
        let b = SlotBuffers::for_size(&self.gpu, &mut self.buffers, rgb.width(), rgb.height())?;
        let pinned_in = match &mut b.pinned_in {
            Some(p) => p,
            // SAFETY: written in full just below, before it is uploaded.
            none => none.insert(unsafe { upload_buffer(&self.gpu, rgb.as_raw().len())? }),
        };
        pinned_in.as_mut_slice()?.copy_from_slice(rgb.as_raw());
        b.device.upload_pinned(&gpu, pinned_in)?;
        b.strip_and_download(&gpu, d, filter)
    }

    /// gpu-strip on a PNG whose filters are still to be undone: its stored rows go up, `cuda/unfilter.cu`
    /// writes the RGB image into the device input, gpu-strip runs on it. Returns the edge image's bytes,
    /// identical to [`Slot::run`] on the decoded image.
    pub fn run_filtered(&mut self, png: &Filtered, filter: Filter) -> Result<Vec<u8>, GpuError> {
        let d = Dims::new(png.width, png.height)?;
        let gpu = self.gpu.for_filter(filter)?;
        let unfilter = gpu.kernels.unfilter()?;
        let (n, size) = (png.rows.len(), (png.width, png.height, png.bytes_per_pixel));
        if !matches!(&self.filtered, Some(r) if r.size == size) {
            self.filtered = None; // free the old size first
            let scratch = unfilter::Scratch::alloc(&self.gpu.stream, d, png.bytes_per_pixel)?;
            // SAFETY (pinned allocation, device allocation): the pinned buffer is written in full below before
            // it is uploaded; the upload writes the device buffer in full before the kernel reads it.
            let (pinned, device) = unsafe { (upload_buffer(&self.gpu, n)?, self.gpu.stream.alloc::<u8>(n)?) };
            self.filtered = Some(RowBuffers { size, pinned, device, scratch });
        }
        let rows = self.filtered.as_mut().expect("just set");
        let b = SlotBuffers::for_size(&self.gpu, &mut self.buffers, png.width, png.height)?;
        rows.pinned.as_mut_slice()?.copy_from_slice(&png.rows);
        gpu.stream.memcpy_htod(&rows.pinned, &mut rows.device)?;
        unfilter.enqueue(&gpu.stream, &rows.device, &mut rows.scratch, b.device.input_mut(), d, png.bytes_per_pixel)?;
        b.strip_and_download(&gpu, d, filter)
    }

    /// gpu-strip on a JPEG that nvJPEG decodes on this slot's stream into the device input. Returns the edge
    /// image's bytes, and with `want_rgb` the RGB nvJPEG decoded (for `--check`: the edges are exact for it).
    pub fn run_jpeg(
        &mut self,
        nvjpeg: &Nvjpeg,
        bytes: &[u8],
        info: Info,
        filter: Filter,
        want_rgb: bool,
    ) -> Result<(Vec<u8>, Option<Vec<u8>>), GpuError> {
        let d = Dims::new(info.width, info.height)?;
        let gpu = self.gpu.for_filter(filter)?;
        // nvJPEG works in the thread's current context.
        self.gpu.ctx.bind_to_thread()?;
        let state = match &mut self.jpeg {
            Some(s) => s,
            none => none.insert(nvjpeg.state().map_err(GpuError::Peer)?),
        };
        let b = SlotBuffers::for_size(&self.gpu, &mut self.buffers, info.width, info.height)?;
        {
            let stream = gpu.stream.cu_stream();
            let (rgb, _write) = cudarc::driver::DevicePtrMut::device_ptr_mut(b.device.input_mut(), &gpu.stream);
            // SAFETY: the input buffer holds 3 · width · height bytes (allocated for this size), belongs to this
            // context, and is used by nothing else until the stream has run (the guard orders later uses).
            unsafe { nvjpeg.decode(state, bytes, info, rgb, stream) }.map_err(GpuError::Peer)?;
        }
        let rgb = if want_rgb { Some(gpu.stream.clone_dtoh(b.device.input_mut())?) } else { None };
        Ok((b.strip_and_download(&gpu, d, filter)?, rgb))
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
            free.push(Slot { gpu: gpu.on_stream(gpu.ctx.new_stream()?), buffers: None, filtered: None, jpeg: None });
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
