//! nvJPEG, NVIDIA's JPEG decoder, loaded at run time like NVRTC and NPP: the CUDA toolkit's
//! `libnvjpeg.so.13`, or the `nvidia-nvjpeg` wheel's on `LD_LIBRARY_PATH`. Absent, JPEGs are decoded on the
//! CPU as before and one line says why ([`Nvjpeg::load`]'s error).
//!
//! What is used: a library handle on the default backend (`nvjpegCreateSimple`: the GPU does the IDCT and
//! colour conversion, and the Huffman decoding too for large images), one decode state per batch slot (a
//! state is not shared between threads), `nvjpegGetImageInfo` to check the file first, and `nvjpegDecode` into
//! interleaved RGB (`NVJPEG_OUTPUT_RGBI`) written straight into gpu-strip's device input buffer, on the slot's
//! stream. The declarations below are the few nvjpeg.h ones these calls need.
//!
//! Where the GPU has a JPEG engine (A100, H100, H200: `NVJPEG_BACKEND_HARDWARE`), a second handle decodes
//! baseline JPEGs on it, several images a call (`nvjpegDecodeBatched`): the engine decodes a call's images side
//! by side, so its rate grows with the batch — on the H200, 4000×3000 photos, 160 images/s one a call, 670 four
//! a call, 870 sixteen — while calls from several threads take turns. So slots do not
//! call it each on their own: [`super::jpeg_batch`] gathers the JPEGs the slots have waiting into one call.
//! The engine's calls need the CUDA context current on the calling thread; without it they fail with
//! "allocator failure" (measured: why the engine once looked unusable here). With the engine, its handle also
//! reads every header, and the default handle is made only for a file the engine does not take: each handle
//! costs ~275 ms at start, in turn.

use std::ffi::{c_int, c_uchar, c_void};

use std::sync::{Arc, OnceLock};

use cudarc::driver::CudaContext;
use libloading::Library;

pub use super::nvjpeg_engine::{Hardware, Job};

/// `nvjpegHandle_t`, `nvjpegJpegState_t`: opaque pointers.
pub(super) type Handle = *mut c_void;
pub(super) type State = *mut c_void;
/// `nvjpegJpegStream_t`: a parsed header, opaque.
pub(super) type JpegStream = *mut c_void;

/// nvjpeg.h's `NVJPEG_MAX_COMPONENT`.
const MAX_COMPONENT: usize = 4;

/// `nvjpegImage_t`: a plane pointer and pitch a component (interleaved output uses the first only).
#[repr(C)]
pub(super) struct Image {
    channel: [*mut c_uchar; MAX_COMPONENT],
    pitch: [usize; MAX_COMPONENT],
}

impl Image {
    /// Packed 8-bit RGB (`NVJPEG_OUTPUT_RGBI`) of a `width`-pixel-wide image at device address `rgb`.
    pub(super) fn packed_rgb(rgb: cudarc::driver::sys::CUdeviceptr, width: u32) -> Image {
        let none = std::ptr::null_mut();
        Image { channel: [rgb as *mut c_uchar, none, none, none], pitch: [3 * width as usize, 0, 0, 0] }
    }
}

/// `nvjpegOutputFormat_t::NVJPEG_OUTPUT_RGBI`: interleaved RGB in `channel[0]`.
pub(super) const OUTPUT_RGBI: c_int = 5;
/// `nvjpegChromaSubsampling_t` values nvJPEG reports for the layouts it decodes (4:4:4 … 4:1:0, grey).
const CSS_GRAY: c_int = 6;
const CSS_UNKNOWN: c_int = -1;

type Create = unsafe extern "C" fn(*mut Handle) -> c_int;
pub(super) type Destroy = unsafe extern "C" fn(Handle) -> c_int;
pub(super) type StateCreate = unsafe extern "C" fn(Handle, *mut State) -> c_int;
pub(super) type StateDestroy = unsafe extern "C" fn(State) -> c_int;
type GetImageInfo =
    unsafe extern "C" fn(Handle, *const c_uchar, usize, *mut c_int, *mut c_int, *mut c_int, *mut c_int) -> c_int;
type Decode = unsafe extern "C" fn(Handle, State, *const c_uchar, usize, c_int, *mut Image, *mut c_void) -> c_int;

/// nvjpeg.h's `nvjpegStatus_t`, in words.
pub(super) fn status(code: c_int) -> String {
    let what = match code {
        1 => "not initialised",
        2 => "invalid parameter",
        3 => "bad JPEG",
        4 => "JPEG not supported",
        5 => "allocator failure",
        6 => "execution failed",
        7 => "architecture mismatch",
        8 => "internal error",
        9 => "implementation not supported",
        10 => "incomplete bitstream",
        _ => "unknown status",
    };
    format!("nvJPEG: {what} ({code})")
}

