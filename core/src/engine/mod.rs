//! The library API: one [`Engine`] per device, which the single-image command, batch mode and (next) the
//! Python package call. It opens the GPU once (context, kernels of the filter's build), falls back to the
//! CPU when asked for [`Device::Auto`] and no GPU can be used, and runs any [`Variant`] — the one variant
//! runner every caller shares.
//!
//! ```
//! use cuda_sobel_core::engine::{Device, Engine};
//! use cuda_sobel_core::sobel::Filter;
//!
//! // Auto: the GPU when one can be used, else the CPU (as on a machine without an NVIDIA driver).
//! let engine = Engine::new(Device::Auto, Filter::default()).unwrap();
//! let rgb = image::RgbImage::from_fn(64, 48, |x, y| image::Rgb([(x * 4) as u8, (y * 5) as u8, 90]));
//! let edges = engine.sobel(&rgb, Filter::default()).unwrap();
//! assert_eq!(edges.dimensions(), (64, 48));
//! // Every path gives the reference's bytes.
//! assert_eq!(edges, cuda_sobel_core::cpu::scalar::sobel(&rgb, Filter::default()));
//! ```

use image::{GrayImage, RgbImage};

use crate::cpu;
use crate::gpu::nvjpeg::Nvjpeg;
use crate::gpu::slots::SlotPool;
pub use crate::gpu::slots::{Edges, Want};
pub use crate::gpu::staged::STREAMED_FROM_BYTES;
pub use crate::gpu::student::{pick_entry, Launch, StudentKernel};
pub use crate::gpu::variants::{CannyLaunches, RawImages};
pub use crate::gpu::{kernels::LoadStats, AsleepForNow, GpuError, Startup};
use crate::image_io::filtered::Filtered;

pub mod filter;
mod inflate;
mod jpeg;
mod measure;
mod outputs;
pub mod stream;
use crate::gpu::{variants, Gpu};
use crate::sobel::{Filter, Output};
use crate::variant::Variant;
pub use inflate::{PngInflate, Wave};
pub use jpeg::{JpegDecoder, JpegEdges};
pub use measure::{npp_description, DeviceInfo, HostRun, Meter, NppPeer, ResidentRun};

/// Compiles every kernel file for `filter`'s operator and arithmetic and writes `<dir>/<name>.ptx`, to read
/// (needs NVRTC, not a GPU); returns the paths written.
pub fn emit_ptx(dir: &std::path::Path, filter: Filter) -> anyhow::Result<Vec<std::path::PathBuf>> {
    crate::gpu::emit_ptx(dir, filter)
}

/// A student's kernel file compiled to PTX for `compute_90`, without a GPU (`--kernel-file F --emit-ptx DIR`).
pub fn student_ptx(file: &str, text: &str, filter: Filter) -> Result<String, GpuError> {
    crate::gpu::student::compile_ptx(file, text, filter)
}

/// Whether the CUDA driver library can be loaded (cheap: no device is opened), e.g. to decide before
/// opening one whether a GPU path is worth trying.
pub fn driver_present() -> bool {
    crate::gpu::driver_present()
}

/// Which device an [`Engine`] computes on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// CUDA device 0 when it can be used, else the CPU (the reason is kept: [`Engine::gpu_error`]).
    #[default]
    Auto,
    /// The CPU only (cpu-rayon for [`Engine::sobel`]).
    Cpu,
    /// This CUDA device, or an error.
    Cuda(usize),
}

/// What an [`Engine`] could not do.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The GPU failed (driver, memory, an image it cannot take).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// A GPU variant was asked of an engine without a GPU.
    #[error("{variant} needs a GPU: {reason}")]
    NoGpu {
        /// The variant's name.
        variant: &'static str,
        /// Why the engine has no GPU.
        reason: String,
    },
}

