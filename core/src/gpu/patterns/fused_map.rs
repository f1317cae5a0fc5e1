//! `cuda/fused_map.cu` — MAP FUSION, as the report's fused version: map.cu's grey kernel, then one kernel
//! for Gx, Gy and the magnitude, so the gradients never reach device memory. gpu-fused-map.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, PushKernelArg};

use super::map::Map;
use super::{check_rgb_out, Job, KernelSource, Pattern, Scratch};
use crate::gpu::kernels::Build;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "fused_map", source: include_str!("../../../../cuda/fused_map.cu") };

/// 16×16, like map.cu (fused_map.cu's "Launch shape").
pub const BLOCK: (u32, u32) = (16, 16);

/// The loaded kernels of this pattern.
pub struct FusedMap {
    /// map.cu's grey kernel, the first of the two passes.
    grey: Map,
    gradient_magnitude: CudaFunction,
}

impl FusedMap {
    /// Loads the kernels from the compiled modules (map.cu's and this file's) of `build`.
    pub fn load(map: &Arc<CudaModule>, m: &Arc<CudaModule>, build: Build) -> Result<FusedMap, DriverError> {
        Ok(FusedMap { grey: Map::load(map, build)?, gradient_magnitude: m.load_function("gradient_magnitude_kernel")? })
    }
}

impl Pattern for FusedMap {
    fn scratch_bytes_per_pixel(&self) -> usize {
        1
    }

    fn scratch(&self, stream: &Arc<CudaStream>, pixels: usize) -> Result<Scratch, DriverError> {
        // SAFETY (alloc): uninitialised; the grey kernel writes it in full before it is read.
        unsafe { Ok(Scratch::Grey(stream.alloc(pixels)?)) }
    }

    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        scratch: &mut Scratch,
    ) -> Result<(), DriverError> {
        let Scratch::Grey(grey) = scratch else { panic!("gpu-fused-map runs with Grey scratch") };
        let (d, border) = (job.d, job.border_arg());
        check_rgb_out(rgb, out, job);
        self.grey.launch_grey(job, rgb, grey)?;
        // `gradient_magnitude_kernel(const u8* grey, out_t* out, int width, int height, int border)`: reads w·h
        // grey bytes, writes w·h outputs of `job.out_bytes`.
        let mut b = job.stream.launch_builder(&self.gradient_magnitude);
        b.arg(&*grey).arg(out).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: see the module contract in patterns/mod.rs; sizes checked above and in launch_grey,
        // arguments match the C signature.
        unsafe { b.launch(d.grid(BLOCK)) }.map(drop)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
