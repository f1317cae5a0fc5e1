//! `cuda/fused.cu` — FULL FUSION: one kernel from RGB to magnitude, one thread per pixel, no intermediate in device memory. gpu-fused.
//!
//! Its one kernel, `sobel_fused(const u8* rgb, out_t* out, int width, int height, int border)`, reads 3·w·h bytes
//! and writes w·h outputs; the launch and its safety contract are [`RgbKernel`]'s.

use std::sync::Arc;

use cudarc::driver::{CudaModule, DriverError};

use super::{KernelSource, RgbKernel};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "fused", source: include_str!("../../../../cuda/fused.cu") };

/// 32×8: a warp spans 32 consecutive pixels of one row, so its loads and stores are coalesced.
pub const BLOCK: (u32, u32) = (32, 8);

/// Loads the kernels from the compiled module.
pub fn load(m: &Arc<CudaModule>) -> Result<RgbKernel, DriverError> {
    RgbKernel::load(m, "sobel_fused", BLOCK)
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