/// One variant's output and times, in milliseconds.
#[derive(Debug)]
pub struct VariantRun {
    /// The magnitude image, `width × height` bytes.
    pub output: Vec<u8>,
    /// CPU: wall clock of the computation. GPU: the median of the event-timed runs (kernels only).
    pub compute_ms: f64,
    /// GPU: allocations, host↔device copies and frees (wall clock); `None` on the CPU.
    pub gpu_memory_ms: Option<f64>,
}

/// How a GPU variant is timed by [`Engine::run`].
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// One untimed run first (module loading, caches, clocks).
    pub warm_up: bool,
    /// Event-timed runs; the median is reported.
    pub reps: usize,
}

impl Default for RunOptions {
    /// One run, no warm-up: the cost a user pays once.
    fn default() -> RunOptions {
        RunOptions { warm_up: false, reps: 1 }
    }
}

/// An open device and what opening it cost.
pub struct Engine {
    gpu: Option<Gpu>,
    /// Why there is no GPU, when one was asked for or tried.
    gpu_error: Option<GpuError>,
    startup: Option<Startup>,
    /// Batch mode: images through a bounded pool of streams with pinned buffers.
    slots: Option<SlotPool>,
    /// Batch mode: nvJPEG for the slots' JPEG decodes, or why not (after `slots`: dropped after their
    /// decode states).
    nvjpeg: Option<Result<Nvjpeg, String>>,
    /// Batch mode: nvCOMP for inflating PNGs in waves, or why not.
    nvcomp: Option<Result<inflate::Inflater, String>>,
    /// The filter's strategies on this engine's GPU, made on first use (`batch --kernel`).
    conv: std::sync::OnceLock<crate::gpu::conv::ConvGpu>,
}

/// Whether an 8-bit edge image written as `format` at `compression` may have its PNG data deflated on the GPU
/// (`cuda/deflate.cu`): PNG files at the fast and default levels; `best` stays with the CPU's zlib.
pub fn deflates_on_gpu(format: crate::image_io::Format, compression: crate::image_io::PngCompression) -> bool {
    format == crate::image_io::Format::Png && compression != crate::image_io::PngCompression::Best
}

impl Engine {
    /// Opens `device` for [`Engine::sobel`]: gpu-strip's kernels in `filter`'s build compiled (or read from
    /// the cache) and loaded, so that no later call pays for that. [`Device::Auto`] never fails: without a
    /// usable GPU it computes on the CPU and keeps the reason ([`Engine::gpu_error`]); [`Device::Cuda`]
    /// fails with it.
    ///
    /// ```
    /// use cuda_sobel_core::engine::{Device, Engine};
    /// let cpu = Engine::new(Device::Cpu, Default::default()).unwrap();
    /// assert!(!cpu.has_gpu());
    /// assert_eq!(cpu.describe(), "cpu-rayon");
    /// ```
    pub fn new(device: Device, filter: Filter) -> Result<Engine, GpuError> {
        Engine::for_variants(device, filter, &[Variant::GpuStrip])
    }

    /// [`Engine::new`] with the kernel files of `variants` loaded up front (the GPU ones; others load when
    /// first run): what a run that times those variants needs, and no more.
    pub fn for_variants(device: Device, filter: Filter, variants: &[Variant]) -> Result<Engine, GpuError> {
        let cpu = |gpu_error| Engine {
            gpu: None,
            gpu_error,
            startup: None,
            slots: None,
            nvjpeg: None,
            nvcomp: None,
            conv: Default::default(),
        };
        let opened = |ordinal| {
            Gpu::open_device(ordinal, filter, variants).map(|(gpu, startup)| Engine {
                gpu: Some(gpu),
                gpu_error: None,
                startup: Some(startup),
                slots: None,
                nvjpeg: None,
                nvcomp: None,
                conv: Default::default(),
            })
        };
        match device {
            Device::Cpu => Ok(cpu(None)),
            Device::Auto => Ok(opened(0).unwrap_or_else(|e| cpu(Some(e)))),
            Device::Cuda(ordinal) => opened(ordinal),
        }
    }

