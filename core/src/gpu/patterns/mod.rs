//! One Rust file per `cuda/*.cu` pattern, so that a student can open `cuda/strip.cu` and `strip.rs` side by
//! side: each file here holds its kernel file's source (`include_str!`), its launch shape (constants that a
//! test checks against the `.cu` file), its kernels once loaded, the device buffers it needs beyond the RGB
//! input and the output, and its one `unsafe` launch with the safety contract.
//!
//! The safety contract, common to every launch: a kernel may touch exactly the bytes its buffers hold. Each
//! [`Pattern::enqueue`] states what its kernels read and write for an image of [`Dims`], checks that the
//! buffers are at least that large (a failed check is a bug in the caller, so it panics before anything is
//! launched), and passes the arguments in the order and types of the kernel's C signature, which is
//! repeated above each launch. `Dims` guarantees width, height > 0 and that they fit the kernels' `int`
//! parameters. Launch errors (bad configuration, too many resources) come back as `DriverError`; errors
//! during execution surface at the next synchronisation, which every caller performs.

/// Every kernel file, once: `cuda/<name>.cu` and its Rust twin `core/src/gpu/patterns/<name>.rs`. Calls
/// `$then!([edge files], [shared files], [filter files])`: this module declares the twins and [`SOURCES`] from it,
/// [`super::prebuilt`] embeds the machine code of the edge and shared files' default build
/// (`kernels/sm_90/<name>.cubin`), and `tests/kernels.rs` checks the list against `cuda/` — so a new kernel file is
/// named here, and only here. The edge files are built with the edge command's options (`Build`); the filter files
/// (`cuda_sobel filter`) are compiled for each filter kernel (`core/src/gpu/conv/`); the shared files are filter files
/// that the edge command also runs, built for its stencil (`Build::conv_defines`), the default build prebuilt.
macro_rules! kernel_files {
    ($then:ident) => {
        $then!(
            [
                map,
                fused_map,
                fused,
                n_per_thread,
                separable,
                tiled,
                vec16,
                strip,
                canny,
                selftest,
                timing,
                unfilter,
                deflate
            ],
            [conv_constant],
            [
                conv_single,
                conv_double,
                conv_predefined,
                conv_local,
                conv_separable,
                conv_block,
                conv_rolling,
                conv_strip
            ]
        );
    };
}
pub(crate) use kernel_files;

macro_rules! declare {
    ([$($name:ident),*], [$($shared:ident),*], [$($conv:ident),*]) => {
        $(pub mod $name;)*
        $(pub mod $shared;)*
        $(pub mod $conv;)*

        /// Every kernel file, one parallel pattern each (plus the tests' selftest, the timing kernels and batch
        /// mode's PNG unfiltering and deflating), in `kernel_files!`'s order: the edge files, the shared files, then
        /// the filter's.
        pub const SOURCES: [KernelSource; [$(stringify!($name),)* $(stringify!($shared),)* $(stringify!($conv)),*].len()] =
            [$($name::SOURCE,)* $($shared::SOURCE,)* $($conv::SOURCE),*];

        /// How many of [`SOURCES`], the first, are edge files (built with the edge command's options only).
        const EDGE_ONLY: usize = [$(stringify!($name)),*].len();

        /// How many of [`SOURCES`], the first, have edge builds: the edge files and the shared ones.
        pub const EDGE_FILES: usize = EDGE_ONLY + [$(stringify!($shared)),*].len();
    };
}
kernel_files!(declare);

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DriverError, LaunchConfig};

use super::GpuError;
use crate::sobel::Border;
use crate::variant::N1;

/// The files of [`SOURCES`] that the edge command's builds compile, and whose default build is prebuilt: the edge
/// files and the shared ones.
pub fn edge_sources() -> &'static [KernelSource] {
    &SOURCES[..EDGE_FILES]
}

