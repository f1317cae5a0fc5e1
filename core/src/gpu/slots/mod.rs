//! GPU slots for batch mode: a bounded pool, each slot a stream of its own with pinned host buffers and
//! device buffers for one image. A worker takes a free slot (waiting if none is free), runs one image
//! through it, and gives it back; so at most `slots` images are on the GPU at once, their copies and
//! kernels overlapping on separate streams, and memory stays bounded however many images there are.
//!
//! Pinned (page-locked) buffers make the copies run at the link's speed (55 GB/s on the H100 host, against
//! 9 GB/s from pageable memory). The input buffer is write-combined (fast to upload from, slow
//! for the CPU to read, and the CPU only writes it); the output buffer is ordinary pinned memory, which
//! the CPU reads.
//!
//! A PNG can also arrive still filtered ([`Slot::run_filtered`]): the stored rows go up instead of RGB,
//! and `cuda/unfilter.cu` turns them into RGB on the device before gpu-strip runs, so that the CPU only
//! inflates the file.
//!
//! A JPEG can arrive still compressed ([`Slot::run_jpeg`]): nvJPEG decodes it straight into gpu-strip's device
//! input — on the GPU's JPEG engine together with the other slots' JPEGs, or alone on the slot's stream — so
//! the CPU only reads the file.
//!
//! And the edges can leave already encoded ([`Want::png`]): `cuda/deflate.cu` deflates the PNG image data on
//! the device (repeated strings included, as zlib finds them), and only the compressed stream comes back, so
//! the CPU only writes the file. Where the stream would not fit the edges' own buffer (data that does not
//! compress), the edge bytes come back instead and the CPU encodes them as before.
//!
//! What the slot computes is the [`Want`]'s: the edges, or Canny's edges ([`Want::canny`]: gpu-strip's exact
//! gradients and `cuda/canny.cu` into the same one-byte output), so every path above serves both.

use cudarc::driver::{CudaSlice, CudaView, PinnedHostSlice};
use image::RgbImage;

use super::buffers::DeviceImage;
use super::nvjpeg::{DecodeState, Info, Job, Nvjpeg};
use super::patterns::deflate;
use super::patterns::unfilter;
use super::patterns::Dims;
use super::png_data::deflate_on_device;
use super::rows::PinnedRows;
use super::variants::{self, RawImages};
use super::{Gpu, GpuError};
use crate::canny::Canny;
use crate::image_io::filtered::Filtered;
use crate::sobel::Filter;
use crate::variant::Variant;

mod pool;
pub use pool::SlotPool;

/// What a slot computes and hands back.
#[derive(Clone, Copy, Debug, Default)]
pub struct Want {
    /// Canny's edges (0 or 255 a byte) instead of the magnitude: gpu-strip's exact gradients, then
    /// `cuda/canny.cu`'s suppression and hysteresis, into the same one-byte-a-pixel output, so that everything
    /// after the compute (the download, the deflate, the file) is the edges' own path.
    pub canny: Option<Canny>,
    /// The PNG image data deflated on the GPU, where it fits the edges' buffer.
    pub png: bool,
    /// The edge bytes, even when the PNG data came back (`--check`).
    pub bytes: bool,
}

/// An edge image as a slot hands it back (and batch mode takes it from the engine): its bytes, its PNG image
/// data as one zlib stream, or both — as the [`Want`] asked and the image allowed.
pub struct Edges {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The edge bytes, row by row (always there when `zlib` is not).
    pub bytes: Option<Vec<u8>>,
    /// The PNG image data (rows of a filter byte and the filtered pixels) as one zlib stream: header,
    /// deflate blocks, Adler-32 (`cuda/deflate.cu`).
    pub zlib: Option<Vec<u8>>,
}

impl Edges {
    /// An edge image computed where no PNG data is made (the CPU, or the GPU outside a slot): its bytes.
    pub fn of_bytes(width: u32, height: u32, bytes: Vec<u8>) -> Edges {
        Edges { width, height, bytes: Some(bytes), zlib: None }
    }
}

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
    /// The stored rows' device buffer, for rows inflated on the CPU ([`Slot::run_filtered`]), and a pinned one to
    /// copy them into first where they are not page-locked themselves.
    upload: Option<CudaSlice<u8>>,
    pinned: Option<PinnedHostSlice<u8>>,
    scratch: unfilter::Scratch,
    /// The filter bytes copied back, for rows inflated on the device ([`Slot::run_inflated`]).
    filters: Option<PinnedHostSlice<u8>>,
}