    /// Edges of `images` packed `width × height` RGB images in host memory into `out`: on the GPU one
    /// upload, one launch and one download for the whole batch; on the CPU cpu-rayon image by image.
    pub fn sobel_batch(
        &self,
        rgb: &[u8],
        width: u32,
        height: u32,
        images: u32,
        filter: Filter,
        out: &mut [u8],
    ) -> Result<(), EngineError> {
        let (w, h) = (width as usize, height as usize);
        match &self.gpu {
            Some(_) => self.batch_on_gpu(rgb, width, height, images, (filter, Output::Edges), out),
            None => {
                for (src, dst) in rgb.chunks(3 * w * h).zip(out.chunks_mut(w * h)).filter(|(s, _)| !s.is_empty()) {
                    cpu::rayon::sobel_into(src, w, h, filter, dst);
                }
                Ok(())
            }
        }
    }

    /// A student's kernel (`--kernel-file`), compiled for this engine's GPU in `filter`'s build.
    pub fn student_kernel(
        &self,
        file: &str,
        text: &str,
        entry: &str,
        filter: Filter,
    ) -> Result<StudentKernel, EngineError> {
        Ok(StudentKernel::compile(self.need_gpu("a student's kernel")?, file, text, entry, filter)?)
    }

    /// One run of a student's kernel, the output poisoned with `poison` first.
    pub fn student_run(
        &self,
        k: &StudentKernel,
        rgb: &RgbImage,
        border: i32,
        launch: Launch,
        poison: u8,
    ) -> Result<Vec<u8>, EngineError> {
        Ok(k.run(self.need_gpu("a student's kernel")?, rgb, border, launch, poison)?)
    }

    /// `reps` event-timed runs of a student's kernel after a warm-up (ms each), as our variants are timed.
    pub fn student_time(
        &self,
        k: &StudentKernel,
        rgb: &RgbImage,
        border: i32,
        launch: Launch,
        reps: usize,
    ) -> Result<Vec<f64>, EngineError> {
        Ok(k.time(self.need_gpu("a student's kernel")?, rgb, border, launch, reps)?)
    }

    /// The GPU, or why `what` cannot run without one.
    fn need_gpu(&self, what: &'static str) -> Result<&Gpu, EngineError> {
        self.gpu.as_ref().ok_or_else(|| EngineError::NoGpu {
            variant: what,
            reason: self.gpu_error.as_ref().map_or("no GPU was asked for".into(), |e| e.to_string()),
        })
    }

    /// The CUDA device ordinal this engine computes on, if a GPU.
    pub fn ordinal(&self) -> Option<usize> {
        self.gpu.as_ref().map(|g| g.ctx.ordinal())
    }

    /// Whether [`Engine::run`] streams `variant` over `rgb` (gpu-strip on a large image, on a GPU): staged
    /// through pinned buffers, overlapped bands, one pass whatever the [`RunOptions`].
    pub fn streams(&self, variant: Variant, rgb: &RgbImage) -> bool {
        self.gpu.is_some() && variants::streams(variant, rgb)
    }

    /// Streams the PNG `rows` into `target` ([`stream`]: decode, compute and encode at the same time):
    /// gpu-strip when `on_gpu` and this engine has a GPU, else cpu-rayon.
    pub fn stream_png(
        &self,
        rows: crate::image_io::PngRows,
        on_gpu: bool,
        filter: Filter,
        staged: &mut crate::image_io::Staged,
        target: &crate::image_io::Target,
        compression: crate::image_io::PngCompression,
    ) -> crate::error::Result<stream::Times> {
        let compute = match (&self.gpu, on_gpu) {
            (Some(gpu), true) => stream::Compute::Gpu(gpu),
            _ => stream::Compute::Cpu,
        };
        stream::run(rows, compute, filter, staged, target, compression)
    }

