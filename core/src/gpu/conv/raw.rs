//! The filter on device memory another library owns (a PyTorch tensor, a CuPy array) and on that library's stream:
//! the arrays are lent to the launches for the call, the kernel's default strategy runs as for any other image, and
//! nothing is copied to or from the host.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::{ConvGpu, GpuError};
use crate::conv::ConvKernel;
use crate::gpu::kernels::Build;
use crate::gpu::patterns::{map, Dims};
use crate::sobel::{Border, Filter};
use crate::variant::Variant;

/// Caller-owned device memory for [`ConvGpu::run_raw`]: raw pointers into this context, and a stream.
#[derive(Clone, Copy, Debug)]
pub struct RawPlanes {
    /// `planes` planes of `width · height` bytes one after another, or with `from_rgb` `planes` packed RGB images
    /// (`3 · width · height` bytes each) whose grey planes are filtered.
    pub input: u64,
    /// Room for `planes` planes of `width · height` bytes: the result.
    pub out: u64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Planes (or RGB images) in the call: 1 to 65 535, one launch for all.
    pub planes: u32,
    /// The input is packed RGB: its grey (the report's, as [`crate::conv::Planes::grey`]) is filtered.
    pub from_rgb: bool,
    /// Device memory the call may use for its grey planes and the strategy's scratch (0 where it needs none):
    /// at least [`ConvGpu::workspace_bytes`], from the caller's allocator, so that no call allocates or frees.
    pub workspace: u64,
    /// Its size in bytes.
    pub workspace_bytes: usize,
    /// The `CUstream` to launch on (0: the legacy default stream).
    pub stream: u64,
}

/// A caller's device array seen as a `CudaSlice` for the launches. It is never freed here: dropping it gives the
/// pointer back ([`CudaSlice::leak`]), whichever way the call leaves.
struct Lent(Option<CudaSlice<u8>>);

impl Lent {
    /// # Safety
    /// `ptr` addresses `len` bytes of device memory of `stream`'s context, alive for the call.
    unsafe fn new(stream: &Arc<CudaStream>, ptr: u64, len: usize) -> Lent {
        // SAFETY: forwarded from the caller; `Drop` leaks the slice, so the memory stays the caller's.
        Lent(Some(unsafe { stream.upgrade_device_ptr(ptr, len) }))
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.leak();
        }
    }
}

impl Deref for Lent {
    type Target = CudaSlice<u8>;
    fn deref(&self) -> &CudaSlice<u8> {
        self.0.as_ref().expect("lent until dropped")
    }
}

impl DerefMut for Lent {
    fn deref_mut(&mut self) -> &mut CudaSlice<u8> {
        self.0.as_mut().expect("lent until dropped")
    }
}

impl ConvGpu {
    /// The workspace [`ConvGpu::run_raw`] needs for `planes` planes of `width × height` (with `from_rgb`, the grey
    /// planes): the grey planes, then the strategy's scratch.
    pub fn workspace_bytes(
        &self,
        kernel: &ConvKernel,
        strategy: Variant,
        (width, height, planes, from_rgb): (u32, u32, u32, bool),
    ) -> Result<usize, GpuError> {
        let bytes = planes as usize * Dims::new(width, height)?.pixels();
        Ok(if from_rgb { bytes } else { 0 } + self.prepared(kernel, strategy)?.scratch_bytes(bytes))
    }