impl RowBuffers {
    /// `buffers` for a `d`-sized image of `bytes_per_pixel`: kept when they are that size, else allocated afresh
    /// (the old ones freed first), without the upload buffers.
    fn for_size<'b>(
        gpu: &Gpu,
        buffers: &'b mut Option<RowBuffers>,
        d: Dims,
        bytes_per_pixel: usize,
    ) -> Result<&'b mut RowBuffers, GpuError> {
        let size = (d.width as u32, d.height as u32, bytes_per_pixel);
        if !matches!(buffers, Some(r) if r.size == size) {
            *buffers = None; // free the old size first
            let scratch = unfilter::Scratch::alloc(&gpu.stream, d, bytes_per_pixel)?;
            *buffers = Some(RowBuffers { size, upload: None, pinned: None, scratch, filters: None });
        }
        Ok(buffers.as_mut().expect("just set"))
    }
}

struct SlotBuffers {
    width: u32,
    height: u32,
    /// The RGB upload's buffer: allocated by the first [`Slot::run`], never by [`Slot::run_filtered`],
    /// whose input is the stored rows.
    pinned_in: Option<PinnedHostSlice<u8>>,
    pinned_out: PinnedHostSlice<u8>,
    device: DeviceImage,
    /// cuda/deflate.cu's buffers, made by the first image that asks for PNG data.
    deflate: Option<deflate::Scratch>,
    /// Canny's workspace (its gradients, states and parents), made by the first image that asks for Canny.
    canny: Option<CudaSlice<u8>>,
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
            *buffers =
                Some(SlotBuffers { width, height, pinned_in: None, pinned_out, device, deflate: None, canny: None });
        }
        Ok(buffers.as_mut().expect("just set"))
    }

    /// gpu-strip on the device input (uploaded or written there), or Canny after its gradients (as `want` asks); the
    /// edges downloaded, or their PNG data deflated on the device and that downloaded; waits for them.
    fn strip_and_download(&mut self, gpu: &Gpu, d: Dims, filter: Filter, want: Want) -> Result<Edges, GpuError> {
        match &want.canny {
            None => self.device.launch(gpu, d, filter.border)?,
            Some(canny) => self.canny(gpu, d, filter, canny)?,
        }
        let zlib = if want.png { self.deflated(gpu, d)? } else { None };
        let bytes = if zlib.is_none() || want.bytes {
            self.device.download_pinned(gpu, &mut self.pinned_out)?;
            gpu.stream.synchronize()?;
            Some(self.pinned_out.as_slice()?.to_vec())
        } else {
            None
        };
        Ok(Edges { width: d.width as u32, height: d.height as u32, bytes, zlib })
    }

    /// Canny's edges of the device input into the edges' output buffer, through this slot's workspace (made, or
    /// made larger, here): [`variants::canny_on_device`], the Python package's path, on the slot's stream.
    fn canny(&mut self, gpu: &Gpu, d: Dims, filter: Filter, canny: &Canny) -> Result<(), GpuError> {
        use cudarc::driver::{DevicePtr, DevicePtrMut};
        let need = variants::canny_workspace_bytes(filter, canny, d.width as u32, d.height as u32);
        let workspace = match &mut self.canny {
            Some(w) if w.len() >= need => w,
            // SAFETY (alloc): the kernels write each part of the workspace before they read it.
            slot => slot.insert(unsafe { gpu.stream.alloc::<u8>(need)? }),
        };
        let (rgb, out) = self.device.buffers_mut();
        assert!(out.len() >= d.pixels(), "the edges' buffer holds a byte a pixel");
        let (rgb, _read) = rgb.device_ptr(&gpu.stream);
        let (out, _write) = out.device_ptr_mut(&gpu.stream);
        let bytes = workspace.len();
        let (ws, _ws) = workspace.device_ptr_mut(&gpu.stream);
        let stream = gpu.stream.cu_stream() as u64;
        let a = RawImages { rgb, out, width: d.width as u32, height: d.height as u32, images: 1, stream };
        // SAFETY: the input holds this image's RGB and the output a byte a pixel (the buffers are this size's); the
        // workspace is this slot's alone, at least `need` bytes, and device allocations are 256-byte aligned; every
        // launch is on the slot's stream, which is waited for before the buffers are used again.
        unsafe { variants::canny_on_device(gpu, a, (ws, bytes), filter, canny, variants::CannyLaunches::All) }
    }

    /// The edges' PNG image data as one zlib stream, deflated on the device (`cuda/deflate.cu`); `None` when
    /// the stream would be larger than the edges' pinned buffer.
    fn deflated(&mut self, gpu: &Gpu, d: Dims) -> Result<Option<Vec<u8>>, GpuError> {
        let scratch = match &mut self.deflate {
            Some(s) => s,
            none => none.insert(deflate::Scratch::alloc(&gpu.stream, d)?),
        };
        deflate_on_device(gpu, self.device.output(), scratch, self.pinned_out.as_mut_slice()?)
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
    /// gpu-strip on `rgb` through this slot's pinned buffers and stream; returns the edge image (its bytes or
    /// PNG data, as `want` asks).
    pub fn run(&mut self, rgb: &RgbImage, filter: Filter, want: Want) -> Result<Edges, GpuError> {
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
        b.strip_and_download(&gpu, d, filter, want)
    }

    /// gpu-strip on a PNG whose filters are still to be undone: its stored rows go up, `cuda/unfilter.cu`
    /// writes the RGB image into the device input, gpu-strip runs on it. Returns the edge image's bytes,
    /// identical to [`Slot::run`] on the decoded image (or its PNG data, as `want` asks).
    pub fn run_filtered(&mut self, png: &Filtered, filter: Filter, want: Want) -> Result<Edges, GpuError> {
        let d = Dims::new(png.width, png.height)?;
        let gpu = self.gpu.for_filter(filter)?;
        let rows = RowBuffers::for_size(&self.gpu, &mut self.filtered, d, png.bytes_per_pixel)?;
        let device = match &mut rows.upload {
            Some(u) => u,
            // SAFETY (device allocation): the upload writes it in full before the kernel reads it.
            none => none.insert(unsafe { self.gpu.stream.alloc::<u8>(png.rows.len())? }),
        };
        let locked = (&*png.rows as &dyn std::any::Any).downcast_ref::<PinnedRows>().filter(|r| r.is_locked());
        match locked {
            Some(locked) => {
                let (to, _record) = cudarc::driver::DevicePtrMut::device_ptr_mut(device, &gpu.stream);
                // SAFETY: `device` holds the rows' length (made for this size); `locked` is borrowed from `png` until
                // this function returns, and the stream is waited for before it returns, on every path (below).
                unsafe { cudarc::driver::result::memcpy_htod_async(to, &locked[..], gpu.stream.cu_stream()) }?;
            }
            None => {
                let pinned = match &mut rows.pinned {
                    Some(p) => p,
                    // SAFETY (pinned allocation): written in full just below before it is uploaded.
                    none => none.insert(unsafe { upload_buffer(&self.gpu, png.rows.len())? }),
                };
                pinned.as_mut_slice()?.copy_from_slice(&png.rows);
                gpu.stream.memcpy_htod(pinned, device)?;
            }
        }
        let edges = self.unfilter_and_strip(&gpu, png, d, filter, want);
        if edges.is_err() {
            // The upload may still be reading the rows: they must outlive it.
            let _ = gpu.stream.synchronize();
        }
        edges
    }

    /// The rest of [`Slot::run_filtered`], once the rows are on their way up.
    fn unfilter_and_strip(
        &mut self,
        gpu: &Gpu,
        png: &Filtered,
        d: Dims,
        filter: Filter,
        want: Want,
    ) -> Result<Edges, GpuError> {
        let rows = self.filtered.as_mut().expect("made by run_filtered");
        let device = rows.upload.as_ref().expect("made by run_filtered");
        let b = SlotBuffers::for_size(&self.gpu, &mut self.buffers, png.width, png.height)?;
        let unfilter = gpu.kernels.unfilter()?;
        unfilter.enqueue(
            &gpu.stream,
            &device.as_view(),
            &mut rows.scratch,
            b.device.input_mut(),
            d,
            png.bytes_per_pixel,
        )?;
        b.strip_and_download(gpu, d, filter, want)
    }

    /// gpu-strip on a PNG whose image data was inflated on the device ([`super::nvcomp::Wave::rows`]:
    /// `height` rows of a filter byte and `width · bytes_per_pixel` bytes): `cuda/unfilter.cu` writes the RGB
    /// image into the device input, the filter bytes are checked (a row naming a filter type PNG does not have
    /// is [`GpuError::BadData`], in [`crate::image_io::filtered::read`]'s words), gpu-strip runs. The edges
    /// are [`Slot::run_filtered`]'s for the same file.
    pub fn run_inflated(
        &mut self,
        stored: &CudaView<'_, u8>,
        (width, height, bytes_per_pixel): (u32, u32, usize),
        filter: Filter,
        want: Want,
    ) -> Result<Edges, GpuError> {
        let d = Dims::new(width, height)?;
        let gpu = self.gpu.for_filter(filter)?;
        let rows = RowBuffers::for_size(&self.gpu, &mut self.filtered, d, bytes_per_pixel)?;
        let b = SlotBuffers::for_size(&self.gpu, &mut self.buffers, width, height)?;
        let unfilter = gpu.kernels.unfilter()?;
        unfilter.enqueue(&gpu.stream, stored, &mut rows.scratch, b.device.input_mut(), d, bytes_per_pixel)?;
        // The kernels treat an unknown filter type as none; the CPU decoder refuses the file, and so does this. The
        // filter bytes come back with the edges (no synchronisation of their own), and are checked before the
        // edges are handed back.
        let host = match &mut rows.filters {
            Some(h) => h,
            // SAFETY (pinned allocation): written by the copy just below before it is read.
            none => none.insert(unsafe { self.gpu.ctx.alloc_pinned_with_flags::<u8>(height as usize, 0)? }),
        };
        gpu.stream.memcpy_dtoh(rows.scratch.filters(), host)?;
        let edges = b.strip_and_download(&gpu, d, filter, want)?;
        if let Some((r, f)) = host.as_slice()?.iter().enumerate().find(|(_, &f)| f > 4) {
            return Err(GpuError::BadData(format!("row {r} names filter type {f}, which PNG does not have")));
        }
        Ok(edges)
    }

    /// gpu-strip on a JPEG that nvJPEG decodes into the device input (`Slot::decode_jpeg_to_input`). Returns
    /// the edge image (its bytes or PNG data, as `want` asks), with `want_rgb` the RGB nvJPEG decoded (for
    /// `--check`: the edges are exact for it), and whether the GPU's JPEG engine decoded it.
    pub fn run_jpeg(
        &mut self,
        nvjpeg: &Nvjpeg,
        bytes: &[u8],
        info: Info,
        filter: Filter,
        want: Want,
        want_rgb: bool,
    ) -> Result<(Edges, Option<Vec<u8>>, bool), GpuError> {
        let d = Dims::new(info.width, info.height)?;
        let gpu = self.gpu.for_filter(filter)?;
        let on_engine = self.decode_jpeg_to_input(nvjpeg, bytes, info)?;
        let b = SlotBuffers::for_size(&self.gpu, &mut self.buffers, info.width, info.height)?;
        let rgb = if want_rgb { Some(gpu.stream.clone_dtoh(b.device.input_mut())?) } else { None };
        Ok((b.strip_and_download(&gpu, d, filter, want)?, rgb, on_engine))
    }

    /// The RGB of a JPEG decoded by nvJPEG (`Slot::decode_jpeg_to_input`), copied to host memory, and whether
    /// the GPU's JPEG engine decoded it: the image command's GPU decoder, whose variants then all read that RGB.
    pub fn decode_jpeg(&mut self, nvjpeg: &Nvjpeg, bytes: &[u8], info: Info) -> Result<(Vec<u8>, bool), GpuError> {
        let on_engine = self.decode_jpeg_to_input(nvjpeg, bytes, info)?;
        let b = SlotBuffers::for_size(&self.gpu, &mut self.buffers, info.width, info.height)?;
        let rgb = self.gpu.stream.clone_dtoh(b.device.input_mut())?;
        // One image, once: its device and pinned buffers are not kept for another.
        self.buffers = None;
        Ok((rgb, on_engine))
    }

    /// Decodes a JPEG with nvJPEG into this slot's device input buffer (sized for it here), ordered on the slot's
    /// stream: on the GPU's JPEG engine, in one call with the other slots' waiting JPEGs ([`super::jpeg_batch`]),
    /// or where the engine is absent or does not take the file, alone on nvJPEG's default backend. Returns
    /// whether the engine decoded it.
    fn decode_jpeg_to_input(&mut self, nvjpeg: &Nvjpeg, bytes: &[u8], info: Info) -> Result<bool, GpuError> {
        // nvJPEG works in the thread's current context.
        self.gpu.ctx.bind_to_thread()?;
        let b = SlotBuffers::for_size(&self.gpu, &mut self.buffers, info.width, info.height)?;
        // The input buffer is written below, outside the stream's order: nothing of an earlier image may still
        // be reading it.
        self.gpu.stream.synchronize()?;
        let stream = self.gpu.stream.cu_stream();
        let (rgb, _write) = cudarc::driver::DevicePtrMut::device_ptr_mut(b.device.input_mut(), &self.gpu.stream);
        let job = Job { bytes: bytes.as_ptr(), len: bytes.len(), width: info.width, rgb };
        // SAFETY: the input buffer holds 3 · width · height bytes (allocated for this size), belongs to this
        // context (current on this thread), and nothing else uses it until the decode has run; `bytes`
        // outlives the call, which returns once the engine's call has run.
        let on_engine = match &nvjpeg.hardware {
            Ok(engine) => unsafe { engine.decode(job, stream) },
            Err(_) => false,
        };
        if !on_engine {
            let state = match &mut self.jpeg {
                Some(s) => s,
                none => none.insert(nvjpeg.state().map_err(GpuError::Peer)?),
            };
            // SAFETY: as above; the decode is ordered on this slot's stream before anything later on it.
            unsafe { nvjpeg.decode(state, bytes, info, rgb, stream) }.map_err(GpuError::Peer)?;
        }
        Ok(on_engine)
    }
}