    /// How many CUDA devices are visible (0 without a driver or device).
    pub fn device_count() -> usize {
        Gpu::device_count()
    }

    /// Gives [`Engine::sobel`] `slots` streams with pinned buffers of their own, shared by the threads that
    /// call it (batch mode: copies and kernels of several images overlap; memory stays bounded).
    pub fn with_slots(mut self, slots: usize) -> Result<Engine, GpuError> {
        if let Some(gpu) = &self.gpu {
            self.slots = Some(SlotPool::new(gpu, slots)?);
        }
        Ok(self)
    }

    /// How many slots [`Engine::with_slots`] gave it (0 without a GPU or slots).
    pub fn slot_count(&self) -> usize {
        self.slots.as_ref().map_or(0, SlotPool::count)
    }

    /// Seconds batch's threads waited for a GPU slot and held one ([`SlotPool::times`]); `None` without slots.
    pub fn slot_times(&self) -> Option<(f64, f64)> {
        self.slots.as_ref().map(SlotPool::times)
    }

    /// [`crate::gpu::Gpu::wait_asleep_for_now`] on this engine's GPU; `None` without one.
    pub fn wait_asleep_for_now(&self) -> Option<Result<AsleepForNow, GpuError>> {
        self.gpu.as_ref().map(|g| g.wait_asleep_for_now().map_err(GpuError::from))
    }

    /// Whether a GPU is open (else [`Engine::sobel`] runs cpu-rayon).
    pub fn has_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// Why the GPU is not used, when one was asked for or tried.
    pub fn gpu_error(&self) -> Option<&GpuError> {
        self.gpu_error.as_ref()
    }

    /// The device's name, when a GPU is open.
    pub fn device_name(&self) -> Option<&str> {
        self.gpu.as_ref().map(|g| g.device.as_str())
    }

    /// What opening the GPU cost (context, kernels), when one is open.
    pub fn startup(&self) -> Option<Startup> {
        self.startup
    }

    /// What [`Engine::sobel`] runs: "gpu-strip on NAME" or "cpu-rayon".
    pub fn describe(&self) -> String {
        match &self.gpu {
            Some(g) => format!("gpu-strip on {}", g.device),
            None => "cpu-rayon".into(),
        }
    }

    /// The edge image by the fastest path this engine has: gpu-strip on the GPU (through a slot when the
    /// engine has them and the image fits one; in bands when it is too large for one pass), cpu-rayon
    /// otherwise. Bytes identical to [`crate::cpu::scalar::sobel`].
    pub fn sobel(&self, rgb: &RgbImage, filter: Filter) -> Result<GrayImage, EngineError> {
        let (w, h) = rgb.dimensions();
        let bytes = self.sobel_for_batch(rgb, filter, Want::default())?.bytes.expect("asked for the bytes");
        Ok(GrayImage::from_raw(w, h, bytes).expect("width × height bytes"))
    }

    /// [`Engine::sobel`] for batch mode: through a slot, the edges may come back as PNG data deflated on the GPU
    /// (as `want` asks); on the other paths, their bytes. With `want.canny`, Canny's edges instead: the bytes of
    /// [`Engine::run_canny`] on every path.
    pub fn sobel_for_batch(&self, rgb: &RgbImage, filter: Filter, want: Want) -> Result<Edges, EngineError> {
        let (width, height) = rgb.dimensions();
        Ok(match (&self.gpu, &self.slots) {
            (Some(_), Some(pool)) if self.fits_a_slot(width, height, want) => {
                pool.with_slot(|slot| slot.run(rgb, filter, want))?
            }
            _ => {
                let (w, h) = (width as usize, height as usize);
                let bytes = match (&self.gpu, &want.canny) {
                    (None, None) => cpu::rayon::sobel(rgb, filter).into_raw(),
                    (None, Some(c)) => c.edges_of(&cpu::rayon::PackedRgb::new(rgb.as_raw(), w, h), filter),
                    (Some(g), None) => {
                        variants::run(g, Variant::GpuStrip, rgb, (filter, Output::Edges), false, 1)?.output
                    }
                    (Some(g), Some(c)) => variants::run_canny(g, Variant::GpuStrip, rgb, filter, c, false, 1)?.output,
                };
                Edges::of_bytes(width, height, bytes)
            }
        })
    }

