//! nvCOMP, NVIDIA's GPU compression library, for one thing: inflating many PNGs' image data at once
//! (batched deflate decompression). Loaded at run time like NVRTC, NPP and nvJPEG: `libnvcomp.so.6` from the
//! `nvidia-libnvcomp-cu13` wheel (its `nvidia/libnvcomp/lib64` on `LD_LIBRARY_PATH`) or wherever the loader
//! finds it. Absent, batch inflates PNGs on the CPU as before and one line says why ([`Nvcomp::load`]'s error).
//!
//! Why batched: nvCOMP inflates each deflate stream with one warp, and a stream is sequential (every symbol's
//! position depends on the one before), so one PNG inflates at ~12 MB/s whatever the GPU — half a second for a
//! 2048×1024 image — and the rate comes only from many images at once: 2048×1024 PNGs on the H200, 31 images/s
//! 16 a call, 491 at 256, 1655 at 1024, 2218 at 2048, against 649–685 for zlib on 16 cores. So [`crate::batch`] hands it whole waves of PNGs ([`Wave`]).
//!
//! The declarations below are the few nvcomp/deflate.h ones these calls need (nvCOMP 6).

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaView, DevicePtr, DevicePtrMut, PinnedHostSlice};
use libloading::Library;
use rayon::prelude::*;

use super::GpuError;

/// `nvcompBatchedDeflateDecompressOpts_t`: the backend (0: the library's choice; the GPU's decompression engine
/// where there is one, else CUDA cores), whether to sort chunks for that engine, and reserved bytes that must be 0.
#[repr(C)]
#[derive(Clone, Copy)]
struct DecompressOpts {
    backend: c_int,
    sort_before_hw_decompress: c_int,
    reserved: [c_char; 56],
}

const DEFAULT_OPTS: DecompressOpts = DecompressOpts { backend: 0, sort_before_hw_decompress: 0, reserved: [0; 56] };

/// `nvcompStatus_t` (a C enum: an int).
type Status = c_int;
/// `cudaStream_t`, which is the driver's `CUstream`.
type Stream = cudarc::driver::sys::CUstream;

/// nvcompBatchedDeflateDecompressGetTempSize(num_chunks, max_uncompressed_chunk_bytes, opts, *temp_bytes,
/// max_total_uncompressed_bytes, stream)
type GetTempSize = unsafe extern "C" fn(usize, usize, DecompressOpts, *mut usize, usize, Stream) -> Status;
/// nvcompBatchedDeflateDecompressAsync(compressed_ptrs, compressed_bytes, buffer_bytes, *uncompressed_bytes,
/// num_chunks, temp, temp_bytes, uncompressed_ptrs, opts, *statuses, stream) — every pointer a device address.
type DecompressAsync = unsafe extern "C" fn(
    *const *const c_void,
    *const usize,
    *const usize,
    *mut usize,
    usize,
    *mut c_void,
    usize,
    *const *mut c_void,
    DecompressOpts,
    *mut Status,
    Stream,
) -> Status;

/// nvcomp's `nvcompStatus_t`, in words.
fn status(code: Status) -> String {
    let what = match code {
        0 => "success",
        10 => "invalid value",
        11 => "not supported",
        12 => "cannot decompress",
        15 => "output buffer too small",
        17 => "misaligned buffer",
        18 => "chunk too large",
        20 => "wrong input length",
        21 => "batch too large",
        1000 => "CUDA error",
        10000 => "internal error",
        _ => "unknown status",
    };
    format!("nvCOMP: {what} ({code})")
}

/// Start of each deflate stream and each output in the wave's buffers: nvCOMP asks for 4-byte alignment
/// (`nvcompDeflateRequiredDecompressionAlignment`); 256 is what the driver's allocations have.
const ALIGN: usize = 256;

/// A wave's streams and nvCOMP's scratch, the addresses of streams and outputs, the lengths and the outputs' room.
type WaveInputs = ([CudaSlice<u8>; 2], [CudaSlice<u64>; 2], [CudaSlice<usize>; 2]);

/// The library, its two entry points looked up once.
pub struct Nvcomp {
    get_temp_size: GetTempSize,
    decompress: DecompressAsync,
    /// Where it was loaded from, for the one line that says which inflater ran.
    pub name: String,
    /// Keeps the library loaded while the entry points point into it: the last field, dropped last.
    _lib: Library,
}

/// One wave of PNGs' image data being inflated on the device: their deflate streams in one buffer, their
/// inflated rows in another, each at its own offset. Made by [`Nvcomp::inflate`]; [`Wave::finish`] waits
/// for it and says which inflated to exactly the size expected.
pub struct Wave {
    stream: Arc<CudaStream>,
    rows: CudaSlice<u8>,
    /// Each image's (offset, bytes) in `rows`.
    places: Vec<(usize, usize)>,
    statuses: CudaSlice<i32>,
    produced: CudaSlice<usize>,
    /// The other device buffers the call reads (streams, their addresses and lengths, the outputs' room and
    /// addresses, nvCOMP's scratch), kept until it has run.
    _inputs: WaveInputs,
}