/// Whether `src` is a filter file (`cuda/conv_*.cu`, shared or not): built on `cuda/conv.cuh`, which an edge build
/// configures with `Build::conv_defines`.
pub fn is_filter_file(src: &KernelSource) -> bool {
    SOURCES.iter().position(|s| s.name == src.name).is_some_and(|i| i >= EDGE_ONLY)
}

/// One `.cu` file: its name (also the PTX file's stem) and source text, embedded in the binary.
pub struct KernelSource {
    /// The file's stem (`strip` for `cuda/strip.cu`).
    pub name: &'static str,
    /// Its text, embedded in the binary.
    pub source: &'static str,
}

/// CUDA's limit on grid.y (grid.x allows 2^31 − 1).
pub const MAX_GRID_Y: u64 = 65_535;
/// The most rows one launch handles (grid.y × the shortest block, vec16's); taller images run in bands.
pub const MAX_ROWS: usize = MAX_GRID_Y as usize * vec16::BLOCK.1 as usize;

/// Image dimensions as the kernels take them.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    /// Width in pixels (> 0).
    pub width: i32,
    /// Height in pixels (> 0).
    pub height: i32,
}

impl Dims {
    /// Checks that the kernels can take a `width × height` image in one launch.
    pub fn new(width: u32, height: u32) -> Result<Dims, GpuError> {
        let fits = |v: u32| v > 0 && v <= i32::MAX as u32;
        if !(fits(width) && fits(height)) {
            return Err(GpuError::Unsupported(format!("a {width}×{height} image")));
        }
        if height as usize > MAX_ROWS {
            return Err(GpuError::Unsupported(format!("images over {MAX_ROWS} rows in one launch")));
        }
        Ok(Dims { width: width as i32, height: height as i32 })
    }

