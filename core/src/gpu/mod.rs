//! The GPU side: a device handle ([`Gpu`]: context, stream, device facts), the kernels compiled and loaded
//! once per build ([`kernels`], [`compile`], [`cache`]), one Rust file per `cuda/*.cu` pattern holding its
//! launch ([`patterns`]), one device-buffer path for upload → launch → download ([`buffers`]), the variant
//! runner ([`variants`]), and event timing ([`events`]).
//!
//! Opening the GPU never panics and never stops the CPU variants: a missing driver library, a missing
//! NVRTC, no device, or a compile failure each become a [`GpuError`] whose one-line message the report
//! prints as "GPU variants skipped: …".

pub mod buffers;
pub mod build;
pub mod cache;
pub mod compile;
pub mod conv;
pub mod events;
pub mod host_pipeline;
pub mod jpeg_batch;
pub mod kernels;
pub mod npp;
pub mod nvcomp;
pub mod nvjpeg;
pub mod nvjpeg_engine;
pub mod patterns;
pub mod pinned;
pub mod png_data;
pub mod prebuilt;
pub mod rows;
pub mod slots;
pub mod staged;
pub mod student;
pub mod variants;
pub mod visible;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::sobel::Filter;
use crate::variant::timed;
use crate::variant::Variant;
use kernels::{Build, KernelSet, LoadStats};

