//! `cuda/map.cu` — MAP, one thread per output pixel: the report's four kernels (grey, Gx, Gy, magnitude),
//! four passes over device memory with three full-size intermediates. gpu-map.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, PushKernelArg};

use super::{check_rgb_out, Job, KernelSource, Pattern, Scratch};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "map", source: include_str!("../../../cuda/map.cu") };

/// 16×16 = 256 threads: a square tile, as the report's 2D mapping suggests (map.cu's "Launch shape").
pub const BLOCK: (u32, u32) = (16, 16);

/// The loaded kernels of this pattern.
pub struct Map {
    /// `grey_kernel`: fused_map.cu's first pass too.
    pub grey: CudaFunction,
    sobel_x: CudaFunction,
    sobel_y: CudaFunction,
    magnitude: CudaFunction,
}

impl Map {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Map, DriverError> {
        Ok(Map {
            grey: m.load_function("grey_kernel")?,
            sobel_x: m.load_function("sobel_x_kernel")?,
            sobel_y: m.load_function("sobel_y_kernel")?,
            magnitude: m.load_function("magnitude_kernel")?,
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
        1 + 2 + 2
    }

    fn scratch(&self, stream: &Arc<CudaStream>, pixels: usize) -> Result<Scratch, DriverError> {
        // SAFETY (alloc): uninitialised; every intermediate is written in full by a kernel before it is read.
        unsafe {
            Ok(Scratch::Map { grey: stream.alloc(pixels)?, gx: stream.alloc(pixels)?, gy: stream.alloc(pixels)? })
        }
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
        check_rgb_out(rgb, out, d);
        assert!(grey.len() >= d.pixels() && gx.len() >= d.pixels() && gy.len() >= d.pixels());
        self.launch_grey(job, rgb, grey)?;
        // `sobel_x_kernel(const u8* grey, short* gx, int width, int height, int border)` and its `sobel_y`
        // twin: read w·h grey bytes, write w·h shorts.
        for (f, g) in [(&self.sobel_x, &mut *gx), (&self.sobel_y, &mut *gy)] {
            let mut b = job.stream.launch_builder(f);
            b.arg(&*grey).arg(g).arg(&d.width).arg(&d.height).arg(&border);
            // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
            unsafe { b.launch(d.grid(BLOCK)) }?;
        }
        // `magnitude_kernel(const short* gx, const short* gy, u8* out, int width, int height)`: reads w·h
        // shorts from each gradient, writes w·h bytes.
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
