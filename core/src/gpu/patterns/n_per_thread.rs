//! `cuda/n_per_thread.cu` — WORK GRANULARITY (n:1): n distinct, coalesced pixels per thread; and the
//! report's overlapping mapping (`--mapping report`), kept to measure it. gpu-n1.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DriverError, LaunchConfig, PushKernelArg};

use super::{check_rgb_out, Job, KernelSource, Pattern, Scratch};
use crate::variant::Mapping;

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "n_per_thread", source: include_str!("../../../../cuda/n_per_thread.cu") };

/// Threads per block of the 1D grid (n_per_thread.cu's B).
pub const BLOCK: u32 = 256;

/// The loaded kernels of this pattern.
pub struct NPerThread {
    coalesced: CudaFunction,
    report: CudaFunction,
}

impl NPerThread {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<NPerThread, DriverError> {
        Ok(NPerThread {
            coalesced: m.load_function("sobel_n_per_thread")?,
            report: m.load_function("sobel_n_report_mapping")?,
        })
    }
}

impl Pattern for NPerThread {
    /// `sobel_n_per_thread(const u8* rgb, out_t* out, int width, int height, int border, int n)`: reads 3·w·h
    /// bytes, writes w·h outputs of `job.out_bytes`; each of ⌈w·h / n⌉ threads writes up to n of them.
    /// `sobel_n_report_mapping` (same signature): each of w·h + n threads writes up to n bytes, all below w·h
    /// (the kernel checks every index).
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        _: &mut Scratch,
    ) -> Result<(), DriverError> {
        let d = job.d;
        check_rgb_out(rgb, out, job);
        assert!((1..=64).contains(&job.n1.n), "n is 1..=64");
        let n = job.n1.n as u64;
        let (f, blocks) = match job.n1.mapping {
            Mapping::Coalesced => (&self.coalesced, (d.pixels() as u64).div_ceil(n * BLOCK as u64)),
            Mapping::Report => (&self.report, (d.pixels() as u64 + n).div_ceil(BLOCK as u64)),
        };
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(blocks).expect("at most 2^31 blocks for images under 2^39 pixels"), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let (border, n) = (job.border_arg(), n as i32);
        let mut b = job.stream.launch_builder(f);
        b.arg(rgb).arg(out).arg(&d.width).arg(&d.height).arg(&border).arg(&n);
        // SAFETY: see the module contract in patterns/mod.rs; sizes checked above, arguments match the C
        // signature.
        unsafe { b.launch(cfg) }.map(drop)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        let line = format!("(B = threads per block, {})", super::BLOCK);
        assert!(super::SOURCE.source.contains(&line), "n_per_thread.cu names B = {}", super::BLOCK);
    }
}
