//! `cuda/conv_single.cu` — MAP, the plain convolution: taps read from global memory. `filter --variant gpu-single`.
//!
//! `conv_single(const u8* in, u8* out, int* gx_plane, int width, int height, int border, int pass, const int* taps)`
//! reads `planes·w·h` bytes and `side²` taps, and writes `planes·w·h` bytes (pass 0 or 2) or `planes·w·h` ints of
//! the Gx plane (pass 1), which pass 2 reads.

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DevicePtrMut, DriverError};

use super::Arg;

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
    job.check(input, out, gx, pass);
    assert!(taps.len() >= job.side * job.side, "a tap buffer smaller than the kernel");
    let s = job.stream;
    let ((i, _read), (o, _written), (g, _gx)) = (input.device_ptr(s), out.device_ptr_mut(s), gx.device_ptr_mut(s));
    let (t, _taps) = taps.device_ptr(s);
    let (d, border) = (job.d, job.border);
    let mut args = [
        Arg::Ptr(i),
        Arg::Ptr(o),
        Arg::Ptr(g),
        Arg::Int(d.width),
        Arg::Int(d.height),
        Arg::Int(border),
        Arg::Int(pass),
        Arg::Ptr(t),
    ];
    // SAFETY: see the module contract of `patterns`; `ConvJob::check` and the assert above checked every buffer
    // against what the kernel touches, and the arguments follow the C signature above.
    unsafe { super::launch_conv(job, f, job.grid(job.block), &mut args, job.overlap) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