    /// `kernel` on caller-owned planes (or on the grey of caller-owned RGB images) by a GPU `strategy`, launched
    /// on the caller's stream without any copy, allocation or wait.
    ///
    /// # Safety
    /// `a.input` must address the input's bytes, `a.out` `planes · width · height` writable bytes and `a.workspace`
    /// `a.workspace_bytes` writable bytes of device memory of this GPU's context, none written by anything else until
    /// the launches have run on `a.stream`, a live stream of that context (or 0).
    pub unsafe fn run_raw(
        &self,
        a: RawPlanes,
        kernel: &ConvKernel,
        strategy: Variant,
        border: Border,
    ) -> Result<(), GpuError> {
        if a.planes == 0 || a.planes > 65_535 {
            return Err(GpuError::Unsupported(format!("{} planes in one launch (1 to 65535)", a.planes)));
        }
        let d = Dims::new(a.width, a.height)?;
        let prepared = self.prepared(kernel, strategy)?;
        let bytes = a.planes as usize * d.pixels();
        let (grey_bytes, scratch_bytes) = (if a.from_rgb { bytes } else { 0 }, prepared.scratch_bytes(bytes));
        if a.workspace_bytes < grey_bytes + scratch_bytes {
            return Err(GpuError::Unsupported(format!(
                "a workspace of {} bytes, where the call needs {}",
                a.workspace_bytes,
                grey_bytes + scratch_bytes
            )));
        }
        let ctx = self.untracked()?;
        ctx.bind_to_thread()?;
        // SAFETY: the caller guarantees a live stream of this context.
        let stream = unsafe { ctx.wrap_borrowed_stream(a.stream as cudarc::driver::sys::CUstream) };
        // SAFETY: the caller guarantees the sizes and the lifetime (`Lent` never frees them); the grey planes and the
        // scratch are two disjoint parts of the workspace (the scratch may be empty: the strategy then never reads it).
        let (input, mut out, mut grey, mut scratch) = unsafe {
            (
                Lent::new(&stream, a.input, if a.from_rgb { 3 * bytes } else { bytes }),
                Lent::new(&stream, a.out, bytes),
                Lent::new(&stream, a.workspace, grey_bytes),
                Lent::new(&stream, a.workspace + grey_bytes as u64, scratch_bytes),
            )
        };
        if a.from_rgb {
            self.grey_planes(&stream, d, a.planes, &input, &mut grey)?;
        }
        let planes_in = if a.from_rgb { &grey } else { &input };
        prepared.enqueue(&stream, (d, a.planes, border), planes_in, &mut out, &mut scratch)
    }

    /// A second handle on this GPU's context whose slices track no uses with events: the lent arrays are used on the
    /// caller's stream alone, in its order. Creating, recording, waiting for and destroying two events for each of the
    /// four slices took half of a call's host time (a 2048×1024 gaussian:5: 13.8 µs a call with them, 7.2 without,
    /// H200).
    fn untracked(&self) -> Result<&Arc<CudaContext>, GpuError> {
        if let Some(ctx) = self.untracked.get() {
            return Ok(ctx);
        }
        let ctx = CudaContext::new(self.gpu.ctx.ordinal())?;
        // SAFETY: every slice made on this handle is lent for one call's launches on one stream (`run_raw`), which
        // orders them; none is freed here.
        unsafe { ctx.disable_event_tracking() };
        Ok(self.untracked.get_or_init(|| ctx))
    }

    /// The report's grey of `images` packed RGB images of `d` into as many planes (map.cu's `grey_kernel`, the map
    /// of [`crate::conv::Planes::grey`]).
    fn grey_planes(
        &self,
        stream: &Arc<CudaStream>,
        d: Dims,
        images: u32,
        rgb: &CudaSlice<u8>,
        grey: &mut CudaSlice<u8>,
    ) -> Result<(), GpuError> {
        let f = match self.grey.get() {
            Some(f) => f,
            None => {
                let f = self.gpu.for_build(Build::of(Filter::default()))?.kernels.grey()?;
                self.grey.get_or_init(|| f)
            }
        };
        // A pixel's grey is its own: the images stacked are one image `images` times as tall, in grids of at most
        // 65 535 block rows.
        let (width, height) = (d.width as usize, d.height as usize);
        let rows_a_launch = (65_535 * map::BLOCK.1 as usize / height * height).max(height);
        let all_rows = images as usize * height;
        for top in (0..all_rows).step_by(rows_a_launch) {
            let rows = rows_a_launch.min(all_rows - top);
            let at = top * width;
            let (src, mut dst) = (rgb.slice(3 * at..3 * (at + rows * width)), grey.slice_mut(at..at + rows * width));
            let cfg = LaunchConfig {
                grid_dim: ((d.width as u32).div_ceil(map::BLOCK.0), (rows as u32).div_ceil(map::BLOCK.1), 1),
                block_dim: (map::BLOCK.0, map::BLOCK.1, 1),
                shared_mem_bytes: 0,
            };
            let rows = rows as i32;
            let mut b = stream.launch_builder(f);
            b.arg(&src).arg(&mut dst).arg(&d.width).arg(&rows);
            // SAFETY: `grey_kernel(const u8* rgb, u8* grey, int width, int height)` reads 3·width·rows bytes and
            // writes width·rows, the two slices' sizes.
            unsafe { b.launch(cfg) }?;
        }
        Ok(())
    }
}
