//! `cuda/const_taps.cu` — STENCIL WITH COEFFICIENTS IN CONSTANT MEMORY: fused.cu with its taps read from `__constant__` memory, the "before" of the predefined-coefficients optimisation. gpu-const-taps.
//!
//! Its one kernel, `sobel_const_taps(const u8* rgb, out_t* out, int width, int height, int border)`, reads 3·w·h bytes
//! and writes w·h outputs; the launch and its safety contract are [`RgbKernel`]'s.

use std::sync::Arc;

use cudarc::driver::{CudaModule, DriverError};

use super::{KernelSource, RgbKernel};

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "const_taps", source: include_str!("../../../../cuda/const_taps.cu") };

/// 32×8, one thread per pixel, as fused.cu.
pub const BLOCK: (u32, u32) = (32, 8);

/// Loads the kernels from the compiled module.
pub fn load(m: &Arc<CudaModule>) -> Result<RgbKernel, DriverError> {
    RgbKernel::load(m, "sobel_const_taps", BLOCK)
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
