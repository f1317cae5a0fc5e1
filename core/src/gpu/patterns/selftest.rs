//! `cuda/selftest.cu` — not a variant: kernels the tests use to check row16.cuh's arithmetic tricks (dp4a
//! grey, approximate-sqrt magnitude) and sobel.cuh's direction on every possible input.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaStream, DriverError, LaunchConfig, PushKernelArg};

use super::KernelSource;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "selftest", source: include_str!("../../../../cuda/selftest.cu") };

/// The loaded kernels of this pattern.
pub struct SelfTest {
    grey: CudaFunction,
    magnitude: CudaFunction,
    direction: CudaFunction,
}

impl SelfTest {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<SelfTest, DriverError> {
        Ok(SelfTest {
            grey: m.load_function("selftest_grey")?,
            magnitude: m.load_function("selftest_magnitude")?,
            direction: m.load_function("selftest_direction")?,
        })
    }

    /// `selftest_grey(u8* out)`: writes 2^24 bytes, the grey of every RGB triple (R << 16 | G << 8 | B).
    pub fn grey(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, DriverError> {
        let n = 1usize << 24;
        let mut out = stream.alloc_zeros::<u8>(n)?;
        let cfg = LaunchConfig {
            grid_dim: ((n as u32 / 4).div_ceil(256), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = stream.launch_builder(&self.grey);
        b.arg(&mut out);
        // SAFETY: the kernel writes out[0 .. 2^24), which `out` holds.
        unsafe { b.launch(cfg) }?;
        stream.clone_dtoh(&out)
    }

    /// `selftest_magnitude(u8* out, unsigned n)`: writes n bytes, the magnitude of every square s < n.
    pub fn magnitude(&self, stream: &Arc<CudaStream>, n: u32) -> Result<Vec<u8>, DriverError> {
        let mut out = stream.alloc_zeros::<u8>(n as usize)?;
        let cfg = LaunchConfig { grid_dim: (n.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut b = stream.launch_builder(&self.magnitude);
        b.arg(&mut out).arg(&n);
        // SAFETY: the kernel writes out[0 .. n), which `out` holds.
        unsafe { b.launch(cfg) }?;
        stream.clone_dtoh(&out)
    }

    /// `selftest_direction(float* out, int m)`: writes (2m + 1)² floats, the direction of every (Gx, Gy) with
    /// |Gx|, |Gy| ≤ m, row by row of Gy.
    pub fn direction(&self, stream: &Arc<CudaStream>, m: i32) -> Result<Vec<f32>, DriverError> {
        let n = ((2 * m + 1) * (2 * m + 1)) as u32;
        let mut out = stream.alloc_zeros::<f32>(n as usize)?;
        let cfg = LaunchConfig { grid_dim: (n.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut b = stream.launch_builder(&self.direction);
        b.arg(&mut out).arg(&m);
        // SAFETY: the kernel writes out[0 .. (2m + 1)²), which `out` holds.
        unsafe { b.launch(cfg) }?;
        stream.clone_dtoh(&out)
    }
}
