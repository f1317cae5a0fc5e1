//! `cuda/strip.cu` — STENCIL WITH A ROLLING WINDOW down 16-pixel column strips: each thread marches along
//! `rows` rows keeping in registers what the stencil still needs of the rows behind it, so every input byte is
//! read from DRAM once and every grey value computed once. gpu-strip, the fastest; batch mode, host → host and
//! the Python package's GPU arrays use it too.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DevicePtr, DevicePtrMut, DriverError, LaunchConfig};

use super::{check_rgb_out, Dims, Job, KernelSource, Pattern, Scratch};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "strip", source: include_str!("../../../../cuda/strip.cu") };

/// strip.cu's STRIP_THREADS: threads per block of the 1D grid.
pub const THREADS: u32 = 128;
/// Pixels per thread across (row16.cuh's GROUP).
const GROUP: u64 = 16;
/// Fewest rows a thread marches, even when that leaves part of the GPU idle: measured best for small
/// images (a rows-per-thread sweep at 2048×1024, H200).
pub const MIN_ROWS: u64 = 4;
/// The general form's groups at a row's ends (strip.cu's edge groups): at most this many a row, each marching bands
/// of at most `EDGE_ROWS` rows, in the first warp of the first blocks (strip.cu says why).
const EDGE_GROUPS: u64 = 3;
const EDGE_ROWS: u64 = 4;

/// The loaded kernels of this pattern.
pub struct Strip {
    /// [general, aligned (width % 16 == 0, both arrays 16-byte aligned)]
    f: [CudaFunction; 2],
    /// Blocks of each form resident per SM, asked of the driver once: a driver call per launch cost ~2 µs of
    /// the Python package's 24 µs call at 2048×1024.
    per_sm: [std::sync::OnceLock<u64>; 2],
}

impl Strip {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Strip, DriverError> {
        Ok(Strip {
            f: [m.load_function("sobel_strip_general")?, m.load_function("sobel_strip_aligned")?],
            per_sm: Default::default(),
        })
    }
}

impl Strip {
    /// The launch shape for `d`: one wave — as many threads as the GPU holds at once (occupancy of this
    /// kernel × SMs), each marching down `rows` rows; bands as tall as that allows (the 2 halo rows per band
    /// are then negligible for large images), and every block resident from start to end (no tail wave).
    /// `images` equally sized images go side by side on the grid's y axis.
    fn config(&self, d: Dims, form: usize, images: u32, multiprocessors: u32) -> Result<(LaunchConfig, i32), DriverError> {
        let groups = (d.width as u64).div_ceil(GROUP);
        let per_sm = match self.per_sm[form].get() {
            Some(&n) => n,
            None => {
                let n = self.f[form].occupancy_max_active_blocks_per_multiprocessor(THREADS, 0, None)?.max(1) as u64;
                *self.per_sm[form].get_or_init(|| n)
            }
        };
        let resident = per_sm * THREADS as u64 * multiprocessors.max(1) as u64 / images.max(1) as u64;
        let bands = (resident / groups).clamp(1, d.height as u64);
        let rows = (d.height as u64).div_ceil(bands).max(MIN_ROWS);
        let threads = groups * (d.height as u64).div_ceil(rows);
        let mut blocks = threads.div_ceil(THREADS as u64);
        if form == 0 {
            // The edge groups: at most EDGE_GROUPS a row in bands of at most EDGE_ROWS rows, a warp of them in each of
            // the first blocks, the others' threads after them (those past the last band return).
            let edge_warps = (EDGE_GROUPS.min(groups) * (d.height as u64).div_ceil(rows.min(EDGE_ROWS))).div_ceil(32);
            blocks = (threads + 32 * edge_warps).div_ceil(THREADS as u64).max(edge_warps);
        }
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(blocks).expect("fits a 1D grid"), images.max(1), 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        Ok((cfg, rows as i32))
    }

    /// Enqueues gpu-strip on raw device memory: `images` packed `d`-sized RGB images at `rgb` to as many
    /// edge images at `out`, on `stream` — which may belong to another library (PyTorch, CuPy): the Python
    /// package passes the caller's arrays and current stream here, so no copy and no synchronisation is
    /// added. The one unsafe launch of this pattern; [`Pattern::enqueue`] comes here too.
    ///
    /// # Safety
    /// `rgb` must hold `3 · images · d.pixels()` readable bytes and `out` `images · d.pixels()` writable
    /// outputs of the build's size (`Output::bytes_per_pixel`: gradients are two planes, Gx's for every image
    /// then Gy's) of device memory of this context, not written by anything else until the launch has run on
    /// `stream`, a live stream of this context.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch_raw(
        &self,
        stream: cudarc::driver::sys::CUstream,
        rgb: cudarc::driver::sys::CUdeviceptr,
        out: cudarc::driver::sys::CUdeviceptr,
        d: Dims,
        images: u32,
        border: i32,
        multiprocessors: u32,
    ) -> Result<(), DriverError> {
        // The aligned form loads and stores 16-byte words: every row must start 16-byte aligned, which a width
        // that is a multiple of 16 gives when both arrays do (another library's array may start anywhere).
        let form = (d.aligned16() && rgb % 16 == 0 && out % 16 == 0) as usize;
        let (cfg, rows) = self.config(d, form, images, multiprocessors)?;
        let f = &self.f[form];
        let (mut rgb, mut out, mut width, mut height, mut border, mut rows) =
            (rgb, out, d.width, d.height, border, rows);
        let mut args: [*mut std::ffi::c_void; 6] = [
            (&mut rgb as *mut u64).cast(),
            (&mut out as *mut u64).cast(),
            (&mut width as *mut i32).cast(),
            (&mut height as *mut i32).cast(),
            (&mut border as *mut i32).cast(),
            (&mut rows as *mut i32).cast(),
        ];
        // SAFETY: the arguments match the C signature `(const u8*, out_t*, int, int, int, int)` (width and height
        // fit an int: Dims checks); the caller guarantees the memory and the stream.
        unsafe {
            cudarc::driver::result::launch_kernel(
                f.cu_function(),
                cfg.grid_dim,
                cfg.block_dim,
                cfg.shared_mem_bytes,
                stream,
                &mut args,
            )
        }
    }
}

impl Pattern for Strip {
    /// `sobel_strip_{general,aligned}(const u8* rgb, out_t* out, int width, int height, int border, int rows)`:
    /// reads 3·w·h bytes, writes w·h outputs of `job.out_bytes`; the aligned form only when width % 16 == 0.
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        _: &mut Scratch,
    ) -> Result<(), DriverError> {
        let d = job.d;
        check_rgb_out(rgb, out, job);
        let (rgb_ptr, _read) = rgb.device_ptr(job.stream);
        let (out_ptr, _write) = out.device_ptr_mut(job.stream);
        // SAFETY: sizes checked above; the guards order this launch after the buffers' earlier uses and
        // later uses after it; the stream is this context's.
        unsafe {
            self.launch_raw(job.stream.cu_stream(), rgb_ptr, out_ptr, d, 1, job.border_arg(), job.multiprocessors)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert!(super::SOURCE.source.contains(&format!("#define STRIP_THREADS {} ", super::THREADS)));
        let row16 = include_str!("../../../../cuda/row16.cuh");
        assert!(row16.contains(&format!("#define GROUP {}\n", super::GROUP)));
        assert!(super::SOURCE.source.contains(&format!("at least {} rows a\n// thread", super::MIN_ROWS)));
        assert!(super::SOURCE.source.contains(&format!("#define EDGE_ROWS {}\n", super::EDGE_ROWS)));
    }
}
