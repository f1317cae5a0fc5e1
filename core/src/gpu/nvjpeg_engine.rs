//! The GPU's JPEG engine (A100, H100, H200: nvJPEG's `NVJPEG_BACKEND_HARDWARE`) through nvJPEG, loaded by
//! [`super::nvjpeg::Nvjpeg::load`]: its handle, one batched-decode state and one header parser, for
//! [`super::jpeg_batch`]'s calls of several JPEGs at once. The declarations below are the nvjpeg.h ones these calls
//! need beyond the default backend's.

use std::ffi::{c_int, c_uchar, c_void};
use std::sync::Arc;

use cudarc::driver::CudaContext;
use libloading::Library;

use super::nvjpeg::{status, Destroy, Fns, Handle, Image, JpegStream, State, StateDestroy, OUTPUT_RGBI};

/// `nvjpegBackend_t::NVJPEG_BACKEND_HARDWARE`: the GPU's JPEG engine.
const BACKEND_HARDWARE: c_int = 3;

type CreateEx = unsafe extern "C" fn(c_int, *const c_void, *const c_void, u32, *mut Handle) -> c_int;
type BatchedInitialize = unsafe extern "C" fn(Handle, State, c_int, c_int, c_int) -> c_int;
type DecodeBatched =
    unsafe extern "C" fn(Handle, State, *const *const c_uchar, *const usize, *mut Image, *mut c_void) -> c_int;
type StreamCreate = unsafe extern "C" fn(Handle, *mut JpegStream) -> c_int;
type StreamDestroy = unsafe extern "C" fn(JpegStream) -> c_int;
type ParseHeader = unsafe extern "C" fn(Handle, *const c_uchar, usize, JpegStream) -> c_int;
type BatchedSupported = unsafe extern "C" fn(Handle, JpegStream, *mut c_int) -> c_int;
type HardwareDecoderInfo = unsafe extern "C" fn(Handle, *mut std::ffi::c_uint, *mut std::ffi::c_uint) -> c_int;

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

/// A handle on the GPU's JPEG engine with one batched-decode state and one header parser: used by one thread
/// at a time ([`super::jpeg_batch::Batcher`] holds it behind its lock).
pub struct Hardware {
    fns: HardwareFns,
    pub(super) handle: Handle,
    state: State,
    parser: JpegStream,
    /// The batch size the state was last initialised for (a call of another size initialises it again: measured
    /// free, under 0.1 ms).
    batch: c_int,
    /// How many JPEGs the engine decodes side by side: its decoders × their cores (7 × 1 on the H100), or 1 where
    /// nvJPEG does not say.
    pub width: usize,
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
    pub(super) fn open(lib: &Library, common: &Fns, ctx: &Arc<CudaContext>) -> Result<Hardware, String> {
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
        let (mut engines, mut cores) = (0, 0);
        // SAFETY: the signature of nvjpeg.h (CUDA 13); the handle is live; both outputs are written on success.
        let width = match unsafe { lib.get::<HardwareDecoderInfo>(b"nvjpegGetHardwareDecoderInfo\0") } {
            Ok(info) if unsafe { info(handle, &mut engines, &mut cores) } == 0 => (engines * cores).max(1) as usize,
            _ => 1,
        };
        crate::trace::mark(&format!("nvJPEG: the JPEG engine has {engines} decoder(s) × {cores} core(s)"));
        let hardware =
            Hardware { fns, handle, state, parser, batch: 0, width, state_destroy, destroy, ctx: ctx.clone() };
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
