//! `cuda/fused.cu` — FULL FUSION: one kernel from RGB to magnitude, one thread per pixel, no intermediate in device memory. gpu-fused.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DriverError};

use super::{launch_rgb_kernel, Job, KernelSource, Pattern, Scratch};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "fused", source: include_str!("../../../cuda/fused.cu") };

/// 32×8: a warp spans 32 consecutive pixels of one row, so its loads and stores are coalesced.
pub const BLOCK: (u32, u32) = (32, 8);

/// The loaded kernels of this pattern.
pub struct Fused {
    f: CudaFunction,
}

impl Fused {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Fused, DriverError> {
        Ok(Fused { f: m.load_function("sobel_fused")? })
    }
}

impl Pattern for Fused {
    /// `sobel_fused(const u8* rgb, u8* out, int width, int height, int border)`: reads 3·w·h bytes, writes w·h.
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        _: &mut Scratch,
    ) -> Result<(), DriverError> {
        launch_rgb_kernel(job, &self.f, rgb, out, job.d.grid(BLOCK))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