impl Nvcomp {
    /// Loads `libnvcomp.so.6` (the wheel's or the loader's), or says why not in one line.
    pub fn load() -> Result<Nvcomp, String> {
        let names = ["libnvcomp.so.6", "libnvcomp.so"];
        let mut last = String::new();
        for name in names {
            // SAFETY: loading a shared library runs its initialisers; nvCOMP's only set up its own state.
            match unsafe { Library::new(name) } {
                Ok(lib) => {
                    // SAFETY: the symbols have the C signatures declared above (nvcomp/deflate.h, nvCOMP 6).
                    let fns = unsafe {
                        (
                            lib.get::<GetTempSize>(b"nvcompBatchedDeflateDecompressGetTempSize\0").map(|s| *s),
                            lib.get::<DecompressAsync>(b"nvcompBatchedDeflateDecompressAsync\0").map(|s| *s),
                        )
                    };
                    return match fns {
                        (Ok(get_temp_size), Ok(decompress)) => {
                            Ok(Nvcomp { get_temp_size, decompress, name: name.to_string(), _lib: lib })
                        }
                        _ => Err(format!("{name} lacks nvCOMP 6's batched deflate calls")),
                    };
                }
                Err(e) => last = e.to_string(),
            }
        }
        Err(format!("no nvCOMP ({last}; pip install nvidia-libnvcomp-cu13 and put its lib64 on LD_LIBRARY_PATH)"))
    }