/// Why the GPU cannot be used, or what failed on it (one line each).
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// `libcuda.so` cannot be loaded.
    #[error("no CUDA driver (libcuda.so not found: no NVIDIA driver on this machine)")]
    NoDriver,
    /// `libnvrtc.so.13` cannot be loaded.
    #[error("no NVRTC (libnvrtc.so.13 not found: install the CUDA toolkit or put its lib folder on LD_LIBRARY_PATH)")]
    NoNvrtc,
    /// No CUDA device is visible.
    #[error("no CUDA device visible")]
    NoDevice,
    /// A CUDA driver call failed.
    #[error("CUDA driver: {}", describe(.0))]
    Driver(#[from] DriverError),
    /// An image the GPU variants cannot take (sizes over their limits).
    #[error("the GPU variants do not support {0}")]
    Unsupported(String),
    /// A strategy that cannot take what it was asked to do, saying which can.
    #[error("{0}")]
    Refused(String),
    /// A peer library (NPP) that could not be loaded or failed.
    #[error("{0}")]
    Peer(String),
    /// Input the GPU found invalid, in the words the CPU's decoder would use (a PNG row naming a filter type
    /// that PNG does not have).
    #[error("{0}")]
    BadData(String),
    /// NVRTC refused a kernel file; `log` is its log.
    #[error("NVRTC could not compile {file}: {log}")]
    Compile {
        /// The kernel file (`cuda/<name>.cu`, or a student's path).
        file: String,
        /// NVRTC's log.
        log: String,
    },
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
    DRIVER_TOUCHED.store(true, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: only tries to dlopen the library by its usual names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether this process has looked for the CUDA driver ([`driver_present`], which every path to it takes first):
/// after that, [`visible::show_only`] no longer narrows the devices.
static DRIVER_TOUCHED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An open device: context, stream and device facts, with the kernels of one [`Build`] at hand. Clones
/// share the context and the loaded kernel sets.
#[derive(Clone)]
pub struct Gpu {
    /// The CUDA context.
    pub ctx: Arc<CudaContext>,
    /// The stream launches and copies go to.
    pub stream: Arc<CudaStream>,
    /// The kernels of this handle's build; [`Gpu::for_filter`] gives a handle for another.
    pub kernels: Arc<KernelSet>,
    /// The device's name.
    pub device: String,
    /// The device's SMs.
    pub multiprocessors: u32,
    /// `--gpu-architecture=…` of this device.
    arch: String,
    /// Every build loaded so far on this context, each loaded once.
    sets: Arc<Mutex<HashMap<Build, Arc<KernelSet>>>>,
    /// The context's one module cache: every kernel file build loaded on it, whichever family loaded it.
    pub modules: Arc<kernels::Modules>,
}

/// What opening the device cost, reported apart from every variant's timings (as the report did).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Startup {
    /// Context creation plus the dummy 1-byte allocation (the report's way to absorb start-up).
    pub context_init_ms: f64,
    /// NVRTC compile (or cache read) and module load of the kernel files.
    pub kernel_load_ms: f64,
    /// How many files were compiled and how many read from the cache.
    pub kernel_stats: LoadStats,
}

impl Gpu {
    /// Opens device 0 with the default build; see [`Gpu::open_device`].
    pub fn open() -> Result<Gpu, GpuError> {
        Gpu::open_device(0, Filter::default(), &[]).map(|(g, _)| g)
    }

    /// How many CUDA devices are visible (0 without a driver or device).
    pub fn device_count() -> usize {
        if !driver_present() {
            return 0;
        }
        CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
    }

    /// Opens device `ordinal` with the kernel files of `variants` (in `filter`'s build) and the timing
    /// kernels loaded, so that no variant's timing includes a compile; other files load when first used.
    /// The first GPU action is a dummy 1-byte allocation that absorbs context start-up, timed on its own,
    /// as the report did.
    pub fn open_device(ordinal: usize, filter: Filter, variants: &[Variant]) -> Result<(Gpu, Startup), GpuError> {
        if !driver_present() {
            return Err(GpuError::NoDriver);
        }
        // NVRTC is checked when a kernel file must be compiled (compile::compile_with), not here: with
        // every file in the cache, a run never loads it.
        // Context start-up counts the driver's initialisation (cuInit, in the device count) too.
        let started = std::time::Instant::now();
        // cuInit itself fails with NO_DEVICE when no device is visible (e.g. CUDA_VISIBLE_DEVICES=).
        crate::trace::mark("GPU: cuInit");
        let count = CudaContext::device_count();
        crate::trace::mark("GPU: cuInit done");
        let ordinal = visible::driver_ordinal(ordinal);
        match count {
            Ok(n) if n as usize > ordinal => {}
            Ok(_) | Err(DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE)) => {
                return Err(GpuError::NoDevice)
            }
            Err(e) => return Err(e.into()),
        }
        let opened = (|| -> Result<_, DriverError> {
            let ctx = CudaContext::new(ordinal)?;
            let stream = ctx.default_stream();
            let dummy = stream.alloc_zeros::<u8>(1)?;
            stream.synchronize()?;
            drop(dummy);
            Ok((ctx, stream))
        })();
        let (ctx, stream) = opened?;
        set_sync_mode(&ctx, None)?;
        crate::trace::mark("GPU context made");
        let context_init_ms = started.elapsed().as_secs_f64() * 1e3;
        let device = ctx.name()?;
        let multiprocessors =
            ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let (major, minor) = ctx.compute_capability()?;
        let arch = compile::arch_option(major, minor, compile::Code::Cubin);
        let build = Build::of(filter);
        let modules = Arc::new(kernels::Modules::default());
        let kernels = Arc::new(KernelSet::new(&ctx, &arch, build, modules.clone()));
        let (loaded, kernel_load_ms) = timed(|| kernels.preload(variants));
        loaded?;
        crate::trace::mark("kernels loaded");
        let kernel_stats = kernels.stats();
        let sets = Arc::new(Mutex::new(HashMap::from([(build, kernels.clone())])));
        let multiprocessors = multiprocessors.max(1) as u32;
        let gpu = Gpu { ctx, stream, kernels, device, multiprocessors, arch, sets, modules };
        Ok((gpu, Startup { context_init_ms, kernel_load_ms, kernel_stats }))
    }

    /// This device with the kernels of `filter`'s edges (stencil, arithmetic, grey and norm; the border is a
    /// kernel argument). A build not loaded yet is compiled (or read from the kernel cache) and loaded now, once.
    pub fn for_filter(&self, filter: Filter) -> Result<Gpu, GpuError> {
        self.for_build(Build::of(filter))
    }

    /// This device with the kernels of `build` (see [`Gpu::for_filter`]).
    pub fn for_build(&self, build: Build) -> Result<Gpu, GpuError> {
        let mut sets = self.sets.lock().expect("no panic while holding the kernel sets");
        let kernels = match sets.get(&build) {
            Some(k) => k.clone(),
            None => sets
                .entry(build)
                .or_insert_with(|| Arc::new(KernelSet::new(&self.ctx, &self.arch, build, self.modules.clone())))
                .clone(),
        };
        Ok(Gpu { kernels, ..self.clone() })
    }

    /// The same GPU, its launches and copies going to `stream` (for work on several streams at once).
    pub fn on_stream(&self, stream: Arc<CudaStream>) -> Gpu {
        Gpu { stream, ..self.clone() }
    }

    /// What a launch of a variant's pattern on this handle's stream needs besides its buffers.
    pub fn job(&self, d: patterns::Dims, border: crate::sobel::Border, n1: crate::variant::N1) -> patterns::Job<'_> {
        let out_bytes = self.kernels.build().output.bytes_per_pixel();
        patterns::Job { stream: &self.stream, d, border, n1, multiprocessors: self.multiprocessors, out_bytes }
    }
}

