//! The filter command on the GPU: each strategy's kernel file compiled for a [`ConvKernel`] (its radius, kind and
//! divisor always; its taps where the strategy compiles them in), loaded once per run, its taps copied where it reads
//! them (global or constant memory), and launched on planes already on the device — the launches themselves are in
//! the strategies' twins, `src/gpu/patterns/conv_*.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig};

use super::kernels::LoadStats;
use super::patterns::{conv_single, Dims, KernelSource, SOURCES};

mod builds;
pub(crate) mod launch;
mod raw;
use super::{Gpu, GpuError};
use crate::conv::{ConvKernel, Kind, Planes};
use crate::sobel::Border;
use crate::variant::{Taps, Variant};
use builds::two_pass;
pub use builds::{build_of, defines, factor_defines, is_box, launches_an_image, tunings_of};
use launch::Launcher;
pub use raw::RawPlanes;

/// Settings the studies vary; the filter command uses the defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// Threads per block (gpu-local: its tile too); `None`: the file's own.
    pub block: Option<(u32, u32)>,
    /// gpu-local: how many threads load the tile (`None`: all of them).
    pub tile_loaders: Option<u32>,
    /// gpu-local: the taps compiled in instead of read from constant memory ("local + predefined").
    pub local_predefined: bool,
    /// A gradient kernel in two launches (Gx, then Gy): the default of gpu-single and gpu-constant; the others read
    /// the window once for both unless this is `Some(true)` (gpu-local, gpu-predefined).
    pub two_pass: Option<bool>,
    /// gpu-strip: columns a thread (`STRIP_G`; a multiple of 4, of 8 for a box); `None`: 4, or for a box chosen per
    /// image from two builds (`conv_strip::build_for`: 16 on large images, else 8).
    pub strip_columns: Option<u32>,
    /// gpu-strip: rows a thread (a band); `None`: `conv_strip::rows_for` the image.
    pub strip_rows: Option<u32>,
    /// Each image's launch may start while the launch before it on the stream is finishing (programmatic dependent
    /// launch, `next_launch_may_start` in `cuda/conv.cuh`; sm_90 and later, elsewhere ignored; on a created
    /// stream, not the legacy default one): for independent images in a row.
    pub overlap: bool,
}

/// One launch's image: `planes` planes of `d`, one after another, and the border.
pub struct ConvJob<'a> {
    /// The stream to launch on.
    pub stream: &'a Arc<CudaStream>,
    /// One plane's size.
    pub d: Dims,
    /// How many planes.
    pub planes: u32,
    /// `BORDER_*` of `cuda/sobel.cuh`.
    pub border: i32,
    /// The kernel's side.
    pub side: usize,
    /// Threads per block.
    pub block: (u32, u32),
    /// Sums a pixel of the separable passes' temporary image: 2 for a gradient kernel, else 1.
    pub sums: usize,
    /// Bytes a sum (`acc_t`): 4, or 8 for a wide kernel.
    pub acc_bytes: usize,
    /// Bytes of input a pixel: 1 (planes of bytes), or 3 (packed RGB: an edge build's).
    pub in_bytes: usize,
    /// Bytes of output a pixel: 1, or an edge build's [`crate::sobel::Output::bytes_per_pixel`].
    pub out_bytes: usize,
    /// The image's first launch may overlap the launch before it ([`Tuning::overlap`], on a GPU that can).
    pub overlap: bool,
}

