//! `cuda/vec16.cu` — WORK GRANULARITY BY REGISTER BLOCKING: each thread produces 16 adjacent outputs of one
//! row from 16-byte loads, its grey values reused from registers. gpu-vec16.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DriverError};

use super::{launch_rgb_kernel, Dims, Job, KernelSource, Pattern, Scratch};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "vec16", source: include_str!("../../../../cuda/vec16.cu") };

/// 32 groups of 16 pixels across, 4 rows (vec16.cu's "Launch shape").
pub const BLOCK: (u32, u32) = (32, 4);
/// Pixels per thread.
pub const GROUP: u32 = 16;

/// The loaded kernels of this pattern.
pub struct Vec16 {
    /// [general, aligned (width % 16 == 0)]
    f: [CudaFunction; 2],
}

impl Vec16 {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Vec16, DriverError> {
        Ok(Vec16 { f: [m.load_function("sobel_vec16_general")?, m.load_function("sobel_vec16_aligned")?] })
    }
}

impl Pattern for Vec16 {
    /// `sobel_vec16_{general,aligned}(const u8* rgb, out_t* out, int width, int height, int border)`: reads
    /// 3·w·h bytes, writes w·h outputs; the aligned form only when width % 16 == 0. The grid covers groups of 16.
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        _: &mut Scratch,
    ) -> Result<(), DriverError> {
        let d = job.d;
        let groups = Dims { width: (d.width as u32).div_ceil(GROUP) as i32, height: d.height };
        launch_rgb_kernel(job, &self.f[d.aligned16() as usize], rgb, out, groups.grid(BLOCK))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
        let row16 = include_str!("../../../../cuda/row16.cuh");
        assert!(row16.contains(&format!("#define GROUP {}\n", super::GROUP)), "row16.cuh's GROUP");
    }
}