/// The entry points used, looked up once when the library is loaded.
pub(super) struct Fns {
    pub(super) destroy: Destroy,
    pub(super) state_create: StateCreate,
    pub(super) state_destroy: StateDestroy,
    pub(super) get_image_info: GetImageInfo,
    pub(super) decode: Decode,
}

/// The library, a handle on the default backend and, for batch, one on the GPU's JPEG engine.
pub struct Nvjpeg {
    /// The GPU's JPEG engine, or why it is not used. (Fields drop in this order: the engine's handle before the
    /// library its entry points live in.)
    pub hardware: Result<super::jpeg_batch::Batcher, String>,
    fns: Fns,
    /// The default backend's handle, or why it could not be made. Beside the JPEG engine it is made only when a
    /// file needs it (one the engine does not decode): each handle costs ~275 ms at start, and a photo folder's
    /// command waited for both.
    default: OnceLock<Result<Handle, String>>,
    create: Create,
    /// The handle headers are read with ([`Nvjpeg::info`]): the JPEG engine's where there is one, else the default.
    headers: Option<Handle>,
    /// Where it was loaded from, for the one line that says which decoder ran.
    pub name: String,
    /// Keeps the library loaded while `fns` point into it: the last field, dropped last.
    _lib: Library,
}

// SAFETY: nvJPEG's handle may be used from several threads at once (each with its own state: [`DecodeState`]
// is not `Sync`), as its documentation states for the decode calls used here.
unsafe impl Send for Nvjpeg {}
unsafe impl Sync for Nvjpeg {}

/// A decode state: one per slot, used by one thread at a time.
pub struct DecodeState {
    state: State,
    destroy: StateDestroy,
}

// SAFETY: a state moves between threads with its slot; it is never used by two at once (`&mut` to decode).
unsafe impl Send for DecodeState {}

impl Drop for DecodeState {
    fn drop(&mut self) {
        // SAFETY: created by nvjpegJpegStateCreate and destroyed once.
        unsafe { (self.destroy)(self.state) };
    }
}

impl Drop for Nvjpeg {
    fn drop(&mut self) {
        if let Some(Ok(handle)) = self.default.get() {
            // SAFETY: the handle was created by nvjpegCreateSimple; every state made from it belongs to a slot of
            // the engine that owns this `Nvjpeg` and is dropped first (the engine drops its slots before this).
            unsafe { (self.fns.destroy)(*handle) };
        }
    }
}

