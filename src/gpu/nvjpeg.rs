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
//! a call, 870 sixteen (docs/performance.md v0.30) — while calls from several threads take turns. So slots do not
//! call it each on their own: [`super::jpeg_batch`] gathers the JPEGs the slots have waiting into one call.
//! The engine's calls need the CUDA context current on the calling thread; without it they fail with
//! "allocator failure" (measured: the reason v0.27 found the engine unusable).

use std::ffi::{c_int, c_uchar, c_void};

use std::sync::Arc;

use cudarc::driver::CudaContext;
use libloading::Library;

/// `nvjpegHandle_t`, `nvjpegJpegState_t`: opaque pointers.
type Handle = *mut c_void;
type State = *mut c_void;
/// `nvjpegJpegStream_t`: a parsed header, opaque.
type JpegStream = *mut c_void;

/// nvjpeg.h's `NVJPEG_MAX_COMPONENT`.
const MAX_COMPONENT: usize = 4;

/// `nvjpegImage_t`: a plane pointer and pitch a component (interleaved output uses the first only).
#[repr(C)]
struct Image {
    channel: [*mut c_uchar; MAX_COMPONENT],
    pitch: [usize; MAX_COMPONENT],
}

impl Image {
    /// Packed 8-bit RGB (`NVJPEG_OUTPUT_RGBI`) of a `width`-pixel-wide image at device address `rgb`.
    fn packed_rgb(rgb: cudarc::driver::sys::CUdeviceptr, width: u32) -> Image {
        let none = std::ptr::null_mut();
        Image { channel: [rgb as *mut c_uchar, none, none, none], pitch: [3 * width as usize, 0, 0, 0] }
    }
}

/// `nvjpegOutputFormat_t::NVJPEG_OUTPUT_RGBI`: interleaved RGB in `channel[0]`.
const OUTPUT_RGBI: c_int = 5;
/// `nvjpegBackend_t::NVJPEG_BACKEND_HARDWARE`: the GPU's JPEG engine.
const BACKEND_HARDWARE: c_int = 3;
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
type CreateEx = unsafe extern "C" fn(c_int, *const c_void, *const c_void, u32, *mut Handle) -> c_int;
type BatchedInitialize = unsafe extern "C" fn(Handle, State, c_int, c_int, c_int) -> c_int;
type DecodeBatched =
    unsafe extern "C" fn(Handle, State, *const *const c_uchar, *const usize, *mut Image, *mut c_void) -> c_int;
type StreamCreate = unsafe extern "C" fn(Handle, *mut JpegStream) -> c_int;
type StreamDestroy = unsafe extern "C" fn(JpegStream) -> c_int;
type ParseHeader = unsafe extern "C" fn(Handle, *const c_uchar, usize, JpegStream) -> c_int;
type BatchedSupported = unsafe extern "C" fn(Handle, JpegStream, *mut c_int) -> c_int;

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

/// The hardware engine's entry points.
struct HardwareFns {
    create_ex: CreateEx,
    batched_initialize: BatchedInitialize,
    decode_batched: DecodeBatched,
    stream_create: StreamCreate,
    stream_destroy: StreamDestroy,
    parse_header: ParseHeader,
    batched_supported: BatchedSupported,
}

