//! `cuda/map.cu` — MAP, one thread per output pixel: the report's four kernels (grey, Gx, Gy, magnitude),
//! four passes over device memory with three full-size intermediates. gpu-map.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, PushKernelArg};

use super::{check_rgb_out, Job, KernelSource, Pattern, Scratch};
use crate::gpu::kernels::Build;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "map", source: include_str!("../../../../cuda/map.cu") };

/// 16×16 = 256 threads: a square tile, as the report's 2D mapping suggests (map.cu's "Launch shape").
pub const BLOCK: (u32, u32) = (16, 16);

/// The loaded kernels of this pattern.
pub struct Map {
    /// `grey_kernel`: fused_map.cu's first pass too.
    pub grey: CudaFunction,
    sobel_x: CudaFunction,
    sobel_y: CudaFunction,
    magnitude: CudaFunction,
    /// Bytes of one exact gradient: 2 (short) where the stencil's bound allows, else 4 (int): map.cu's grad_t.
    gradient_bytes: usize,
}

impl Map {
    /// Loads the kernels from the compiled module of `build`.
    pub fn load(m: &Arc<CudaModule>, build: Build) -> Result<Map, DriverError> {
        Ok(Map {
            grey: m.load_function("grey_kernel")?,
            sobel_x: m.load_function("sobel_x_kernel")?,
            sobel_y: m.load_function("sobel_y_kernel")?,
            magnitude: m.load_function("magnitude_kernel")?,
            gradient_bytes: if build.stencil().fits_i16() { 2 } else { 4 },
        })
    }

    /// `grey_kernel(const u8* rgb, u8* grey, int width, int height)`: reads 3·w·h, writes w·h bytes.
    /// Also fused_map.cu's first pass.
    pub fn launch_grey(&self, job: &Job, rgb: &CudaSlice<u8>, grey: &mut CudaSlice<u8>) -> Result<(), DriverError> {
        let d = job.d;
        assert!(rgb.len() >= 3 * d.pixels() && grey.len() >= d.pixels());
        let mut b = job.stream.launch_builder(&self.grey);
        b.arg(rgb).arg(grey).arg(&d.width).arg(&d.height);
        // SAFETY: see the module contract in patterns/mod.rs; sizes checked above, arguments match the C
        // signature.
        unsafe { b.launch(d.grid(BLOCK)) }.map(drop)
    }
}

impl Pattern for Map {
    fn scratch_bytes_per_pixel(&self) -> usize {
        1 + 2 * self.gradient_bytes
    }

    fn scratch(&self, stream: &Arc<CudaStream>, pixels: usize) -> Result<Scratch, DriverError> {
        let g = self.gradient_bytes * pixels;
        // SAFETY (alloc): uninitialised; every intermediate is written in full by a kernel before it is read.
        unsafe { Ok(Scratch::Map { grey: stream.alloc(pixels)?, gx: stream.alloc(g)?, gy: stream.alloc(g)? }) }
    }

    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        scratch: &mut Scratch,
    ) -> Result<(), DriverError> {
        let Scratch::Map { grey, gx, gy } = scratch else { panic!("gpu-map runs with Map scratch") };
        let (d, border) = (job.d, job.border_arg());
        check_rgb_out(rgb, out, job);
        let g = self.gradient_bytes * d.pixels();
        assert!(grey.len() >= d.pixels() && gx.len() >= g && gy.len() >= g);
        self.launch_grey(job, rgb, grey)?;
        // `sobel_x_kernel(const u8* grey, grad_t* gx, int width, int height, int border)` and its `sobel_y`
        // twin: read w·h grey bytes, write w·h gradients of `gradient_bytes` each.
        for (f, g) in [(&self.sobel_x, &mut *gx), (&self.sobel_y, &mut *gy)] {
            let mut b = job.stream.launch_builder(f);
            b.arg(&*grey).arg(g).arg(&d.width).arg(&d.height).arg(&border);
            // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
            unsafe { b.launch(d.grid(BLOCK)) }?;
        }
        // `magnitude_kernel(const grad_t* gx, const grad_t* gy, out_t* out, int width, int height)`: reads w·h
        // gradients from each plane, writes w·h outputs of `job.out_bytes`.
        let mut b = job.stream.launch_builder(&self.magnitude);
        b.arg(&*gx).arg(&*gy).arg(out).arg(&d.width).arg(&d.height);
        // SAFETY: as above.
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