impl ConvJob<'_> {
    /// Pixels of all planes.
    pub fn pixels(&self) -> usize {
        self.planes as usize * self.d.pixels()
    }

    /// A grid of `block`s covering every pixel, one thread each, grid.z the planes.
    pub fn grid(&self, block: (u32, u32)) -> LaunchConfig {
        self.grid_of(block, block)
    }

    /// A grid of `block`s each covering `cover` pixels, grid.z the planes.
    pub fn grid_of(&self, cover: (u32, u32), block: (u32, u32)) -> LaunchConfig {
        let (w, h) = (self.d.width as u32, self.d.height as u32);
        LaunchConfig {
            grid_dim: (w.div_ceil(cover.0), h.div_ceil(cover.1), self.planes),
            block_dim: (block.0, block.1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// The module contract's size check of a kernel that reads the planes (`in_bytes` a pixel) and writes `out_bytes` a
    /// pixel, and of the separable passes' temporary image when given. Panics (a caller's bug) before anything is
    /// launched.
    pub fn check_io(&self, input: &CudaSlice<u8>, out: &CudaSlice<u8>, tmp: &mut Option<&mut CudaSlice<u8>>) {
        let n = self.pixels();
        assert!(input.len() >= n * self.in_bytes && out.len() >= n * self.out_bytes, "buffers smaller than the planes");
        if let Some(t) = tmp {
            assert!(t.len() >= n * self.sums * self.acc_bytes, "a temporary image smaller than the planes' sums");
        }
    }

    /// [`ConvJob::check_io`] for a map pass, and the Gx plane (`planes·w·h` ints) for passes 1 and 2.
    pub fn check(&self, input: &CudaSlice<u8>, out: &CudaSlice<u8>, gx: Option<&CudaSlice<u8>>, pass: i32) {
        self.check_io(input, out, &mut None);
        assert!(pass == 0 || gx.is_some_and(|g| g.len() >= 4 * self.pixels()), "a Gx plane smaller than the planes");
    }

    /// The job of an edge build's launch over `job`'s image (one plane of packed RGB in, `job.out_bytes` a pixel
    /// out) by a filter file's kernels for `kernel` (the build's stencil, [`super::kernels::Build::kernel`]), in
    /// `block`s.
    pub fn of_edges<'a>(job: &crate::gpu::patterns::Job<'a>, kernel: &ConvKernel, block: (u32, u32)) -> ConvJob<'a> {
        ConvJob {
            stream: job.stream,
            d: job.d,
            planes: 1,
            border: job.border_arg(),
            side: kernel.side(),
            block,
            sums: 2,
            acc_bytes: 4,
            in_bytes: 3,
            out_bytes: job.out_bytes,
            overlap: false,
        }
    }
}

/// A strategy ready to launch for one kernel: its functions loaded, its taps where it reads them.
pub struct Prepared {
    strategy: Variant,
    launcher: Launcher,
    functions: Vec<CudaFunction>,
    /// gpu-single's taps in global memory.
    taps: Option<CudaSlice<i32>>,
    block: (u32, u32),
    two_pass: bool,
    /// gpu-strip's columns a thread of each of `functions` (a box has two builds, chosen per image).
    strip_columns: Vec<u32>,
    /// gpu-strip's rows a band, where the tuning sets them.
    strip_rows: Option<u32>,
    /// gpu-strip marches a box (its warps share their halo), and the rows its ring keeps (`conv_strip::threads`).
    strip_march: (bool, usize),
    side: usize,
    sums: usize,
    acc_bytes: usize,
    overlap: bool,
    _modules: Vec<Arc<CudaModule>>,
}

impl Prepared {
    /// Device bytes of scratch it needs for `pixels` pixels (all planes): the Gx plane of a two-pass gradient, or
    /// the separable passes' temporary image.
    pub fn scratch_bytes(&self, pixels: usize) -> usize {
        match self.strategy {
            Variant::GpuSeparable => pixels * self.sums * self.acc_bytes,
            _ if self.two_pass => 4 * pixels,
            _ => 0,
        }
    }

    /// Enqueues the filter once on `stream`: `planes` planes of `d` in `input`, the result in `out`.
    pub fn enqueue(
        &self,
        stream: &Arc<CudaStream>,
        (d, planes, border): (Dims, u32, Border),
        input: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        scratch: &mut CudaSlice<u8>,
    ) -> Result<(), GpuError> {
        let job = ConvJob {
            stream,
            d,
            planes,
            border: border as i32,
            side: self.side,
            block: self.block,
            sums: self.sums,
            acc_bytes: self.acc_bytes,
            in_bytes: 1,
            out_bytes: 1,
            overlap: self.overlap,
        };
        let passes: &[i32] = if self.two_pass { &[1, 2] } else { &[0] };
        for &pass in passes {
            (self.launcher)(self, &job, (input, out, scratch), pass)?;
        }
        Ok(())
    }
}