/// Compiles every kernel file for `filter`'s operator and arithmetic and writes `<dir>/<name>.ptx`, for
/// students to read: the edge command's files as it builds them, the filter's own files as the filter command builds
/// them for the same stencil (its `ConvKernel`, through the first strategy of the one table that runs the file).
/// Needs NVRTC only; targets the device's architecture when one is visible, else `compute_90` (Hopper).
pub fn emit_ptx(dir: &std::path::Path, filter: Filter) -> Result<Vec<std::path::PathBuf>, anyhow::Error> {
    use anyhow::Context as _;
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc.into());
    }
    let arch = device_arch().unwrap_or_else(|| compile::arch_option(9, 0, compile::Code::Ptx));
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create folder", dir.display()))?;
    let mut written = Vec::new();
    let build = Build::of(filter);
    for (i, src) in patterns::SOURCES.iter().enumerate() {
        let ptx = if i < patterns::EDGE_FILES {
            compile::compile(src, &arch, build)?
        } else {
            let row = Variant::KERNELS.into_iter().find(|v| v.file() == Some(src.name)).expect("a strategy runs it");
            let (_, options) = conv::build_of(&arch, &build.kernel(), row, conv::Tuning::default());
            String::from_utf8_lossy(&compile::compile_with(src, &options, compile::Code::Ptx)?).into_owned()
        };
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
    Some(compile::arch_option(major, minor, compile::Code::Ptx))
}

/// What the benchmark records about the device.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    /// The device's name.
    pub name: String,
    /// Compute capability, e.g. "9.0".
    pub compute_capability: String,
    /// Streaming multiprocessors.
    pub multiprocessors: i32,
    /// Device memory, bytes.
    pub memory_bytes: usize,
    /// L2 cache, bytes.
    pub l2_bytes: usize,
    /// The CUDA version the driver supports, e.g. "CUDA 13.0".
    pub driver_version: String,
}

