//! NPP, NVIDIA's image library, as a peer to time against in the same process: grey conversion
//! (`nppiRGBToGray_8u_C3C1R_Ctx`) then, for a 3×3 stencil, Sobel gradients and L2 magnitude in one call
//! (`nppiGradientVectorSobelBorder_8u16s_C1R_Ctx`), and for 5×5 — NPP's largest Sobel — the two gradients
//! (`nppiFilterSobelVertBorder_8u16s_C1R_Ctx` for Gx and `…Horiz…` for Gy: NPP names them by the edge, not the
//! derivative), replicate border, 16-bit outputs. NPP's grey weights are 0.299/0.587/0.114 and its magnitude
//! is not saturated to 8 bits, so we compare times, not bytes. NPP has no 7×7 Sobel.
//!
//! For Canny, NPP's own (`nppiFilterCannyBorder_8u_C1R_Ctx`: Sobel 3×3 or 5×5, L1 or L2, replicate border) is timed
//! on a grey image already on the device, as its documentation has it called.
//!
//! The libraries are loaded at run time (`libnppc`, `libnppicc`, `libnppif` of CUDA 13, as the toolkit
//! installs them); absent, the peer is skipped with the reason.

use std::ffi::c_void;

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use libloading::Library;

use super::{Gpu, GpuError};

