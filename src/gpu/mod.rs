//! The GPU side: one CUDA context and stream per run, kernels compiled and loaded once
//! ([`kernels`]), launched from one place ([`launch`]), and the variants built from them ([`variants`]).
//!
//! Opening the GPU never panics and never stops the CPU variants: a missing driver library, a missing
//! NVRTC, no device, or a compile failure each become a [`GpuError`] whose one-line message the report
//! prints as "GPU variants skipped: …".

pub mod host_pipeline;
pub mod kernels;
pub mod launch;
pub mod npp;
pub mod slots;
pub mod variants;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::sobel::Filter;
use crate::variant::timed;
use kernels::{Kernels, LoadStats};

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("no CUDA driver (libcuda.so not found: no NVIDIA driver on this machine)")]
    NoDriver,
    #[error("no NVRTC (libnvrtc.so.13 not found: install the CUDA toolkit or put its lib folder on LD_LIBRARY_PATH)")]
    NoNvrtc,
    #[error("no CUDA device visible")]
    NoDevice,
    #[error("CUDA driver: {}", describe(.0))]
    Driver(#[from] DriverError),
    #[error("the GPU variants do not support {0}")]
    Unsupported(String),
    #[error("NVRTC could not compile cuda/{module}.cu: {log}")]
    Compile { module: &'static str, log: String },
}

/// "out of memory (CUDA_ERROR_OUT_OF_MEMORY)" rather than cudarc's debug form.
fn describe(e: &DriverError) -> String {
    match (e.error_string(), e.error_name()) {
        (Ok(text), Ok(name)) => format!("{} ({})", text.to_string_lossy(), name.to_string_lossy()),
        _ => format!("{e:?}"),
    }
}

/// True when libnvrtc can be loaded (checked before any NVRTC call: cudarc panics otherwise).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library by its usual names.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// True when libcuda can be loaded.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library by its usual names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// An open GPU: context, stream, loaded kernels, and what opening them cost.
#[derive(Clone)]
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    /// The kernels for the default filter's operator and arithmetic (any border); see [`Gpu::for_filter`].
    pub kernels: Kernels,
    /// `--gpu-architecture=…` of this device.
    arch: String,
    /// Kernel sets of other operators and arithmetics, loaded when first asked for, keyed by `-D` options.
    other_kernels: Arc<Mutex<HashMap<Vec<String>, Kernels>>>,
    pub device: String,
    pub multiprocessors: i32,
    /// Context creation plus the dummy 1-byte allocation (the report's way to absorb start-up).
    pub context_init_ms: f64,
    /// NVRTC compile (or cache read) and module load of every kernel file.
    pub kernel_load_ms: f64,
    pub kernel_stats: LoadStats,
}

impl Gpu {
    /// Opens device 0. The first GPU action is a dummy 1-byte allocation that absorbs context
    /// start-up, timed on its own, as the report did.
    pub fn open() -> Result<Gpu, GpuError> {
        Gpu::open_device(0, Filter::default())
    }

    /// [`Gpu::open`], with `filter`'s kernel set loaded too (its compile or cache read counted in
    /// `kernel_load_ms` and `kernel_stats`, so that no variant's timing includes it).
    pub fn open_for(filter: Filter) -> Result<Gpu, GpuError> {
        Gpu::open_device(0, filter)
    }

    /// How many CUDA devices are visible (0 without a driver or device).
    pub fn device_count() -> usize {
        if !driver_present() {
            return 0;
        }
        CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
    }