/// What a JPEG's header says, as nvJPEG reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Nvjpeg {
    /// Loads nvJPEG and creates a handle, with `ctx` (the CUDA context that will run its decodes) current on this
    /// thread, and with `engine` also the GPU's JPEG engine's (for many JPEGs a call: batch); or one line saying
    /// why not.
    pub fn load(ctx: &Arc<CudaContext>, engine: bool) -> Result<Nvjpeg, String> {
        let names = ["libnvjpeg.so.13", "/usr/local/cuda/lib64/libnvjpeg.so.13"];
        let mut why = Vec::new();
        for name in names {
            // SAFETY: loading NVIDIA's nvJPEG runs its initialisers, which have no preconditions.
            match unsafe { Library::new(name) } {
                Ok(lib) => {
                    crate::trace::mark("nvJPEG: library loaded");
                    let missing = |e: libloading::Error| format!("nvJPEG: {e}");
                    // SAFETY: each symbol has the signature declared above in nvjpeg.h (CUDA 13); the pointers are
                    // kept beside the library, which stays loaded as long as they do.
                    let (create, fns) = unsafe {
                        (
                            *lib.get::<Create>(b"nvjpegCreateSimple\0").map_err(missing)?,
                            Fns {
                                destroy: *lib.get(b"nvjpegDestroy\0").map_err(missing)?,
                                state_create: *lib.get(b"nvjpegJpegStateCreate\0").map_err(missing)?,
                                state_destroy: *lib.get(b"nvjpegJpegStateDestroy\0").map_err(missing)?,
                                get_image_info: *lib.get(b"nvjpegGetImageInfo\0").map_err(missing)?,
                                decode: *lib.get(b"nvjpegDecode\0").map_err(missing)?,
                            },
                        )
                    };
                    let hardware = match engine {
                        true => Hardware::open(&lib, &fns, ctx).inspect(|_| crate::trace::mark("nvJPEG: engine open")),
                        false => Err("one JPEG at a time: the JPEG engine pays only for many a call".to_string()),
                    };
                    let headers = hardware.as_ref().ok().map(|h| h.handle);
                    let hardware = hardware.map(super::jpeg_batch::Batcher::new);
                    let nvjpeg = Nvjpeg {
                        hardware,
                        fns,
                        default: OnceLock::new(),
                        create,
                        headers,
                        name: name.to_string(),
                        _lib: lib,
                    };
                    // Without the engine every JPEG needs the default handle: made now, where its cost is start-up's.
                    if nvjpeg.headers.is_none() {
                        nvjpeg.default_handle()?;
                    }
                    return Ok(nvjpeg);
                }
                Err(e) => why.push(e.to_string()),
            }
        }
        Err(format!("no nvJPEG (libnvjpeg.so.13 not found: {})", why.first().cloned().unwrap_or_default()))
    }

    /// The default backend's handle, made on first use (once, whichever thread asks first).
    fn default_handle(&self) -> Result<Handle, String> {
        self.default
            .get_or_init(|| {
                let mut handle: Handle = std::ptr::null_mut();
                // SAFETY: `handle` is written on success.
                let made = match unsafe { (self.create)(&mut handle) } {
                    0 => Ok(handle),
                    code => Err(status(code)),
                };
                crate::trace::mark("nvJPEG: default handle made");
                made
            })
            .clone()
    }

    /// A decode state for one slot, on the default backend.
    pub fn state(&self) -> Result<DecodeState, String> {
        let handle = self.default_handle()?;
        let mut state: State = std::ptr::null_mut();
        // SAFETY: the handle is live; `state` is written on success.
        match unsafe { (self.fns.state_create)(handle, &mut state) } {
            0 => Ok(DecodeState { state, destroy: self.fns.state_destroy }),
            code => Err(status(code)),
        }
    }

    /// The size of the JPEG in `bytes`, or why nvJPEG will not decode it here (it cannot parse it, or its
    /// colour layout is one it does not convert to RGB: CMYK, unknown subsampling).
    pub fn info(&self, bytes: &[u8]) -> Result<Info, String> {
        let (mut components, mut subsampling) = (0 as c_int, 0 as c_int);
        let (mut widths, mut heights) = ([0 as c_int; MAX_COMPONENT], [0 as c_int; MAX_COMPONENT]);
        let handle = match self.headers {
            Some(handle) => handle,
            None => self.default_handle()?,
        };
        // SAFETY: the handle is live; `bytes` is read only; the arrays have NVJPEG_MAX_COMPONENT entries. A handle
        // may serve many threads at once (nvJPEG's "Thread Safety": states, streams and buffers may not; none is
        // used here), so the engine's handle reads headers while the engine's thread decodes with it.
        let code = unsafe {
            (self.fns.get_image_info)(
                handle,
                bytes.as_ptr(),
                bytes.len(),
                &mut components,
                &mut subsampling,
                widths.as_mut_ptr(),
                heights.as_mut_ptr(),
            )
        };
        if code != 0 {
            return Err(status(code));
        }
        if !(components == 3 || (components == 1 && subsampling == CSS_GRAY)) || subsampling == CSS_UNKNOWN {
            return Err(format!(
                "nvJPEG: {components} components, subsampling {subsampling}: not converted to RGB here"
            ));
        }
        Ok(Info { width: widths[0].max(0) as u32, height: heights[0].max(0) as u32 })
    }

    /// Decodes `bytes` (a JPEG of `info`'s size) into `rgb` as packed 8-bit RGB, on `stream`.
    ///
    /// # Safety
    /// `rgb` must be device memory of the handle's context with room for `3 · width · height` bytes, not used by
    /// anything else until the work enqueued on `stream` (a live stream of that context) has run.
    pub unsafe fn decode(
        &self,
        state: &mut DecodeState,
        bytes: &[u8],
        info: Info,
        rgb: cudarc::driver::sys::CUdeviceptr,
        stream: cudarc::driver::sys::CUstream,
    ) -> Result<(), String> {
        let mut image = Image::packed_rgb(rgb, info.width);
        // A state exists only once the default handle does (`state`).
        let handle = self.default_handle()?;
        // SAFETY: the caller guarantees the output buffer and the stream; the state is this thread's alone (`&mut`).
        let code = unsafe {
            (self.fns.decode)(handle, state.state, bytes.as_ptr(), bytes.len(), OUTPUT_RGBI, &mut image, stream.cast())
        };
        match code {
            0 => Ok(()),
            code => Err(status(code)),
        }
    }
}