/// The library and one handle on the default backend.
pub struct Nvjpeg {
    /// The GPU's JPEG engine, or why it is not used. (Fields drop in this order: the engine's handle before the
    /// library its entry points live in.)
    pub hardware: Result<super::jpeg_batch::Batcher, String>,
    fns: Fns,
    handle: Handle,
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
                    let mut handle: Handle = std::ptr::null_mut();
                    // SAFETY: `handle` is written on success.
                    match unsafe { create(&mut handle) } {
                        0 => {}
                        code => return Err(status(code)),
                    }
                    crate::trace::mark("nvJPEG: default handle made");
                    let hardware = if engine {
                        Hardware::open(&lib, &fns, ctx).map(super::jpeg_batch::Batcher::new)
                    } else {
                        Err("one JPEG at a time: the JPEG engine pays only for many a call".to_string())
                    };
                    return Ok(Nvjpeg { hardware, fns, handle, name: name.to_string(), _lib: lib });
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
        let mut image = Image::packed_rgb(rgb, info.width);
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

/// A handle on the GPU's JPEG engine with one batched-decode state and one header parser: used by one thread
/// at a time ([`super::jpeg_batch::Batcher`] holds it behind its lock).
pub struct Hardware {
    fns: HardwareFns,
    handle: Handle,
    state: State,
    parser: JpegStream,
    /// The batch size the state was last initialised for (a call of another size initialises it again).
    batch: c_int,
    state_destroy: StateDestroy,
    destroy: Destroy,
    /// The context the engine's memory lives in: kept alive, and made current, until the handle is destroyed.
    ctx: Arc<CudaContext>,
}

// SAFETY: the handle, state and parser are used by one thread at a time (`&mut self` for every call); nvJPEG
// allows a handle's use from any thread with the context current, which the callers make sure of.
unsafe impl Send for Hardware {}

impl Drop for Hardware {
    fn drop(&mut self) {
        // The engine's calls, its teardown included, need the context current on the calling thread.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: each was created once in `open` and is destroyed once, the handle last.
        unsafe {
            (self.fns.stream_destroy)(self.parser);
            (self.state_destroy)(self.state);
            (self.destroy)(self.handle);
        }
    }
}

impl Hardware {
    /// The engine's handle, or why there is none (no engine on this GPU: nvJPEG says "architecture mismatch").
    /// `common`: the entry points the default handle uses, looked up already (create and destroy states,
    /// destroy a handle).
    fn open(lib: &Library, common: &Fns, ctx: &Arc<CudaContext>) -> Result<Hardware, String> {
        let missing = |e: libloading::Error| format!("nvJPEG: {e}");
        // SAFETY: each symbol has the signature declared above (nvjpeg.h, CUDA 13); the library outlives them
        // (`Nvjpeg` keeps it and drops its `Hardware` first).
        let fns = unsafe {
            HardwareFns {
                create_ex: *lib.get(b"nvjpegCreateEx\0").map_err(missing)?,
                batched_initialize: *lib.get(b"nvjpegDecodeBatchedInitialize\0").map_err(missing)?,
                decode_batched: *lib.get(b"nvjpegDecodeBatched\0").map_err(missing)?,
                stream_create: *lib.get(b"nvjpegJpegStreamCreate\0").map_err(missing)?,
                stream_destroy: *lib.get(b"nvjpegJpegStreamDestroy\0").map_err(missing)?,
                parse_header: *lib.get(b"nvjpegJpegStreamParseHeader\0").map_err(missing)?,
                batched_supported: *lib.get(b"nvjpegDecodeBatchedSupported\0").map_err(missing)?,
            }
        };
        let (destroy, state_destroy) = (common.destroy, common.state_destroy);
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: null allocators mean nvJPEG's own (cudaMalloc, cudaHostAlloc); `handle` is written on success.
        match unsafe { (fns.create_ex)(BACKEND_HARDWARE, std::ptr::null(), std::ptr::null(), 0, &mut handle) } {
            0 => {}
            7 => return Err("no JPEG engine on this GPU".into()),
            code => return Err(status(code)),
        }
        let (mut state, mut parser): (State, JpegStream) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: the handle is live; each output is written on success.
        let made = unsafe { ((common.state_create)(handle, &mut state), (fns.stream_create)(handle, &mut parser)) };
        let hardware = Hardware { fns, handle, state, parser, batch: 0, state_destroy, destroy, ctx: ctx.clone() };
        match made {
            (0, 0) => Ok(hardware),
            (0, code) | (code, _) => Err(status(code)), // dropping `hardware` frees what was made
        }
    }

    /// Whether the engine decodes `bytes` (a baseline JPEG it supports; progressive ones it does not).
    pub fn supports(&mut self, bytes: &[u8]) -> bool {
        let mut supported: c_int = -1;
        // SAFETY: the handle and parser are live and this thread's (`&mut self`); `bytes` is only read.
        let parsed = unsafe {
            (self.fns.parse_header)(self.handle, bytes.as_ptr(), bytes.len(), self.parser) == 0
                && (self.fns.batched_supported)(self.handle, self.parser, &mut supported) == 0
        };
        parsed && supported == 0
    }

    /// Decodes each JPEG of `jobs` into its packed-RGB device buffer in one call on `stream`, and waits for it.
    ///
    /// # Safety
    /// The context must be current on this thread; each job's `bytes` must stay valid, and its `rgb` be device
    /// memory of that context with room for `3 · width · height` bytes that nothing else uses, until this returns.
    pub unsafe fn decode(&mut self, jobs: &[Job], stream: cudarc::driver::sys::CUstream) -> Result<(), String> {
        let data: Vec<*const c_uchar> = jobs.iter().map(|j| j.bytes).collect();
        let lengths: Vec<usize> = jobs.iter().map(|j| j.len).collect();
        let mut images: Vec<Image> = jobs.iter().map(|j| Image::packed_rgb(j.rgb, j.width)).collect();
        let n = jobs.len() as c_int;
        // SAFETY: the state is this thread's (`&mut self`); the arrays hold `n` entries each; the caller
        // guarantees the context, the inputs and the outputs.
        let code = unsafe {
            let initialised = match n == self.batch {
                true => 0,
                false => (self.fns.batched_initialize)(self.handle, self.state, n, 1, OUTPUT_RGBI),
            };
            self.batch = if initialised == 0 { n } else { 0 };
            match initialised {
                0 => (self.fns.decode_batched)(
                    self.handle,
                    self.state,
                    data.as_ptr(),
                    lengths.as_ptr(),
                    images.as_mut_ptr(),
                    stream.cast(),
                ),
                code => code,
            }
        };
        if code != 0 {
            return Err(status(code));
        }
        // SAFETY: a live stream of the current context.
        unsafe { cudarc::driver::result::stream::synchronize(stream) }.map_err(|e| format!("nvJPEG engine: {e}"))
    }
}

/// One JPEG for the engine: its bytes and the device buffer its packed RGB goes to.
#[derive(Clone, Copy)]
pub struct Job {
    /// The file's bytes.
    pub bytes: *const c_uchar,
    /// How many.
    pub len: usize,
    /// Its width in pixels (the output's pitch is three times it).
    pub width: u32,
    /// The output: `3 · width · height` bytes of device memory.
    pub rgb: cudarc::driver::sys::CUdeviceptr,
}

// SAFETY: a job's pointers are handed to the thread that decodes the batch while the job's owner waits for
// the result (see jpeg_batch::Batcher::decode), so what they point at outlives their use there.
unsafe impl Send for Job {}