    /// Opens device `ordinal` with `filter`'s kernels loaded; see [`Gpu::open`] and [`Gpu::open_for`].
    pub fn open_device(ordinal: usize, filter: Filter) -> Result<Gpu, GpuError> {
        if !driver_present() {
            return Err(GpuError::NoDriver);
        }
        if !nvrtc_present() {
            return Err(GpuError::NoNvrtc);
        }
        // cuInit itself fails with NO_DEVICE when no device is visible (e.g. CUDA_VISIBLE_DEVICES=).
        match CudaContext::device_count() {
            Ok(n) if n as usize > ordinal => {}
            Ok(_) | Err(DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE)) => {
                return Err(GpuError::NoDevice)
            }
            Err(e) => return Err(e.into()),
        }
        let (opened, context_init_ms) = timed(|| -> Result<_, DriverError> {
            let ctx = CudaContext::new(ordinal)?;
            let stream = ctx.default_stream();
            let dummy = stream.alloc_zeros::<u8>(1)?;
            stream.synchronize()?;
            drop(dummy);
            Ok((ctx, stream))
        });
        let (ctx, stream) = opened?;
        let device = ctx.name()?;
        let multiprocessors =
            ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let (major, minor) = ctx.compute_capability()?;
        let arch = kernels::arch_option(major, minor);
        let (loaded, kernel_load_ms) = timed(|| Kernels::load(&ctx, &arch, &[]));
        let (kernels, kernel_stats) = loaded?;
        let mut gpu = Gpu {
            ctx,
            stream,
            kernels,
            arch,
            other_kernels: Default::default(),
            device,
            multiprocessors,
            context_init_ms,
            kernel_load_ms,
            kernel_stats,
        };
        gpu.preload(filter)?;
        Ok(gpu)
    }

    /// The same GPU with `kernels` compiled for `filter`'s operator and arithmetic (the border is a
    /// kernel argument, not compiled in). The default filter's set is loaded by [`Gpu::open`]; another
    /// is compiled (or read from the PTX cache) and loaded the first time it is asked for.
    pub fn for_filter(&self, filter: Filter) -> Result<Gpu, GpuError> {
        Ok(Gpu { kernels: self.kernels_for(filter)?.0, ..self.clone() })
    }

    /// Loads `filter`'s kernel set now, counting it in `kernel_load_ms` and `kernel_stats`.
    fn preload(&mut self, filter: Filter) -> Result<(), GpuError> {
        let (loaded, ms) = timed(|| self.kernels_for(filter));
        if let (_, Some(stats)) = loaded? {
            self.kernel_load_ms += ms;
            self.kernel_stats.compiled += stats.compiled;
            self.kernel_stats.from_cache += stats.from_cache;
        }
        Ok(())
    }

    /// `filter`'s kernel set, and the load statistics when this call loaded it.
    fn kernels_for(&self, filter: Filter) -> Result<(Kernels, Option<LoadStats>), GpuError> {
        let defines = kernels::defines(filter);
        if defines.is_empty() {
            return Ok((self.kernels.clone(), None));
        }
        let mut loaded = self.other_kernels.lock().expect("no panic while holding the kernel map");
        if let Some(k) = loaded.get(&defines) {
            return Ok((k.clone(), None));
        }
        let (k, stats) = Kernels::load(&self.ctx, &self.arch, &defines)?;
        loaded.insert(defines, k.clone());
        Ok((k, Some(stats)))
    }
}

impl Gpu {
    /// The same GPU, its launches and copies going to `stream` (for work on several streams at once).
    pub fn on_stream(&self, stream: Arc<CudaStream>) -> Gpu {
        Gpu { stream, ..self.clone() }
    }
}

/// Compiles every kernel file for `filter`'s operator and arithmetic and writes `<dir>/<name>.ptx`, for
/// students to read. Needs NVRTC only; targets the device's architecture when one is visible, else
/// `compute_90` (Hopper).
pub fn emit_ptx(dir: &std::path::Path, filter: Filter) -> Result<Vec<std::path::PathBuf>, anyhow::Error> {
    use anyhow::Context as _;
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc.into());
    }
    let arch = device_arch().unwrap_or_else(|| kernels::arch_option(9, 0));
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create folder", dir.display()))?;
    let mut written = Vec::new();
    for src in &kernels::SOURCES {
        let ptx = kernels::compile(src, &arch, &kernels::defines(filter))?;
        let path = dir.join(format!("{}.ptx", src.name));
        std::fs::write(&path, ptx).with_context(|| format!("{}: cannot write", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

fn device_arch() -> Option<String> {
    if Gpu::device_count() < 1 {
        return None;
    }
    let (major, minor) = CudaContext::new(0).ok()?.compute_capability().ok()?;
    Some(kernels::arch_option(major, minor))
}

/// What the benchmark records about the device.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    pub name: String,
    pub compute_capability: String,
    pub multiprocessors: i32,
    pub memory_bytes: usize,
    pub l2_bytes: usize,
    pub driver_version: String,
}

impl Gpu {
    pub fn info(&self) -> Result<DeviceInfo, GpuError> {
        use cudarc::driver::sys::CUdevice_attribute as A;
        let (major, minor) = self.ctx.compute_capability()?;
        let mut driver = 0;
        // SAFETY: writes one int through a valid pointer; the driver library is loaded (the context exists).
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) };
        Ok(DeviceInfo {
            name: self.device.clone(),
            compute_capability: format!("{major}.{minor}"),
            multiprocessors: self.multiprocessors,
            memory_bytes: self.ctx.total_mem()?,
            l2_bytes: self.ctx.attribute(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
            driver_version: format!("CUDA {}.{}", driver / 1000, driver % 1000 / 10),
        })
    }

    /// The device-to-device copy bandwidth in GB/s, counting bytes read plus bytes written: the roofline
    /// for a kernel that reads its input once and writes its output once. A `bytes`-sized copy (choose it
    /// well above the L2 size), one warm-up, then the median of `reps` event-timed copies.
    pub fn copy_bandwidth_gbps(&self, bytes: usize, reps: usize) -> Result<f64, GpuError> {
        let src = self.stream.alloc_zeros::<u8>(bytes)?;
        let mut dst = self.stream.alloc_zeros::<u8>(bytes)?;
        self.stream.memcpy_dtod(&src, &mut dst)?;
        let mut samples = self.time_runs(reps.max(1), |_| Ok(self.stream.memcpy_dtod(&src, &mut dst)?))?;
        let ms = crate::stats::median(&mut samples);
        Ok(2.0 * bytes as f64 / (ms * 1e6))
    }
}