impl Gpu {
    /// What the bench records about the device.
    pub fn info(&self) -> Result<DeviceInfo, GpuError> {
        use cudarc::driver::sys::CUdevice_attribute as A;
        let (major, minor) = self.ctx.compute_capability()?;
        let mut driver = 0;
        // SAFETY: writes one int through a valid pointer; the driver library is loaded (the context exists).
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) };
        Ok(DeviceInfo {
            name: self.device.clone(),
            compute_capability: format!("{major}.{minor}"),
            multiprocessors: self.multiprocessors as i32,
            memory_bytes: self.ctx.total_mem()?,
            l2_bytes: self.ctx.attribute(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
            driver_version: format!("CUDA {}.{}", driver / 1000, driver % 1000 / 10),
        })
    }

    /// Makes a thread that waits for this context's GPU work sleep until the driver wakes it, instead of spinning
    /// on its core — unless `CUDA_SOBEL_SYNC` chose (`set_sync_mode`). For batch's `--png-inflate gpu`, whose 24
    /// threads each wait for a slot's image (more threads than cores): spinning, they burned 14 of the 24 CPU
    /// seconds 2000 scenes took, at the same rate within the spread (H100: 822–843
    /// images/s spinning, 879–912 asleep, with the CPU at 10 s).
    pub fn wait_asleep(&self) -> Result<(), DriverError> {
        use cudarc::driver::sys::CUctx_flags_enum::CU_CTX_SCHED_BLOCKING_SYNC;
        set_sync_mode(&self.ctx, Some(CU_CTX_SCHED_BLOCKING_SYNC))
    }
}

/// The context's way of waiting as it was before [`Gpu::wait_asleep_for_now`], given back when dropped.
pub struct AsleepForNow {
    ctx: Arc<CudaContext>,
    before: Option<cudarc::driver::sys::CUctx_flags>,
}

impl Gpu {
    /// [`Gpu::wait_asleep`] until the guard returned is dropped, then the context's earlier way of waiting again:
    /// for a batch's slots on a context that others share (the device's primary context: the Python package's
    /// calls on arrays keep their spinning waits, tens of microseconds quicker to wake).
    pub fn wait_asleep_for_now(&self) -> Result<AsleepForNow, DriverError> {
        use cudarc::driver::sys::CUctx_flags_enum::*;
        self.ctx.bind_to_thread()?;
        let mut flags = 0;
        // SAFETY: writes one unsigned int through a valid pointer; the context is current on this thread.
        unsafe { cudarc::driver::sys::cuCtxGetFlags(&mut flags) }.result()?;
        let before = [CU_CTX_SCHED_AUTO, CU_CTX_SCHED_SPIN, CU_CTX_SCHED_YIELD, CU_CTX_SCHED_BLOCKING_SYNC]
            .into_iter()
            .find(|&f| flags & CU_CTX_SCHED_MASK as u32 == f as u32);
        self.wait_asleep()?;
        Ok(AsleepForNow { ctx: self.ctx.clone(), before })
    }
}

impl Drop for AsleepForNow {
    fn drop(&mut self) {
        if let (Some(flags), Ok(())) = (self.before, self.ctx.bind_to_thread()) {
            let _ = cudarc::driver::result::ctx::set_flags(flags);
        }
    }
}

/// `CUDA_SOBEL_SYNC=spin|yield|blocking` (for measuring, like `CUDA_SOBEL_DEFINES`): how a thread that waits for the
/// GPU (a stream synchronisation) waits — spinning on its core, yielding it between polls, or asleep until the
/// driver wakes it. Set to anything else: the driver's choice. Unset: `default`, or the driver's choice (spinning, with
/// one context and many cores) without one.
fn set_sync_mode(ctx: &Arc<CudaContext>, default: Option<cudarc::driver::sys::CUctx_flags>) -> Result<(), DriverError> {
    use cudarc::driver::sys::CUctx_flags_enum::*;
    let chosen = match std::env::var("CUDA_SOBEL_SYNC").as_deref() {
        Ok("spin") => Some(CU_CTX_SCHED_SPIN),
        Ok("yield") => Some(CU_CTX_SCHED_YIELD),
        Ok("blocking") => Some(CU_CTX_SCHED_BLOCKING_SYNC),
        Err(std::env::VarError::NotPresent) => default,
        _ => None,
    };
    let Some(flags) = chosen else { return Ok(()) };
    ctx.bind_to_thread()?;
    cudarc::driver::result::ctx::set_flags(flags)
}
