//! `cuda/conv_rolling.cu` — a rolling window down each column. `filter --variant gpu-rolling`.
//!
//! `conv_rolling(const u8* in, u8* out, int width, int height, int border)` reads `planes·w·h` bytes and writes
//! `planes·w·h` bytes.

use cudarc::driver::{CudaFunction, CudaSlice, DriverError};

use super::KernelSource;
use crate::gpu::conv::ConvJob;

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "conv_rolling", source: include_str!("../../../../cuda/conv_rolling.cu") };

/// 128 threads, each one column of ROLL_ROWS rows: a block covers 128×ROLL_ROWS pixels.
pub const BLOCK: (u32, u32) = (128, 1);

/// Rows per thread (ROLL_ROWS in the `.cu` file).
pub const ROWS_PER_THREAD: u32 = 32;

/// Launches the kernel.
pub fn launch(job: &ConvJob, f: &CudaFunction, input: &CudaSlice<u8>, out: &mut CudaSlice<u8>) -> Result<(), DriverError> {
    super::launch_conv_io(job, f, input, out, job.grid_of((BLOCK.0, ROWS_PER_THREAD), BLOCK))
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
        let define = format!("#define ROLL_ROWS {}\n", super::ROWS_PER_THREAD);
        assert!(super::SOURCE.source.contains(&define), "conv_rolling.cu: {define}");
    }
}
