//! PNGs inflated on the GPU by nvCOMP, a wave at a time (batch mode): loading it, where PNGs are inflated, and
//! one PNG's edges from a wave through a slot.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaStream, PinnedHostSlice};

use super::{Engine, EngineError};
use crate::gpu::nvcomp::Nvcomp;
pub use crate::gpu::nvcomp::Wave;
use crate::gpu::slots::{Edges, Want};
use crate::gpu::{variants, GpuError};
use crate::sobel::Filter;

/// Where batch inflates PNGs (`--png-inflate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PngInflate {
    /// The CPU (the png crate's inflate), the filters undone on the GPU: level with [`PngInflate::Gpu`] on the
    /// H100 host with 16 cores, and needing no other library.
    #[default]
    Cpu,
    /// nvCOMP on the GPU, hundreds of PNGs at once, taken from the back of the list while the workers inflate
    /// others from its front on the CPU; the command refuses to start without nvCOMP.
    Gpu,
}

impl PngInflate {
    /// Every choice, in `--help`'s order.
    pub const ALL: [PngInflate; 2] = [PngInflate::Cpu, PngInflate::Gpu];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PngInflate::Cpu => "cpu",
            PngInflate::Gpu => "gpu",
        }
    }
}

/// nvCOMP, the streams its waves run on, and the pinned buffer they go up through.
pub(super) struct Inflater {
    nvcomp: Nvcomp,
    streams: Vec<Arc<CudaStream>>,
    staging: Mutex<Option<PinnedHostSlice<u8>>>,
}

/// Makes the device's memory pool keep what is freed instead of giving it back to the driver at the next
/// synchronisation: every wave allocates gigabytes (its streams and rows) and frees them, and mapping them afresh
/// each time cost more than the inflate (measured: ~0.8 s a wave of 512 2048×1024 PNGs, the inflate 0.24 s).
fn keep_freed_device_memory(gpu: &crate::gpu::Gpu) -> Result<(), cudarc::driver::DriverError> {
    use cudarc::driver::sys;
    gpu.ctx.bind_to_thread()?;
    let mut pool = std::ptr::null_mut();
    let mut threshold = u64::MAX;
    // SAFETY: the device is this context's; the pool handle is written by the first call and read by the second,
    // whose value points at a u64, as the attribute requires.
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, gpu.ctx.cu_device()).result()?;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut threshold as *mut u64 as *mut std::ffi::c_void,
        )
        .result()
    }
}

impl Engine {
    /// Loads nvCOMP for [`Engine::inflate`], with `streams` streams for its waves; its absence is kept as the
    /// reason ([`Engine::png_inflater`]), not an error: PNGs are then inflated on the CPU.
    pub fn with_nvcomp(mut self, streams: usize) -> Engine {
        if let Some(gpu) = &self.gpu {
            let loaded = Nvcomp::load().and_then(|nvcomp| {
                let streams = (0..streams.max(1))
                    .map(|_| gpu.ctx.new_stream())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("a stream for nvCOMP: {e}"))?;
                keep_freed_device_memory(gpu).map_err(|e| format!("the device's memory pool: {e}"))?;
                gpu.wait_asleep().map_err(|e| format!("the context's synchronisation: {e}"))?;
                Ok(Inflater { nvcomp, streams, staging: Mutex::new(None) })
            });
            crate::trace::mark("nvCOMP loaded");
            self.nvcomp = Some(loaded);
        }
        self
    }

    /// Where [`Engine::inflate`] inflates: nvCOMP's library, or why PNGs are inflated on the CPU.
    pub fn png_inflater(&self) -> Result<String, String> {
        match &self.nvcomp {
            Some(Ok(i)) => Ok(i.nvcomp.name.clone()),
            Some(Err(why)) => Err(why.clone()),
            None if self.slots.is_none() => Err("GPU inflating needs a GPU and batch slots".into()),
            None => Err("not asked for".into()),
        }
    }

    /// Queues one wave of deflate streams on nvCOMP's stream number `stream` (modulo their count;
    /// [`Nvcomp::inflate`]); `None` without nvCOMP.
    pub fn inflate(&self, stream: usize, streams: &[&[u8]], sizes: &[usize]) -> Result<Option<Wave>, EngineError> {
        let (Some(gpu), Some(Ok(inflater))) = (&self.gpu, &self.nvcomp) else { return Ok(None) };
        // nvCOMP launches through the CUDA runtime, in the thread's current context.
        gpu.ctx.bind_to_thread().map_err(GpuError::from)?;
        let on = &inflater.streams[stream % inflater.streams.len()];
        let mut staging = inflater.staging.lock().expect("no panic while locked");
        Ok(Some(inflater.nvcomp.inflate(on, &mut staging, streams, sizes)?))
    }

    /// Device memory free now, in bytes; `None` without a GPU.
    pub fn free_device_bytes(&self) -> Option<usize> {
        let gpu = self.gpu.as_ref()?;
        gpu.ctx.bind_to_thread().ok()?;
        cudarc::driver::result::mem_get_info().ok().map(|(free, _)| free)
    }

    /// The edge image of image `i` of `wave` (finished, and `Ok` for it), `width × height` of `bytes_per_pixel`,
    /// through a slot ([`crate::gpu::slots::Slot::run_inflated`]); `None` when the image is too large for a slot
    /// (the caller then takes the CPU's path).
    pub fn sobel_inflated(
        &self,
        wave: &Wave,
        i: usize,
        size: (u32, u32, usize),
        filter: Filter,
        want: Want,
    ) -> Result<Option<Edges>, EngineError> {
        let (Some(_), Some(pool)) = (&self.gpu, &self.slots) else { return Ok(None) };
        if !self.fits_a_slot(size.0, size.1, want) {
            return Ok(None);
        }
        Ok(Some(pool.with_slot(|slot| slot.run_inflated(&wave.rows(i), size, filter, want))?))
    }

    /// Whether a `width × height` image goes through a slot in one pass for `want` (else outside the slots: the
    /// edges in bands, Canny's gradients in bands and its hysteresis on the CPU).
    pub fn fits_a_slot(&self, width: u32, height: u32, want: Want) -> bool {
        let Some(g) = &self.gpu else { return false };
        variants::fits_a_slot(g, width, height, want.canny.is_some()).unwrap_or(false)
    }
}

impl EngineError {
    /// For input the GPU found invalid ([`GpuError::BadData`]): the decoder's words, to report as the CPU's
    /// decoder would.
    pub fn bad_data(&self) -> Option<&str> {
        match self {
            EngineError::Gpu(GpuError::BadData(detail)) => Some(detail),
            _ => None,
        }
    }
}