    /// width × height.
    pub fn pixels(self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Whether rows can be read in aligned 16-pixel groups (the fast form of vec16 and strip).
    pub fn aligned16(self) -> bool {
        self.width % 16 == 0
    }

    /// A 2D grid of `block`-shaped blocks covering `width × height` threads.
    pub fn grid(self, block: (u32, u32)) -> LaunchConfig {
        LaunchConfig {
            grid_dim: ((self.width as u32).div_ceil(block.0), (self.height as u32).div_ceil(block.1), 1),
            block_dim: (block.0, block.1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// What one launch of a variant needs besides its buffers.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    /// The stream to launch on.
    pub stream: &'a Arc<CudaStream>,
    /// The image (or band) size.
    pub d: Dims,
    /// What the stencil sees beyond the edge.
    pub border: Border,
    /// gpu-n1's granularity (the other patterns ignore it).
    pub n1: N1,
    /// The device's SMs (strip sizes its one wave by them).
    pub multiprocessors: u32,
    /// Bytes each pixel's output takes (the build's [`crate::sobel::Output`]: 1 for the edges).
    pub out_bytes: usize,
}

impl Job<'_> {
    /// The border as the kernels take it: `BORDER_*` of `cuda/sobel.cuh` (a test checks the values).
    pub fn border_arg(&self) -> i32 {
        self.border as i32
    }
}

/// The device buffers a pattern needs besides the RGB input and the output.
pub enum Scratch {
    /// Patterns with no intermediate.
    None,
    /// map.cu's intermediates: the grey image and the exact gradients (16 or 32 bits each, by the stencil).
    Map {
        /// The grey image.
        grey: CudaSlice<u8>,
        /// The exact horizontal gradient, as bytes.
        gx: CudaSlice<u8>,
        /// The exact vertical gradient, as bytes.
        gy: CudaSlice<u8>,
    },
    /// fused_map.cu's one intermediate: the grey image.
    Grey(CudaSlice<u8>),
    /// separable.cu's row pass: a (smoothing, difference) pair of shorts per pixel, held as u32.
    RowPass(CudaSlice<u32>),
}

/// A variant's kernels, as the runner uses them.
pub trait Pattern {
    /// Device bytes per pixel of the intermediates [`Pattern::scratch`] allocates.
    fn scratch_bytes_per_pixel(&self) -> usize {
        0
    }

    /// Allocates the intermediates for `pixels` pixels (uninitialised: the kernels write them in full
    /// before reading them).
    fn scratch(&self, _stream: &Arc<CudaStream>, _pixels: usize) -> Result<Scratch, DriverError> {
        Ok(Scratch::None)
    }

    /// Enqueues the pattern's kernels once: 3·w·h RGB bytes in, w·h outputs of `job.out_bytes` bytes out.
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        scratch: &mut Scratch,
    ) -> Result<(), DriverError>;
}

/// Checks the buffers of an RGB → output launch (the module contract's size check).
fn check_rgb_out(rgb: &CudaSlice<u8>, out: &CudaSlice<u8>, job: &Job) {
    let d = job.d;
    assert!(rgb.len() >= 3 * d.pixels() && out.len() >= job.out_bytes * d.pixels(), "buffers smaller than the image");
}

/// The `WxH` of a `.cu` file's "Launch shape: … W×H blocks" comment, for the launch-shape tests.
#[cfg(test)]
fn launch_shape_in(source: &str) -> (u32, u32) {
    let line = source.lines().find(|l| l.contains("Launch shape:")).expect("a Launch shape line");
    let shape = line.split_whitespace().find(|w| w.contains('×')).expect("a W×H in the Launch shape line");
    let (w, h) = shape.split_once('×').unwrap();
    (w.parse().unwrap(), h.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().unwrap())
}

/// A pattern of one kernel of the C signature `(const u8* rgb, out_t* out, int width, int height, int border)`
/// on a 2D grid of `block`-shaped blocks, one thread per pixel: fused.cu and tiled.cu, which differ in their `.cu`
/// file alone.
pub struct RgbKernel {
    f: cudarc::driver::CudaFunction,
    block: (u32, u32),
}

impl RgbKernel {
    /// Loads `name` from `m`, to be launched in `block`-shaped blocks.
    pub fn load(m: &Arc<cudarc::driver::CudaModule>, name: &str, block: (u32, u32)) -> Result<RgbKernel, DriverError> {
        Ok(RgbKernel { f: m.load_function(name)?, block })
    }
}

impl Pattern for RgbKernel {
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        _: &mut Scratch,
    ) -> Result<(), DriverError> {
        launch_rgb_kernel(job, &self.f, rgb, out, job.d.grid(self.block))
    }
}

/// Launches a kernel of the C signature `(const u8* rgb, out_t* out, int width, int height, int border)`, which
/// reads 3·w·h bytes and writes w·h outputs of `job.out_bytes` (fused, tiled, vec16).
fn launch_rgb_kernel(
    job: &Job,
    f: &cudarc::driver::CudaFunction,
    rgb: &CudaSlice<u8>,
    out: &mut CudaSlice<u8>,
    cfg: LaunchConfig,
) -> Result<(), DriverError> {
    use cudarc::driver::PushKernelArg;
    let (d, border) = (job.d, job.border_arg());
    check_rgb_out(rgb, out, job);
    let mut b = job.stream.launch_builder(f);
    b.arg(rgb).arg(out).arg(&d.width).arg(&d.height).arg(&border);
    // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
    unsafe { b.launch(cfg) }.map(drop)
}

/// A filter map pass built for an edge build (conv_constant.cu): one launch of pass 0 (both gradients
/// from one read of each window) on the RGB image, through `launch_conv_pass`.
pub struct EdgeMap {
    f: cudarc::driver::CudaFunction,
    kernel: crate::conv::ConvKernel,
    block: (u32, u32),
}

impl EdgeMap {
    /// Loads kernel `name` from the module of `build`, to be launched in `block`s.
    pub fn load(
        m: &Arc<cudarc::driver::CudaModule>,
        name: &str,
        build: crate::gpu::kernels::Build,
        block: (u32, u32),
    ) -> Result<EdgeMap, DriverError> {
        Ok(EdgeMap { f: m.load_function(name)?, kernel: build.kernel(), block })
    }
}

impl Pattern for EdgeMap {
    /// Reads 3·w·h bytes of RGB, writes w·h outputs of `job.out_bytes`; no Gx plane.
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        _: &mut Scratch,
    ) -> Result<(), DriverError> {
        let job = crate::gpu::conv::ConvJob::of_edges(job, &self.kernel, self.block);
        launch_conv_pass(&job, &self.f, (rgb, out, None), (0, None), job.grid(self.block))
    }
}

