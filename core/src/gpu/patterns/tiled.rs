//! `cuda/tiled.cu` — TILING WITH HALO: a block converts its tile plus a one-pixel halo to grey in shared memory once, then each thread reads its 3×3 neighbourhood from there. gpu-tiled.
//!
//! Its one kernel, `sobel_tiled(const u8* rgb, out_t* out, int width, int height, int border)`, reads 3·w·h bytes
//! and writes w·h outputs; the launch and its safety contract are [`RgbKernel`]'s.

use std::sync::Arc;

use cudarc::driver::{CudaModule, DriverError};

use super::{KernelSource, RgbKernel};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "tiled", source: include_str!("../../../../cuda/tiled.cu") };

/// tiled.cu's TILE_W × TILE_H: one thread per output of the tile.
pub const BLOCK: (u32, u32) = (32, 8);

/// Loads the kernels from the compiled module.
pub fn load(m: &Arc<CudaModule>) -> Result<RgbKernel, DriverError> {
    RgbKernel::load(m, "sobel_tiled", BLOCK)
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
        for (name, v) in [("TILE_W", super::BLOCK.0), ("TILE_H", super::BLOCK.1)] {
            assert!(super::SOURCE.source.contains(&format!("#define {name} {v}\n")), "tiled.cu: {name} {v}");
        }
    }
}
