//! `cuda/strip.cu` — STENCIL WITH A ROLLING WINDOW down 16-pixel column strips: each thread marches along
//! `rows` rows keeping three grey rows in registers, so every input byte is read from DRAM once and every
//! grey value computed once. gpu-strip, the fastest; batch mode and host → host use it too.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DriverError, LaunchConfig, PushKernelArg};

use super::{check_rgb_out, Job, KernelSource, Pattern, Scratch};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "strip", source: include_str!("../../../cuda/strip.cu") };

/// strip.cu's STRIP_THREADS: threads per block of the 1D grid.
pub const THREADS: u32 = 128;
/// Pixels per thread across (row16.cuh's GROUP).
const GROUP: u64 = 16;
/// Fewest rows a thread marches, even when that leaves part of the GPU idle: measured best for small
/// images (docs/performance.md, v0.3c: the rows-per-thread sweep at 2048×1024).
pub const MIN_ROWS: u64 = 4;

/// The loaded kernels of this pattern.
pub struct Strip {
    /// [general, aligned (width % 16 == 0)]
    f: [CudaFunction; 2],
}

impl Strip {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Strip, DriverError> {
        Ok(Strip { f: [m.load_function("sobel_strip_general")?, m.load_function("sobel_strip_aligned")?] })
    }
}

impl Pattern for Strip {
    /// `sobel_strip_{general,aligned}(const u8* rgb, u8* out, int width, int height, int border, int rows)`:
    /// reads 3·w·h bytes, writes w·h bytes; the aligned form only when width % 16 == 0.
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        _: &mut Scratch,
    ) -> Result<(), DriverError> {
        let d = job.d;
        check_rgb_out(rgb, out, d);
        let f = &self.f[d.aligned16() as usize];
        // One wave: as many threads as the GPU holds at once (occupancy of this kernel × SMs), each marching
        // down `rows` rows; bands as tall as that allows (the 2 halo rows per band are then negligible for
        // large images), and every block resident from start to end (no tail wave).
        let groups = (d.width as u64).div_ceil(GROUP);
        let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(THREADS, 0, None)?.max(1) as u64;
        let resident = per_sm * THREADS as u64 * job.multiprocessors.max(1) as u64;
        let bands = (resident / groups).clamp(1, d.height as u64);
        let rows = (d.height as u64).div_ceil(bands).max(MIN_ROWS);
        let threads = groups * (d.height as u64).div_ceil(rows);
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(threads.div_ceil(THREADS as u64)).expect("fits a 1D grid"), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (rows, border) = (rows as i32, job.border_arg());
        let mut b = job.stream.launch_builder(f);
        b.arg(rgb).arg(out).arg(&d.width).arg(&d.height).arg(&border).arg(&rows);
        // SAFETY: see the module contract in patterns/mod.rs; sizes checked above, arguments match the C
        // signature.
        unsafe { b.launch(cfg) }.map(drop)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert!(super::SOURCE.source.contains(&format!("#define STRIP_THREADS {} ", super::THREADS)));
        let row16 = include_str!("../../../cuda/row16.cuh");
        assert!(row16.contains(&format!("#define GROUP {}\n", super::GROUP)));
        assert!(super::SOURCE.source.contains(&format!("at least {} rows a\n// thread", super::MIN_ROWS)));
    }
}