/// One argument of a filter kernel, as [`launch_conv`] hands it to the driver (which reads each from its address).
pub(crate) enum Arg {
    /// A device pointer.
    Ptr(cudarc::driver::sys::CUdeviceptr),
    /// An `int`.
    Int(i32),
}

/// Launches a filter kernel (`cuda/conv_*.cu`) with `args` on `job.stream`. With `overlap` (the job's: a strategy of
/// one launch an image, `conv::launches_an_image`), through `cuLaunchKernelEx` with
/// programmatic stream serialization allowed, so that the kernel's blocks may start while the launch before is
/// still finishing (`next_launch_may_start` in `cuda/conv.cuh` says why that stays correct); otherwise as any
/// launch. Only on a created stream: on the legacy default stream a launch so made still waited for the one before
/// (measured on the H100).
///
/// # Safety
/// `args` follow the kernel's C signature, `cfg` is the grid its indexing assumes, and the buffers behind its pointers
/// hold every byte it touches (the callers check them with [`ConvJob::check_io`] first).
///
/// [`ConvJob::check_io`]: crate::gpu::conv::ConvJob::check_io
pub(crate) unsafe fn launch_conv(
    job: &crate::gpu::conv::ConvJob,
    f: &cudarc::driver::CudaFunction,
    cfg: LaunchConfig,
    args: &mut [Arg],
    overlap: bool,
) -> Result<(), DriverError> {
    use cudarc::driver::sys;
    let mut params: Vec<*mut std::ffi::c_void> = args
        .iter_mut()
        .map(|a| match a {
            Arg::Ptr(p) => (p as *mut sys::CUdeviceptr).cast(),
            Arg::Int(i) => (i as *mut i32).cast(),
        })
        .collect();
    // SAFETY: forwarded from the caller.
    unsafe { launch_after(f, cfg, job.stream.cu_stream(), &mut params, overlap) }
}

/// Launches `f` on `stream` with `params` (the addresses of its arguments). With `overlap`, through
/// `cuLaunchKernelEx` with programmatic stream serialization allowed: its blocks may start once every block of the
/// launch before has called `allow_next_launch` (`cuda/sobel.cuh`), so a kernel that reads what that launch wrote
/// must call `wait_for_previous_launch` first. Only on a GPU of compute capability 9.0 or later (the callers check).
///
/// # Safety
/// `params` follow the kernel's C signature, `cfg` is the grid its indexing assumes, the memory behind its pointers
/// holds every byte it touches until it has run, and `stream` is a live stream of the kernel's context.
pub(crate) unsafe fn launch_after(
    f: &cudarc::driver::CudaFunction,
    cfg: LaunchConfig,
    stream: cudarc::driver::sys::CUstream,
    params: &mut [*mut std::ffi::c_void],
    overlap: bool,
) -> Result<(), DriverError> {
    use cudarc::driver::sys;
    if !overlap {
        let (g, b, shared) = (cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes);
        // SAFETY: forwarded from the caller.
        return unsafe { cudarc::driver::result::launch_kernel(f.cu_function(), g, b, shared, stream, params) };
    }
    // SAFETY (of the union): an all-zero attribute value is valid; the one field this attribute reads is set next.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.programmaticStreamSerializationAllowed = 1;
    let id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    let mut attribute = sys::CUlaunchAttribute { id, pad: [0; 4], value };
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream,
        attrs: &mut attribute,
        numAttrs: 1,
    };
    // SAFETY: forwarded from the caller; `config` and its one attribute outlive the call.
    unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()).result() }
}

