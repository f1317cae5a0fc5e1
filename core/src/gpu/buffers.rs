//! One device image — RGB input, the output (edge bytes, or what the build writes), and the intermediates its
//! pattern needs — and the one
//! path that moves it: upload → launch → download. The variants ([`super::variants`]), batch's slots
//! ([`super::slots`]) and host → host ([`super::host_pipeline`]) all use it; they differ only in where the
//! host bytes live (pageable or pinned memory) and in whether they wait for each copy.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, PinnedHostSlice};

use super::patterns::{Dims, Scratch};
use super::{Gpu, GpuError};
use crate::sobel::Border;
use crate::variant::{Variant, N1};

/// A variant's device buffers for images of up to `pixels` pixels.
pub struct DeviceImage {
    variant: Variant,
    rgb: CudaSlice<u8>,
    out: CudaSlice<u8>,
    scratch: Scratch,
}

/// Device bytes per pixel of `variant`'s buffers: 3 in, the build's output (1 for the edges), and its
/// pattern's intermediates.
pub fn bytes_per_pixel(gpu: &Gpu, variant: Variant) -> Result<usize, GpuError> {
    // Scratch sizes are each pattern's constants; asking loads the pattern's file if it was not yet.
    Ok(3 + out_bytes(gpu) + gpu.kernels.pattern(variant)?.scratch_bytes_per_pixel())
}

/// Bytes a pixel of the output of `gpu`'s build takes.
fn out_bytes(gpu: &Gpu) -> usize {
    gpu.kernels.build().output.bytes_per_pixel()
}

impl DeviceImage {
    /// Uninitialised buffers for `pixels` pixels: the upload fills the input before any launch reads it, and
    /// the kernels write the intermediates and the output in full before anything reads them.
    pub fn alloc(gpu: &Gpu, variant: Variant, pixels: usize) -> Result<DeviceImage, GpuError> {
        let scratch = gpu.kernels.pattern(variant)?.scratch(&gpu.stream, pixels)?;
        // SAFETY (alloc): see above; nothing reads these buffers before they are written.
        let (rgb, out) = unsafe { (gpu.stream.alloc(3 * pixels)?, gpu.stream.alloc(out_bytes(gpu) * pixels)?) };
        Ok(DeviceImage { variant, rgb, out, scratch })
    }

    /// Copies `rgb` (pageable host memory) to the input buffer's start.
    pub fn upload(&mut self, gpu: &Gpu, rgb: &[u8]) -> Result<(), GpuError> {
        let mut dst = self.rgb.slice_mut(..rgb.len());
        Ok(gpu.stream.memcpy_htod(rgb, &mut dst)?)
    }

    /// Copies pinned `rgb` to the input buffer, asynchronously (cudarc orders later use of `rgb` after it).
    pub fn upload_pinned(&mut self, gpu: &Gpu, rgb: &PinnedHostSlice<u8>) -> Result<(), GpuError> {
        Ok(gpu.stream.memcpy_htod(rgb, &mut self.rgb)?)
    }

    /// Copies `rgb` to the input buffer without waiting for the copy.
    ///
    /// # Safety
    /// `rgb` must stay alive and unmodified until `gpu.stream` is synchronised (it should be pinned memory,
    /// or the copy is synchronous anyway).
    pub unsafe fn upload_async(&mut self, gpu: &Gpu, rgb: &[u8]) -> Result<(), GpuError> {
        assert!(rgb.len() <= self.rgb.len());
        let (ptr, _record) = self.rgb.device_ptr_mut(&gpu.stream);
        // SAFETY: `ptr` holds at least `rgb.len()` bytes (checked); the caller keeps `rgb` alive.
        unsafe { cudarc::driver::result::memcpy_htod_async(ptr, rgb, gpu.stream.cu_stream()) }?;
        Ok(())
    }

    /// The input buffer, for a kernel that writes the RGB image on the device (`cuda/unfilter.cu`) instead of
    /// an upload.
    pub fn input_mut(&mut self) -> &mut CudaSlice<u8> {
        &mut self.rgb
    }

    /// The input and the output buffers, for kernels launched on them directly (a slot's Canny).
    pub fn buffers_mut(&mut self) -> (&CudaSlice<u8>, &mut CudaSlice<u8>) {
        (&self.rgb, &mut self.out)
    }

    /// The output buffer, for a kernel that reads the edges on the device (`cuda/deflate.cu`).
    pub fn output(&self) -> &CudaSlice<u8> {
        &self.out
    }

    /// Enqueues the variant's kernels once on a `d`-sized image in these buffers.
    pub fn launch(&mut self, gpu: &Gpu, d: Dims, border: Border) -> Result<(), GpuError> {
        let n1 = self.variant.n1().unwrap_or(N1::ONE);
        let job = gpu.job(d, border, n1);
        gpu.kernels.pattern(self.variant)?.enqueue(&job, &self.rgb, &mut self.out, &mut self.scratch)?;
        Ok(())
    }

    /// The outputs of a `pixels`-pixel image, as bytes, copied to a new vector (synchronous). A gradients
    /// build writes two planes, Gx's `pixels` values then Gy's, one after the other.
    pub fn download(&self, gpu: &Gpu, pixels: usize) -> Result<Vec<u8>, GpuError> {
        Ok(gpu.stream.clone_dtoh(&self.out.slice(..out_bytes(gpu) * pixels))?)
    }

    /// Sets the output's first `bytes.len()` bytes to `bytes` (synchronous copy from pageable memory).
    pub fn fill_output(&mut self, gpu: &Gpu, bytes: &[u8]) -> Result<(), GpuError> {
        let mut dst = self.out.slice_mut(..bytes.len());
        Ok(gpu.stream.memcpy_htod(bytes, &mut dst)?)
    }

    /// Copies the output into pinned `out`, asynchronously.
    pub fn download_pinned(&self, gpu: &Gpu, out: &mut PinnedHostSlice<u8>) -> Result<(), GpuError> {
        let n = out.len();
        Ok(gpu.stream.memcpy_dtoh(&self.out.slice(..n), out)?)
    }

    /// Copies `out.len()` output bytes from byte `offset` into `out` without waiting for the copy.
    ///
    /// # Safety
    /// `out` must stay alive and untouched until `gpu.stream` is synchronised.
    pub unsafe fn download_async(&self, gpu: &Gpu, offset: usize, out: &mut [u8]) -> Result<(), GpuError> {
        assert!(offset + out.len() <= self.out.len());
        let (ptr, _record) = self.out.device_ptr(&gpu.stream);
        // SAFETY: the range [offset, offset + out.len()) lies in the buffer (checked); the caller keeps `out`.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(out, ptr + offset as u64, gpu.stream.cu_stream()) }?;
        Ok(())
    }
}
