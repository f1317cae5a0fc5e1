//! NPP, NVIDIA's image library, as a peer to time against in the same process: grey conversion
//! (`nppiRGBToGray_8u_C3C1R_Ctx`) then, for a 3×3 stencil, Sobel gradients and L2 magnitude in one call
//! (`nppiGradientVectorSobelBorder_8u16s_C1R_Ctx`), and for 5×5 — NPP's largest Sobel — the two gradients
//! (`nppiFilterSobelVertBorder_8u16s_C1R_Ctx` for Gx and `…Horiz…` for Gy: NPP names them by the edge, not the
//! derivative), replicate border, 16-bit outputs. NPP's grey weights are 0.299/0.587/0.114 and its magnitude
//! is not saturated to 8 bits, so we compare times, not bytes. NPP has no 7×7 Sobel.
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
        let ctx = || {
            use cudarc::driver::sys::CUdevice_attribute as A;
            let attr = |a| gpu.ctx.attribute(a).unwrap_or(0);
            let (major, minor) = gpu.ctx.compute_capability().unwrap_or((0, 0));
            NppStreamContext {
                stream: stream.cu_stream() as *mut c_void,
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
        };
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
}