/// Launches a filter map pass of the C signature
/// `(const u8* in, out_t* out, int* gx_plane, int width, int height, int border, int pass)` (conv_constant.cu,
/// conv_predefined.cu, conv_local.cu, which differ in their `.cu` file alone), and with `taps` a last argument
/// `const int* taps` (conv_single.cu): reads `planes·w·h` pixels of `job.in_bytes` (and the taps), writes as many
/// outputs of `job.out_bytes` (pass 0 or 2) or `planes·w·h` ints of the Gx plane `gx` (pass 1), which pass 2 reads.
/// Pass 0 touches no Gx plane (`gx` may be `None`: a null pointer).
pub(crate) fn launch_conv_pass(
    job: &crate::gpu::conv::ConvJob,
    f: &cudarc::driver::CudaFunction,
    (input, out, gx): (&CudaSlice<u8>, &mut CudaSlice<u8>, Option<&mut CudaSlice<u8>>),
    (pass, taps): (i32, Option<&CudaSlice<i32>>),
    cfg: LaunchConfig,
) -> Result<(), DriverError> {
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    job.check(input, out, gx.as_deref(), pass);
    assert!(taps.is_none_or(|t| t.len() >= job.side * job.side), "a tap buffer smaller than the kernel");
    let s = job.stream;
    let ((i, _read), (o, _written)) = (input.device_ptr(s), out.device_ptr_mut(s));
    let gx = gx.map(|g| g.device_ptr_mut(s));
    let taps = taps.map(|t| t.device_ptr(s));
    let (d, border) = (job.d, job.border);
    let mut args = vec![
        Arg::Ptr(i),
        Arg::Ptr(o),
        Arg::Ptr(gx.as_ref().map_or(0, |(g, _)| *g)),
        Arg::Int(d.width),
        Arg::Int(d.height),
        Arg::Int(border),
        Arg::Int(pass),
    ];
    args.extend(taps.as_ref().map(|(t, _)| Arg::Ptr(*t)));
    // SAFETY: see the module contract; `ConvJob::check` and the assert above checked every buffer against what the
    // kernel touches, the arguments follow the C signature above, and a kernel with a shared tile gets the block it
    // was compiled for (the caller's `cfg`).
    unsafe { launch_conv(job, f, cfg, &mut args, job.overlap) }
}

/// Launches a filter kernel of the C signature `(const u8* in, out_t* out, int width, int height, int border)`
/// (conv_double.cu, conv_block.cu, conv_rolling.cu, conv_separable.cu's fused kernel): reads `planes·w·h` pixels of
/// `job.in_bytes` and writes as many outputs of `job.out_bytes`.
pub(crate) fn launch_conv_io(
    job: &crate::gpu::conv::ConvJob,
    f: &cudarc::driver::CudaFunction,
    input: &CudaSlice<u8>,
    out: &mut CudaSlice<u8>,
    cfg: LaunchConfig,
) -> Result<(), DriverError> {
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    job.check_io(input, out, &mut None);
    let ((i, _read), (o, _written)) = (input.device_ptr(job.stream), out.device_ptr_mut(job.stream));
    let mut args = [Arg::Ptr(i), Arg::Ptr(o), Arg::Int(job.d.width), Arg::Int(job.d.height), Arg::Int(job.border)];
    // SAFETY: see the module contract; `ConvJob::check_io` checked both buffers against what the kernel touches, the
    // arguments follow the C signature above, and the caller's `cfg` is the block shape the kernel indexes by.
    unsafe { launch_conv(job, f, cfg, &mut args, job.overlap) }
}