    /// Queues the inflating of `streams` — raw deflate streams (a zlib stream less its 2-byte header), each
    /// expected to inflate to `sizes[i]` bytes — on `stream`, all in one call: uploaded, inflated into one
    /// device buffer. Returns at once; [`Wave::finish`] waits.
    ///
    /// The streams go up through `staging`, pinned host memory kept from wave to wave (grown when a wave needs
    /// more): pageable memory uploads at a fifth of the speed and allocating pinned memory costs more than the
    /// copy. They are copied into it in parallel.
    pub fn inflate(
        &self,
        stream: &Arc<CudaStream>,
        staging: &mut Option<PinnedHostSlice<u8>>,
        streams: &[&[u8]],
        sizes: &[usize],
    ) -> Result<Wave, GpuError> {
        assert_eq!(streams.len(), sizes.len(), "a size for each stream");
        let place = |lens: &mut dyn Iterator<Item = usize>| {
            let mut end = 0;
            lens.map(|n| {
                let at = end;
                end = (at + n).next_multiple_of(ALIGN);
                (at, n)
            })
            .collect::<Vec<_>>()
        };
        let inputs = place(&mut streams.iter().map(|s| s.len()));
        let places = place(&mut sizes.iter().copied());
        let total = |p: &[(usize, usize)]| p.last().map_or(0, |&(at, n)| at + n).max(1);
        let bytes = total(&inputs);
        if staging.as_ref().is_none_or(|p| p.len() < bytes) {
            *staging = None; // the old buffer freed first
                             // SAFETY (pinned allocation): only the bytes written just below are uploaded.
            *staging = Some(unsafe {
                stream
                    .context()
                    .alloc_pinned_with_flags(bytes + bytes / 4, cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED)?
            });
        }
        let pinned = staging.as_mut().expect("just set");
        {
            // (as_mut_slice waits for the previous wave's upload from this buffer.)
            let mut rest = &mut pinned.as_mut_slice()?[..bytes];
            let mut parts = Vec::with_capacity(streams.len());
            let mut offset = 0;
            for &(at, n) in &inputs {
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(at - offset);
                let (part, tail) = tail.split_at_mut(n);
                parts.push(part);
                rest = tail;
                offset = at + n;
            }
            parts.into_par_iter().zip(streams).for_each(|(part, s)| part.copy_from_slice(s));
        }
        // SAFETY: uploaded in full just below, before the inflate reads it.
        let mut compressed = unsafe { stream.alloc::<u8>(bytes)? };
        {
            let src = &pinned.as_slice()?[..bytes];
            let (dst, _record) = compressed.device_ptr_mut(stream);
            // SAFETY: `compressed` holds `bytes` bytes; `src` (pinned) stays untouched until the copy has run: the
            // stream is synchronised just below, before this function returns and the buffer can be written again.
            unsafe { cudarc::driver::result::memcpy_htod_async(dst, src, stream.cu_stream()) }?;
        }
        stream.synchronize()?;
        // SAFETY: the rows are written by the inflate below (the bytes of an image it failed on are never read:
        // `finish` refuses it); statuses and sizes likewise, for every stream.
        let (mut rows, mut statuses, mut produced) = unsafe {
            (
                stream.alloc::<u8>(total(&places))?,
                stream.alloc::<i32>(sizes.len())?,
                stream.alloc::<usize>(sizes.len())?,
            )
        };
        let address = |s: &CudaSlice<u8>| s.device_ptr(stream).0;
        let (c0, r0) = (address(&compressed), address(&rows));
        let in_ptrs = stream.clone_htod(&inputs.iter().map(|&(at, _)| c0 + at as u64).collect::<Vec<_>>())?;
        let in_bytes = stream.clone_htod(&inputs.iter().map(|&(_, n)| n).collect::<Vec<_>>())?;
        let out_bytes = stream.clone_htod(sizes)?;
        let out_ptrs = stream.clone_htod(&places.iter().map(|&(at, _)| r0 + at as u64).collect::<Vec<_>>())?;
        let largest = sizes.iter().copied().max().unwrap_or(0);
        let mut temp_bytes = 0usize;
        // SAFETY: writes one size_t through a valid pointer.
        let code = unsafe {
            (self.get_temp_size)(
                sizes.len(),
                largest,
                DEFAULT_OPTS,
                &mut temp_bytes,
                sizes.iter().sum(),
                stream.cu_stream(),
            )
        };
        if code != 0 {
            return Err(GpuError::Peer(status(code)));
        }
        // SAFETY: scratch nvCOMP writes before it reads.
        let mut temp = unsafe { stream.alloc::<u8>(temp_bytes.max(1))? };
        {
            let (ip, _r1) = in_ptrs.device_ptr(stream);
            let (ib, _r2) = in_bytes.device_ptr(stream);
            let (ob, _r3) = out_bytes.device_ptr(stream);
            let (op, _r4) = out_ptrs.device_ptr(stream);
            let (pr, _w1) = produced.device_ptr_mut(stream);
            let (st, _w2) = statuses.device_ptr_mut(stream);
            let (tp, _w3) = temp.device_ptr_mut(stream);
            let (_, _w4) = rows.device_ptr_mut(stream);
            let (_, _r5) = compressed.device_ptr(stream);
            // SAFETY: every pointer is a device address of a buffer on this context, alive until the wave is dropped
            // (which waits for the call: `finish` synchronises the stream, and the buffers are freed after it):
            // `sizes.len()` stream pointers into `compressed` with their lengths, as many output pointers into
            // `rows` each with room for its size, statuses and produced sizes, and `temp_bytes` of scratch as
            // nvCOMP asked. nvCOMP writes no output beyond a stream's given room (it reports "output buffer too
            // small" instead).
            let code = unsafe {
                (self.decompress)(
                    ip as *const *const c_void,
                    ib as *const usize,
                    ob as *const usize,
                    pr as *mut usize,
                    sizes.len(),
                    tp as *mut c_void,
                    temp_bytes,
                    op as *const *mut c_void,
                    DEFAULT_OPTS,
                    st as *mut Status,
                    stream.cu_stream(),
                )
            };
            if code != 0 {
                return Err(GpuError::Peer(status(code)));
            }
        }
        Ok(Wave {
            stream: stream.clone(),
            rows,
            places,
            statuses,
            produced,
            _inputs: ([compressed, temp], [in_ptrs, out_ptrs], [in_bytes, out_bytes]),
        })
    }
}

impl Wave {
    /// Waits for the wave; for each stream, `Ok` when it inflated to exactly the size expected, else why not
    /// in one line (nvCOMP's status, or the size it reached).
    pub fn finish(&self) -> Result<Vec<Result<(), String>>, GpuError> {
        // Waited for asleep first: the copies below go to pageable memory, which the driver makes synchronous, and
        // while one of them waited for nvCOMP's kernel the producer's driver calls (the next wave's allocations) waited
        // with it, 130-275 ms a wave; with this wait they no longer did (H100;
        // the whole command by the clock within the spread).
        self.stream.synchronize()?;
        let statuses = self.stream.clone_dtoh(&self.statuses)?;
        let produced = self.stream.clone_dtoh(&self.produced)?;
        Ok(statuses
            .iter()
            .zip(&produced)
            .zip(&self.places)
            .map(|((&code, &got), &(_, expected))| match code {
                0 if got == expected => Ok(()),
                0 => Err(format!("nvCOMP inflated {got} of {expected} bytes")),
                _ => Err(status(code)),
            })
            .collect())
    }

    /// Image `i`'s inflated bytes on the device (read them only after [`Wave::finish`] said `Ok` for it).
    pub fn rows(&self, i: usize) -> CudaView<'_, u8> {
        let (at, n) = self.places[i];
        self.rows.slice(at..at + n)
    }
}