/// Why `strategy` cannot run `kernel`, in one line naming the strategies that can.
pub fn refusal(kernel: &ConvKernel, strategy: Variant) -> Option<String> {
    if strategy.kernels().is_none() {
        return Some(format!("{} runs the edge command's Sobel only, not a filter kernel", strategy.name()));
    }
    (strategy.needs_rank_one() && kernel.factors().is_none()).then(|| {
        format!(
            "{} is not a column ⊗ row product, which {} needs; every other --variant takes it",
            kernel.name,
            strategy.name()
        )
    })
}

/// A kernel file and the options it is compiled with.
type FileBuild = (&'static str, Vec<String>);

/// The filter's strategies on one device. Their modules live in the context's one module cache
/// ([`super::kernels::Modules`], `Gpu::modules`), beside the edge command's.
pub struct ConvGpu {
    gpu: Gpu,
    stats: Mutex<LoadStats>,
    /// Strategies prepared for kernels, kept ([`ConvGpu::prepared`]).
    kept: Mutex<HashMap<(ConvKernel, Variant), Arc<Prepared>>>,
    /// map.cu's grey, for filters of RGB on the device ([`ConvGpu::run_raw`]), loaded on first use.
    grey: std::sync::OnceLock<CudaFunction>,
    /// The context without event tracking that [`ConvGpu::run_raw`] lends arrays through, made on first use.
    untracked: std::sync::OnceLock<Arc<cudarc::driver::CudaContext>>,
}

impl ConvGpu {
    /// The filter's kernels on `gpu`'s device and stream.
    pub fn new(gpu: Gpu) -> ConvGpu {
        ConvGpu {
            gpu,
            stats: Mutex::default(),
            kept: Mutex::default(),
            grey: Default::default(),
            untracked: Default::default(),
        }
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Files compiled and read from the cache so far.
    pub fn stats(&self) -> LoadStats {
        *self.stats.lock().expect("no panic while holding the stats")
    }

    fn source(file: &str) -> &'static KernelSource {
        SOURCES.iter().find(|s| s.name == file).expect("a kernel file of SOURCES")
    }

    /// Compiles (or reads from the cache) every build `jobs` need that is not loaded yet, one thread each — a
    /// study's first run waits for its slowest file, not for the sum — and loads them.
    pub fn preload(&self, jobs: &[(ConvKernel, Variant, Tuning)]) -> Result<(), GpuError> {
        let builds: Vec<_> = jobs
            .iter()
            .filter(|(_, s, _)| s.is_gpu())
            .map(|(k, s, t)| {
                let (file, options) = self.build(k, *s, *t);
                (ConvGpu::source(file), options)
            })
            .collect();
        let mut stats = self.stats.lock().expect("no panic while holding the stats");
        self.gpu.modules.preload(&self.gpu.ctx, &builds, &mut stats)
    }

    /// The module of one build, loaded on first use.
    fn module(&self, (file, options): &FileBuild) -> Result<Arc<CudaModule>, GpuError> {
        let mut stats = self.stats.lock().expect("no panic while holding the stats");
        self.gpu.modules.get(&self.gpu.ctx, ConvGpu::source(file), options, &mut stats)
    }

    /// The file and options of a strategy for a kernel on this device.
    fn build(&self, kernel: &ConvKernel, strategy: Variant, t: Tuning) -> FileBuild {
        build_of(&self.gpu.arch, kernel, strategy, t)
    }

    /// `strategy` loaded for `kernel`: refused in one line where it cannot take the kernel.
    pub fn prepare(&self, kernel: &ConvKernel, strategy: Variant, t: Tuning) -> Result<Prepared, GpuError> {
        if let Some(why) = refusal(kernel, strategy) {
            return Err(GpuError::Refused(why));
        }
        let (strip_columns, tunings) = tunings_of(kernel, strategy, t);
        self.preload(&tunings.iter().map(|&t| (kernel.clone(), strategy, t)).collect::<Vec<_>>())?;
        let modules: Vec<Arc<CudaModule>> =
            tunings.iter().map(|&t| self.module(&self.build(kernel, strategy, t))).collect::<Result<_, _>>()?;
        let kernels = strategy.kernels().expect("refusal lets through only the filter's strategies");
        let (launch, module) = (kernels.launch.as_ref().expect("a GPU strategy"), &modules[0]);
        // The first build's functions; each further build (a box's other columns a thread) adds its one kernel.
        let mut functions = launch.functions.iter().map(|n| module.load_function(n)).collect::<Result<Vec<_>, _>>()?;
        for m in &modules[1..] {
            functions.push(m.load_function(launch.functions[0])?);
        }
        let stream = &self.gpu.stream;
        let bytes = |v: &[i32]| v.iter().flat_map(|t| t.to_le_bytes()).collect::<Vec<u8>>();
        let set = |name: &str, v: &[i32]| -> Result<(), GpuError> {
            let mut symbol = module.get_global(name, stream)?;
            stream.memcpy_htod(&bytes(v), &mut symbol)?;
            Ok(())
        };
        let mut taps = None;
        match kernels.taps {
            Taps::Global => taps = Some(stream.clone_htod(&kernel.taps)?),
            Taps::Constant => set("c_taps", &kernel.taps)?,
            Taps::ConstantFactors => {
                let (column, row) = kernel.factors().expect("checked by refusal");
                set("c_column", &column)?;
                set("c_row", &row)?;
            }
            _ => {}
        }
        let gradient = kernel.kind == Kind::Gradient;
        let block = launch.block.unwrap_or(t.block.unwrap_or(conv_single::BLOCK));
        let two_pass = two_pass(kernel, strategy, t);
        let overlap = t.overlap && launches_an_image(kernel, strategy, t) == 1;
        Ok(Prepared {
            strategy,
            launcher: launch.launcher,
            functions,
            taps,
            block,
            two_pass,
            strip_columns,
            strip_rows: t.strip_rows,
            strip_march: (is_box(kernel), kernel.ring_stride()),
            side: kernel.side(),
            sums: 1 + gradient as usize,
            acc_bytes: if kernel.wide() { 8 } else { 4 },
            overlap: overlap && self.gpu.ctx.compute_capability().is_ok_and(|(major, _)| major >= 9),
            _modules: modules,
        })
    }

    /// `strategy` for `kernel`, prepared on first use and kept: the engine's calls (`batch --kernel`, the Python
    /// package) run the same kernel again and again. Its taps are on the device when it returns, so that a launch on
    /// any stream may read them.
    pub fn prepared(&self, kernel: &ConvKernel, strategy: Variant) -> Result<Arc<Prepared>, GpuError> {
        let mut kept = self.kept.lock().expect("no panic while holding the prepared kernels");
        let key = (kernel.clone(), strategy);
        if let Some(p) = kept.get(&key) {
            return Ok(p.clone());
        }
        let p = Arc::new(self.prepare(kernel, strategy, Tuning::default())?);
        self.gpu.stream.synchronize()?;
        kept.insert(key, p.clone());
        Ok(p)
    }

    /// The filter of `img` by a GPU strategy: uploaded, filtered, downloaded (the filter command's path).
    pub fn run(
        &self,
        img: &Planes,
        kernel: &ConvKernel,
        strategy: Variant,
        border: Border,
    ) -> Result<Planes, GpuError> {
        self.run_prepared(&self.prepare(kernel, strategy, Tuning::default())?, img, border)
    }

    /// [`ConvGpu::run`] of a strategy already prepared.
    pub fn run_prepared(&self, prepared: &Prepared, img: &Planes, border: Border) -> Result<Planes, GpuError> {
        let d = Dims::new(img.width as u32, img.height as u32)?;
        let stream = &self.gpu.stream;
        let input = stream.clone_htod(&img.data)?;
        let mut out = stream.alloc_zeros::<u8>(img.data.len())?;
        let mut scratch = stream.alloc_zeros::<u8>(prepared.scratch_bytes(img.data.len()).max(1))?;
        prepared.enqueue(stream, (d, img.planes as u32, border), &input, &mut out, &mut scratch)?;
        let data = stream.clone_dtoh(&out)?;
        Ok(Planes { data, ..img.clone() })
    }
}
