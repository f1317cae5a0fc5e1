//! nvJPEG, NVIDIA's JPEG decoder, loaded at run time like NVRTC and NPP: the CUDA toolkit's
//! `libnvjpeg.so.13`, or the `nvidia-nvjpeg` wheel's on `LD_LIBRARY_PATH`. Absent, JPEGs are decoded on the
//! CPU as before and one line says why ([`Nvjpeg::load`]'s error).
//!
//! What is used: a library handle on the default backend (`nvjpegCreateSimple`: the GPU does the IDCT and
//! colour conversion, and the Huffman decoding too for large images), one decode state per batch slot (a
//! state is not shared between threads), `nvjpegGetImageInfo` to check the file first, and `nvjpegDecode` into
//! interleaved RGB (`NVJPEG_OUTPUT_RGBI`) written straight into gpu-strip's device input buffer, on the slot's
//! stream. The declarations below are the few nvjpeg.h ones these calls need.

use std::ffi::{c_int, c_uchar, c_void};

use libloading::Library;

/// `nvjpegHandle_t`, `nvjpegJpegState_t`: opaque pointers.
type Handle = *mut c_void;
type State = *mut c_void;

/// nvjpeg.h's `NVJPEG_MAX_COMPONENT`.
const MAX_COMPONENT: usize = 4;

/// `nvjpegImage_t`: a plane pointer and pitch a component (interleaved output uses the first only).
#[repr(C)]
struct Image {
    channel: [*mut c_uchar; MAX_COMPONENT],
    pitch: [usize; MAX_COMPONENT],
}

/// `nvjpegOutputFormat_t::NVJPEG_OUTPUT_RGBI`: interleaved RGB in `channel[0]`.
const OUTPUT_RGBI: c_int = 5;
/// `nvjpegChromaSubsampling_t` values nvJPEG reports for the layouts it decodes (4:4:4 … 4:1:0, grey).
const CSS_GRAY: c_int = 6;
const CSS_UNKNOWN: c_int = -1;

type Create = unsafe extern "C" fn(*mut Handle) -> c_int;
type Destroy = unsafe extern "C" fn(Handle) -> c_int;
type StateCreate = unsafe extern "C" fn(Handle, *mut State) -> c_int;
type StateDestroy = unsafe extern "C" fn(State) -> c_int;
type GetImageInfo =
    unsafe extern "C" fn(Handle, *const c_uchar, usize, *mut c_int, *mut c_int, *mut c_int, *mut c_int) -> c_int;
type Decode = unsafe extern "C" fn(Handle, State, *const c_uchar, usize, c_int, *mut Image, *mut c_void) -> c_int;

/// nvjpeg.h's `nvjpegStatus_t`, in words.
fn status(code: c_int) -> String {
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
struct Fns {
    destroy: Destroy,
    state_create: StateCreate,
    state_destroy: StateDestroy,
    get_image_info: GetImageInfo,
    decode: Decode,
}

/// The library and one handle on the default backend.
pub struct Nvjpeg {
    /// Keeps the library loaded while `fns` point into it.
    _lib: Library,
    fns: Fns,
    handle: Handle,
    /// Where it was loaded from, for the one line that says which decoder ran.
    pub name: String,
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
        // SAFETY: the handle was created by nvjpegCreateSimple; every state made from it belongs to a slot of the
        // engine that owns this `Nvjpeg` and is dropped first (the engine drops its slots before this).
        unsafe { (self.fns.destroy)(self.handle) };
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
    /// Loads nvJPEG and creates a handle, with the CUDA context that will run its decodes current on this
    /// thread; or one line saying why not.
    pub fn load() -> Result<Nvjpeg, String> {
        let names = ["libnvjpeg.so.13", "/usr/local/cuda/lib64/libnvjpeg.so.13"];
        let mut why = Vec::new();
        for name in names {
            // SAFETY: loading NVIDIA's nvJPEG runs its initialisers, which have no preconditions.
            match unsafe { Library::new(name) } {
                Ok(lib) => {
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
                    let mut handle: Handle = std::ptr::null_mut();
                    // SAFETY: `handle` is written on success.
                    match unsafe { create(&mut handle) } {
                        0 => return Ok(Nvjpeg { _lib: lib, fns, handle, name: name.to_string() }),
                        code => return Err(status(code)),
                    }
                }
                Err(e) => why.push(e.to_string()),
            }
        }
        Err(format!("no nvJPEG (libnvjpeg.so.13 not found: {})", why.first().cloned().unwrap_or_default()))
    }

    /// A decode state for one slot.
    pub fn state(&self) -> Result<DecodeState, String> {
        let mut state: State = std::ptr::null_mut();
        // SAFETY: the handle is live; `state` is written on success.
        match unsafe { (self.fns.state_create)(self.handle, &mut state) } {
            0 => Ok(DecodeState { state, destroy: self.fns.state_destroy }),
            code => Err(status(code)),
        }
    }

    /// The size of the JPEG in `bytes`, or why nvJPEG will not decode it here (it cannot parse it, or its
    /// colour layout is one it does not convert to RGB: CMYK, unknown subsampling).
    pub fn info(&self, bytes: &[u8]) -> Result<Info, String> {
        let (mut components, mut subsampling) = (0 as c_int, 0 as c_int);
        let (mut widths, mut heights) = ([0 as c_int; MAX_COMPONENT], [0 as c_int; MAX_COMPONENT]);
        // SAFETY: the handle is live; `bytes` is read only; the arrays have NVJPEG_MAX_COMPONENT entries.
        let code = unsafe {
            (self.fns.get_image_info)(
                self.handle,
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
        let mut image = Image {
            channel: [rgb as *mut c_uchar, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()],
            pitch: [3 * info.width as usize, 0, 0, 0],
        };
        // SAFETY: the caller guarantees the output buffer and the stream; the state is this thread's alone (`&mut`).
        let code = unsafe {
            (self.fns.decode)(
                self.handle,
                state.state,
                bytes.as_ptr(),
                bytes.len(),
                OUTPUT_RGBI,
                &mut image,
                stream.cast(),
            )
        };
        match code {
            0 => Ok(()),
            code => Err(status(code)),
        }
    }
}