    /// The PNG image data of a `width × height` edge image already on the host, deflated on the GPU
    /// (`cuda/deflate.cu`, as batch does in its slots): one zlib stream for
    /// [`crate::image_io::output::Staged::png_zlib`]. `None` without a GPU, or for data that does not compress
    /// (its stream larger than the edges).
    pub fn png_data_on_gpu(&self, edges: &[u8], width: u32, height: u32) -> Result<Option<Vec<u8>>, EngineError> {
        match &self.gpu {
            Some(g) => Ok(crate::gpu::png_data::deflate_host_edges(g, edges, width, height)?),
            None => Ok(None),
        }
    }

    /// Memory for `bytes` of a PNG's stored rows, for [`crate::image_io::filtered::read_into`]: page-locked for the
    /// slots to upload from without a copy (a GPU with batch slots), else plain memory.
    pub fn row_store(&self, bytes: usize) -> Box<dyn crate::image_io::filtered::RowStore> {
        match &self.slots {
            Some(pool) => pool.row_store(bytes),
            None => Box::new(vec![0; bytes]),
        }
    }

    /// Whether [`Engine::sobel_filtered`] undoes a PNG's filters on the GPU (a GPU with batch slots), so
    /// that a caller should read PNGs with [`crate::image_io::filtered::read`] instead of decoding them.
    pub fn unfilters_on_gpu(&self) -> bool {
        self.gpu.is_some() && self.slots.is_some()
    }

    /// The edge image of a PNG read still filtered ([`crate::image_io::filtered::read`]): on the GPU through
    /// a slot, the filters undone there (`cuda/unfilter.cu`); otherwise — no slots, or an image too large
    /// for one — unfiltered on the CPU and given to [`Engine::sobel_for_batch`]. Bytes identical to
    /// [`crate::cpu::scalar::sobel`] of the decoded image.
    pub fn sobel_filtered(&self, png: &Filtered, filter: Filter, want: Want) -> Result<Edges, EngineError> {
        let (w, h) = (png.width, png.height);
        match &self.slots {
            Some(pool) if self.fits_a_slot(w, h, want) => {
                Ok(pool.with_slot(|slot| slot.run_filtered(png, filter, want))?)
            }
            _ => self.sobel_for_batch(&png.unfilter(), filter, want),
        }
    }

    /// Runs one variant on `rgb`, timed in the report's categories: the runner the single-image command and
    /// the bench share. CPU variants are timed by the wall clock (after the thread pool has started); GPU
    /// variants upload, run (`opts`) and download, in bands when the image is too large for one pass.
    ///
    /// ```
    /// use cuda_sobel_core::engine::{Device, Engine, RunOptions};
    /// use cuda_sobel_core::variant::Variant;
    /// let engine = Engine::new(Device::Cpu, Default::default()).unwrap();
    /// let rgb = image::RgbImage::new(8, 4);
    /// let run = engine.run(Variant::CpuScalar, &rgb, Default::default(), RunOptions::default()).unwrap();
    /// assert_eq!(run.output, vec![0; 32]);
    /// assert!(engine.run(Variant::GpuStrip, &rgb, Default::default(), RunOptions::default()).is_err());
    /// ```
    pub fn run(
        &self,
        variant: Variant,
        rgb: &RgbImage,
        filter: Filter,
        opts: RunOptions,
    ) -> Result<VariantRun, EngineError> {
        self.run_output(variant, rgb, filter, Output::Edges, opts)
    }
}
