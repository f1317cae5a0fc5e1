//! `cuda/conv_constant.cu` — MAP with the taps in constant memory: `--variant gpu-constant` of both commands, for the edge
//! command the "before" of the predefined-coefficients optimisation.
//!
//! `conv_constant(const u8* in, out_t* out, int* gx_plane, int width, int height, int border, int pass)` reads
//! `planes·w·h` pixels (bytes, or packed RGB in an edge build) and writes `planes·w·h` outputs (pass 0 or 2) or
//! `planes·w·h` ints of the Gx plane (pass 1), which pass 2 reads.

use std::sync::Arc;

use cudarc::driver::{CudaModule, DriverError};

use super::{EdgeMap, KernelSource};
use crate::gpu::kernels::Build;

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "conv_constant", source: include_str!("../../../../cuda/conv_constant.cu") };

/// The default block shape (any shape computes the same).
pub const BLOCK: (u32, u32) = (32, 8);

// The filter's launch is the map passes' one, `patterns::launch_conv_pass` (through `gpu::conv`'s launch table): these
// files differ in their `.cu` alone. The edge command's is the same launch ([`EdgeMap`]).

/// Loads the kernel from the module of an edge build: its stencil's taps in constant memory from the start, both
/// gradients from one read of each window.
pub fn load(m: &Arc<CudaModule>, build: Build) -> Result<EdgeMap, DriverError> {
    EdgeMap::load(m, "conv_constant", build, BLOCK)
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
