//! `cuda/conv_double.cu` — MAP computing both gradients from one read. `filter --variant gpu-double`.
//!
//! `conv_double(const u8* in, u8* out, int width, int height, int border)` reads `planes·w·h` bytes and writes
//! `planes·w·h` bytes.

use cudarc::driver::{CudaFunction, CudaSlice, DriverError};

use super::KernelSource;
use crate::gpu::conv::ConvJob;

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "conv_double", source: include_str!("../../../../cuda/conv_double.cu") };

/// The default block shape (any shape computes the same).
pub const BLOCK: (u32, u32) = (32, 8);


/// Launches the kernel.
pub fn launch(job: &ConvJob, f: &CudaFunction, input: &CudaSlice<u8>, out: &mut CudaSlice<u8>) -> Result<(), DriverError> {
    super::launch_conv_io(job, f, input, out, job.grid(job.block))
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
