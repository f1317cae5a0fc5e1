//! `cuda/timing.cu` — not a variant: the kernels measuring uses. `spin` keeps the GPU busy while the host
//! queues timed work behind it (so events bracket device work only); `noop` measures a launch itself.
//! How they are used: [`crate::gpu::events`].

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaStream, DriverError, LaunchConfig, PushKernelArg};

use super::KernelSource;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "timing", source: include_str!("../../../../cuda/timing.cu") };

/// The loaded kernels of this pattern.
pub struct Timing {
    spin: CudaFunction,
    noop: CudaFunction,
}

/// One thread: these kernels only wait or return.
const ONE: LaunchConfig = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };

impl Timing {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Timing, DriverError> {
        Ok(Timing { spin: m.load_function("spin")?, noop: m.load_function("noop")? })
    }

    /// `spin(unsigned long long ns)`: keeps the GPU busy for `ns` nanoseconds; no memory touched.
    pub fn spin(&self, stream: &Arc<CudaStream>, ns: u64) -> Result<(), DriverError> {
        let mut b = stream.launch_builder(&self.spin);
        b.arg(&ns);
        // SAFETY: the kernel reads a timer and touches no memory.
        unsafe { b.launch(ONE) }.map(drop)
    }

    /// `noop()`: an empty kernel (one warp), to time a launch.
    pub fn noop(&self, stream: &Arc<CudaStream>) -> Result<(), DriverError> {
        let cfg = LaunchConfig { block_dim: (32, 1, 1), ..ONE };
        // SAFETY: the kernel takes no arguments and touches no memory.
        unsafe { stream.launch_builder(&self.noop).launch(cfg) }.map(drop)
    }
}
