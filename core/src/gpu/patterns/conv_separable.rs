//! `cuda/conv_separable.cu` — SEPARATION: a rank-one kernel as a row pass and a column pass, through a temporary
//! image (`filter --variant gpu-separable`) or through shared memory in one launch (`gpu-separable-fused`).
//!
//! - `conv_rows(const u8* in, acc_t* tmp, int width, int height, int border)`: reads `planes·w·h` bytes, writes
//!   `sums·planes·w·h` sums (`sums` = 2 for a gradient kernel, else 1; `acc_t` 4 or 8 bytes, [`ConvJob::acc_bytes`]);
//! - `conv_columns(const acc_t* tmp, u8* out, int width, int height, int border)`: reads those, writes `planes·w·h`
//!   bytes;
//! - `conv_separable_fused(const u8* in, u8* out, int width, int height, int border)`: reads `planes·w·h` bytes,
//!   writes `planes·w·h` bytes, in blocks of exactly [`BLOCK`].

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DevicePtrMut, DriverError};

use super::Arg;

use super::KernelSource;
use crate::gpu::conv::ConvJob;

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "conv_separable", source: include_str!("../../../../cuda/conv_separable.cu") };

/// SEP_W × SEP_H: the fused kernel's tile, one thread per output (the two-pass kernels take any shape).
pub const BLOCK: (u32, u32) = (32, 8);

/// Launches the two passes through `tmp`.
pub fn launch_two_pass(
    job: &ConvJob,
    (rows, columns): (&CudaFunction, &CudaFunction),
    input: &CudaSlice<u8>,
    out: &mut CudaSlice<u8>,
    tmp: &mut CudaSlice<u8>,
) -> Result<(), DriverError> {
    let mut scratch = Some(&mut *tmp);
    job.check_io(input, out, &mut scratch);
    let (w, h, border) = (job.d.width, job.d.height, job.border);
    let cfg = job.grid(BLOCK);
    {
        let ((i, _read), (t, _written)) = (input.device_ptr(job.stream), tmp.device_ptr_mut(job.stream));
        let mut args = [Arg::Ptr(i), Arg::Ptr(t), Arg::Int(w), Arg::Int(h), Arg::Int(border)];
        // SAFETY: see the module contract of `patterns`; `ConvJob::check_io` checked the image, the output and the
        // temporary image against what the two kernels touch; the arguments follow the C signatures above.
        unsafe { super::launch_conv(job, rows, cfg, &mut args, false) }?;
    }
    let ((t, _read), (o, _written)) = (tmp.device_ptr(job.stream), out.device_ptr_mut(job.stream));
    let mut args = [Arg::Ptr(t), Arg::Ptr(o), Arg::Int(w), Arg::Int(h), Arg::Int(border)];
    // SAFETY: as above.
    unsafe { super::launch_conv(job, columns, cfg, &mut args, false) }
}

/// Launches the fused kernel, in blocks of exactly SEP_W × SEP_H (its shared tile is indexed by them).
pub fn launch_fused(
    job: &ConvJob,
    f: &CudaFunction,
    input: &CudaSlice<u8>,
    out: &mut CudaSlice<u8>,
) -> Result<(), DriverError> {
    super::launch_conv_io(job, f, input, out, job.grid(BLOCK))
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
        for (name, v) in [("SEP_W", super::BLOCK.0), ("SEP_H", super::BLOCK.1)] {
            assert!(super::SOURCE.source.contains(&format!("#define {name} {v}\n")), "conv_separable.cu: {name} {v}");
        }
    }
}
