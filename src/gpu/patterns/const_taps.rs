//! `cuda/const_taps.cu` — STENCIL WITH COEFFICIENTS IN CONSTANT MEMORY: fused.cu with its taps read from `__constant__` memory, the "before" of the predefined-coefficients optimisation. gpu-const-taps.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DriverError};

use super::{launch_rgb_kernel, Job, KernelSource, Pattern, Scratch};

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "const_taps", source: include_str!("../../../cuda/const_taps.cu") };

/// 32×8, one thread per pixel, as fused.cu.
pub const BLOCK: (u32, u32) = (32, 8);

/// The loaded kernels of this pattern.
pub struct ConstTaps {
    f: CudaFunction,
}

impl ConstTaps {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<ConstTaps, DriverError> {
        Ok(ConstTaps { f: m.load_function("sobel_const_taps")? })
    }
}

impl Pattern for ConstTaps {
    /// `sobel_const_taps(const u8* rgb, u8* out, int width, int height, int border)`: reads 3·w·h bytes, writes w·h.
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
