//! `cuda/conv_single.cu` — MAP, the plain convolution: taps read from global memory. `filter --variant gpu-single`.
//!
//! `conv_single(const u8* in, u8* out, int* gx_plane, int width, int height, int border, int pass, const int* taps)`
//! reads `planes·w·h` bytes and `side²` taps, and writes `planes·w·h` bytes (pass 0 or 2) or `planes·w·h` ints of
//! the Gx plane (pass 1), which pass 2 reads.

use cudarc::driver::{CudaFunction, CudaSlice, DriverError};

use super::KernelSource;
use crate::gpu::conv::ConvJob;

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "conv_single", source: include_str!("../../../cuda/conv_single.cu") };

/// The default block shape (any shape computes the same).
pub const BLOCK: (u32, u32) = (32, 8);

/// Launches one pass.
pub fn launch(
    job: &ConvJob,
    f: &CudaFunction,
    (input, out, gx): (&CudaSlice<u8>, &mut CudaSlice<u8>, &mut CudaSlice<u8>),
    pass: i32,
    taps: &CudaSlice<i32>,
) -> Result<(), DriverError> {
    // Its launch is `launch_conv_pass`'s, with the taps as the kernel's last argument.
    super::launch_conv_pass(job, f, (input, out, gx), (pass, Some(taps)), job.grid(job.block))
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