/// `NppStreamContext` of nppdefs.h (CUDA 12/13): 48 bytes.
#[repr(C)]
struct NppStreamContext {
    stream: *mut c_void,
    device_id: i32,
    multiprocessors: i32,
    max_threads_per_multiprocessor: i32,
    max_threads_per_block: i32,
    shared_mem_per_block: usize,
    cc_major: i32,
    cc_minor: i32,
    stream_flags: u32,
    reserved0: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct NppiSize {
    width: i32,
    height: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct NppiPoint {
    x: i32,
    y: i32,
}

// nppdefs.h: NPP_MASK_SIZE_3_X_3, NPP_MASK_SIZE_5_X_5, nppiNormL2, NPP_BORDER_REPLICATE.
const NPP_MASK_SIZE_3_X_3: i32 = 200;
const NPP_MASK_SIZE_5_X_5: i32 = 201;
const NPPI_NORM_L2: i32 = 2;
const NPP_BORDER_REPLICATE: i32 = 2;

type RgbToGray = unsafe extern "C" fn(*const u8, i32, *mut u8, i32, NppiSize, NppStreamContext) -> i32;
#[allow(clippy::type_complexity)]
type GradientSobel = unsafe extern "C" fn(
    *const u8,
    i32,
    NppiSize,
    NppiPoint,
    *mut i16,
    i32,
    *mut i16,
    i32,
    *mut i16,
    i32,
    *mut f32,
    i32,
    NppiSize,
    i32,
    i32,
    i32,
    NppStreamContext,
) -> i32;

/// `nppiFilterSobel{Vert,Horiz}Border_8u16s_C1R_Ctx(src, step, size, offset, dst, step, roi, mask, border, ctx)`.
type FilterSobel = unsafe extern "C" fn(
    *const u8,
    i32,
    NppiSize,
    NppiPoint,
    *mut i16,
    i32,
    NppiSize,
    i32,
    i32,
    NppStreamContext,
) -> i32;

/// `nppiFilterCannyBorder_8u_C1R_Ctx(src, step, size, offset, dst, step, roi, filter, mask, low, high, norm, border,
/// buffer, ctx)`.
type FilterCanny = unsafe extern "C" fn(
    *const u8,
    i32,
    NppiSize,
    NppiPoint,
    *mut u8,
    i32,
    NppiSize,
    i32,
    i32,
    i16,
    i16,
    i32,
    i32,
    *mut u8,
    NppStreamContext,
) -> i32;
/// `nppiFilterCannyBorderGetBufferSize(roi, *bytes)`.
type CannyBufferSize = unsafe extern "C" fn(NppiSize, *mut i32) -> i32;
// nppdefs.h: NPP_FILTER_SOBEL, nppiNormL1.
const NPP_FILTER_SOBEL: i32 = 0;
const NPPI_NORM_L1: i32 = 1;

/// The loaded NPP libraries.
pub struct Npp {
    _core: Library,
    color: Library,
    filter: Library,
}

/// What the peer is, for reports, by kernel size (NPP has 3×3 and 5×5 Sobel only).
pub fn description(ksize: crate::sobel::Ksize) -> Option<&'static str> {
    match ksize {
        crate::sobel::Ksize::K3 => {
            Some("NPP nppiRGBToGray + nppiGradientVectorSobelBorder (3×3, L2, replicate, 16-bit out)")
        }
        crate::sobel::Ksize::K5 => {
            Some("NPP nppiRGBToGray + nppiFilterSobelVertBorder + …HorizBorder (5×5 mask, replicate, 16-bit Gx and Gy)")
        }
        _ => None,
    }
}

fn open(names: &[String]) -> Result<Library, String> {
    let mut last = String::new();
    for name in names {
        // SAFETY: loading NVIDIA's NPP runs its initialisers, which have no preconditions.
        match unsafe { Library::new(name.as_str()) } {
            Ok(lib) => return Ok(lib),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("{} not found ({last})", names[0]))
}

impl Npp {
    /// Loads the NPP libraries; the reason when they are not there.
    pub fn load() -> Result<Npp, String> {
        let load = |lib: &str| {
            open(&[format!("lib{lib}.so.13"), format!("/usr/local/cuda/lib64/lib{lib}.so.13"), format!("lib{lib}.so")])
        };
        Ok(Npp { _core: load("nppc")?, color: load("nppicc")?, filter: load("nppif")? })
    }

    /// Event-timed runs of NPP's grey + Sobel of size `ksize` (3 or 5) on `rgb` (device-resident), after one
    /// warm-up; milliseconds.
    pub fn time(
        &self,
        gpu: &Gpu,
        rgb: &image::RgbImage,
        ksize: crate::sobel::Ksize,
        reps: usize,
    ) -> Result<Vec<f64>, GpuError> {
        let npp_err = |what: &str, status: i32| GpuError::Peer(format!("NPP: {what} returned status {status}"));
        let peer = |e: libloading::Error| GpuError::Peer(format!("NPP: {e}"));
        if description(ksize).is_none() {
            return Err(GpuError::Peer(format!("NPP has no {0}×{0} Sobel", ksize as u32)));
        }
        let five = ksize == crate::sobel::Ksize::K5;
        // SAFETY: the symbols have the C signatures declared above (nppi_color_conversion.h,
        // nppi_filtering_functions.h of CUDA 13).
        let (to_grey, sobel, vert, horiz) = unsafe {
            let g: libloading::Symbol<RgbToGray> = self.color.get(b"nppiRGBToGray_8u_C3C1R_Ctx\0").map_err(peer)?;
            let s: libloading::Symbol<GradientSobel> =
                self.filter.get(b"nppiGradientVectorSobelBorder_8u16s_C1R_Ctx\0").map_err(peer)?;
            let v: libloading::Symbol<FilterSobel> =
                self.filter.get(b"nppiFilterSobelVertBorder_8u16s_C1R_Ctx\0").map_err(peer)?;
            let h: libloading::Symbol<FilterSobel> =
                self.filter.get(b"nppiFilterSobelHorizBorder_8u16s_C1R_Ctx\0").map_err(peer)?;
            (*g, *s, *v, *h)
        };
        let (w, h) = (rgb.width() as i32, rgb.height() as i32);
        let pixels = rgb.width() as usize * rgb.height() as usize;
        let stream = &gpu.stream;
        let src: CudaSlice<u8> = stream.clone_htod(rgb.as_raw().as_slice())?;
        let mut grey: CudaSlice<u8> = stream.alloc_zeros(pixels)?;
        let mut gx: CudaSlice<i16> = stream.alloc_zeros(pixels)?;
        let mut gy: CudaSlice<i16> = stream.alloc_zeros(pixels)?;
        let mut mag: CudaSlice<i16> = stream.alloc_zeros(pixels)?;
        stream.synchronize()?;
        let ctx = || stream_context(gpu);
        let size = NppiSize { width: w, height: h };
        let mut run = || -> Result<(), GpuError> {
            let (s, _a) = src.device_ptr(stream);
            let (g, _b) = grey.device_ptr_mut(stream);
            let (x, _c) = gx.device_ptr_mut(stream);
            let (y, _d) = gy.device_ptr_mut(stream);
            let (m, _e) = mag.device_ptr_mut(stream);
            // SAFETY: every pointer addresses a device buffer of the size the step and ROI imply
            // (3·w bytes a row for the source, w bytes for grey, 2·w bytes for the 16-bit outputs), all
            // alive until after the stream is synchronised; the angle output is not requested (null).
            unsafe {
                let status = to_grey(s as *const u8, 3 * w, g as *mut u8, w, size, ctx());
                if status != 0 {
                    return Err(npp_err("nppiRGBToGray_8u_C3C1R_Ctx", status));
                }
                if five {
                    let origin = NppiPoint { x: 0, y: 0 };
                    for (f, out, name) in [
                        (vert, x, "nppiFilterSobelVertBorder_8u16s_C1R_Ctx"),
                        (horiz, y, "nppiFilterSobelHorizBorder_8u16s_C1R_Ctx"),
                    ] {
                        let status = f(
                            g as *const u8,
                            w,
                            size,
                            origin,
                            out as *mut i16,
                            2 * w,
                            size,
                            NPP_MASK_SIZE_5_X_5,
                            NPP_BORDER_REPLICATE,
                            ctx(),
                        );
                        if status != 0 {
                            return Err(npp_err(name, status));
                        }
                    }
                    return Ok(());
                }
                let status = sobel(
                    g as *const u8,
                    w,
                    size,
                    NppiPoint { x: 0, y: 0 },
                    x as *mut i16,
                    2 * w,
                    y as *mut i16,
                    2 * w,
                    m as *mut i16,
                    2 * w,
                    std::ptr::null_mut(),
                    0,
                    size,
                    NPP_MASK_SIZE_3_X_3,
                    NPPI_NORM_L2,
                    NPP_BORDER_REPLICATE,
                    ctx(),
                );
                if status != 0 {
                    return Err(npp_err("nppiGradientVectorSobelBorder_8u16s_C1R_Ctx", status));
                }
            }
            Ok(())
        };
        run()?;
        stream.synchronize()?;
        gpu.time_runs(reps.max(1), |_| run())
    }

    /// Event-timed runs of NPP's Canny (Sobel of `ksize` 3 or 5, L1 or L2, thresholds `low`/`high` as NPP takes
    /// them: 16-bit integers) on the grey of `rgb` (NPP's, converted once, device-resident: Canny alone is timed),
    /// after one warm-up; milliseconds.
    pub fn time_canny(
        &self,
        gpu: &Gpu,
        rgb: &image::RgbImage,
        canny: &crate::canny::Canny,
        reps: usize,
    ) -> Result<Vec<f64>, GpuError> {
        let npp_err = |what: &str, status: i32| GpuError::Peer(format!("NPP: {what} returned status {status}"));
        let peer = |e: libloading::Error| GpuError::Peer(format!("NPP: {e}"));
        let mask = match canny.ksize {
            crate::sobel::Ksize::K3 => NPP_MASK_SIZE_3_X_3,
            crate::sobel::Ksize::K5 => NPP_MASK_SIZE_5_X_5,
            k => return Err(GpuError::Peer(format!("NPP's Canny has no {0}×{0} aperture", k as u32))),
        };
        if rgb.width() as u64 * rgb.height() as u64 >= 1 << 28 {
            // Measured on the H200 at 16384²: an illegal address inside NPP, which leaves the context unusable.
            return Err(GpuError::Peer("NPP's Canny fails on images of 2^28 pixels or more".into()));
        }
        let threshold = |t: f64| t.clamp(i16::MIN as f64, i16::MAX as f64) as i16;
        let (low, high) = (threshold(canny.low.min(canny.high)), threshold(canny.low.max(canny.high)));
        let norm = if canny.norm == crate::sobel::Norm::L2 { NPPI_NORM_L2 } else { NPPI_NORM_L1 };
        // SAFETY: the symbols have the C signatures declared above (nppi_color_conversion.h,
        // nppi_filtering_functions.h of CUDA 13).
        let (to_grey, filter_canny, buffer_size) = unsafe {
            let g: libloading::Symbol<RgbToGray> = self.color.get(b"nppiRGBToGray_8u_C3C1R_Ctx\0").map_err(peer)?;
            let c: libloading::Symbol<FilterCanny> =
                self.filter.get(b"nppiFilterCannyBorder_8u_C1R_Ctx\0").map_err(peer)?;
            let b: libloading::Symbol<CannyBufferSize> =
                self.filter.get(b"nppiFilterCannyBorderGetBufferSize\0").map_err(peer)?;
            (*g, *c, *b)
        };
        let (w, h) = (rgb.width() as i32, rgb.height() as i32);
        let pixels = rgb.width() as usize * rgb.height() as usize;
        let size = NppiSize { width: w, height: h };
        let mut bytes = 0i32;
        // SAFETY: `bytes` is a live i32 the call writes.
        let status = unsafe { buffer_size(size, &mut bytes) };
        if status != 0 {
            return Err(npp_err("nppiFilterCannyBorderGetBufferSize", status));
        }
        let stream = &gpu.stream;
        let src: CudaSlice<u8> = stream.clone_htod(rgb.as_raw().as_slice())?;
        let mut grey: CudaSlice<u8> = stream.alloc_zeros(pixels)?;
        let mut edges: CudaSlice<u8> = stream.alloc_zeros(pixels)?;
        let mut buffer: CudaSlice<u8> = stream.alloc_zeros(bytes.max(1) as usize)?;
        {
            let (s, _a) = src.device_ptr(stream);
            let (g, _b) = grey.device_ptr_mut(stream);
            // SAFETY: 3·w bytes a row in, w out, both buffers of the image's size and alive past the synchronisation.
            let status = unsafe { to_grey(s as *const u8, 3 * w, g as *mut u8, w, size, stream_context(gpu)) };
            if status != 0 {
                return Err(npp_err("nppiRGBToGray_8u_C3C1R_Ctx", status));
            }
        }
        stream.synchronize()?;
        let mut run = || -> Result<(), GpuError> {
            let (g, _a) = grey.device_ptr(stream);
            let (e, _b) = edges.device_ptr_mut(stream);
            let (b, _c) = buffer.device_ptr_mut(stream);
            // SAFETY: grey and edges hold w·h bytes (w a row), the buffer the size NPP asked for; all alive until after
            // the stream is synchronised.
            let status = unsafe {
                filter_canny(
                    g as *const u8,
                    w,
                    size,
                    NppiPoint { x: 0, y: 0 },
                    e as *mut u8,
                    w,
                    size,
                    NPP_FILTER_SOBEL,
                    mask,
                    low,
                    high,
                    norm,
                    NPP_BORDER_REPLICATE,
                    b as *mut u8,
                    stream_context(gpu),
                )
            };
            if status != 0 {
                return Err(npp_err("nppiFilterCannyBorder_8u_C1R_Ctx", status));
            }
            Ok(())
        };
        run()?;
        stream.synchronize()?;
        gpu.time_runs(reps.max(1), |_| run())
    }
}

/// NPP's description of `gpu`'s stream and device.
fn stream_context(gpu: &Gpu) -> NppStreamContext {
    use cudarc::driver::sys::CUdevice_attribute as A;
    let attr = |a| gpu.ctx.attribute(a).unwrap_or(0);
    let (major, minor) = gpu.ctx.compute_capability().unwrap_or((0, 0));
    NppStreamContext {
        stream: gpu.stream.cu_stream() as *mut c_void,
        device_id: gpu.ctx.ordinal() as i32,
        multiprocessors: gpu.multiprocessors as i32,
        max_threads_per_multiprocessor: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR),
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        shared_mem_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) as usize,
        cc_major: major,
        cc_minor: minor,
        stream_flags: 0,
        reserved0: 0,
    }
}
