//! `cuda/conv_block.cu` — 16 pixels per thread with 16-byte vector loads. `filter --variant gpu-block`.
//!
//! `conv_block(const u8* in, u8* out, int width, int height, int border)` reads `planes·w·h` bytes and writes
//! `planes·w·h` bytes.

use cudarc::driver::{CudaFunction, CudaSlice, DriverError};

use super::KernelSource;
use crate::gpu::conv::ConvJob;

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "conv_block", source: include_str!("../../../../cuda/conv_block.cu") };

/// 64×4 threads, each 16 pixels of one row: a block covers 1024×4 pixels.
pub const BLOCK: (u32, u32) = (64, 4);

/// Outputs per thread (BLOCK_PIXELS in the `.cu` file).
pub const PIXELS_PER_THREAD: u32 = 16;

/// Launches the kernel.
pub fn launch(job: &ConvJob, f: &CudaFunction, input: &CudaSlice<u8>, out: &mut CudaSlice<u8>) -> Result<(), DriverError> {
    super::launch_conv_io(job, f, input, out, job.grid_of((BLOCK.0 * PIXELS_PER_THREAD, BLOCK.1), BLOCK))
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
        let define = format!("#define BLOCK_PIXELS {}\n", super::PIXELS_PER_THREAD);
        assert!(super::SOURCE.source.contains(&define), "conv_block.cu: {define}");
    }
}
