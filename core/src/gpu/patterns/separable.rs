//! `cuda/separable.cu` — SEPARABLE FILTER IN TWO PASSES, as OpenCV's CUDA Sobel: a row pass writes a
//! (smoothing, difference) pair per pixel, a column pass combines three rows of them. gpu-separable.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, PushKernelArg};

use super::{check_rgb_out, Job, KernelSource, Pattern, Scratch};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "separable", source: include_str!("../../../../cuda/separable.cu") };

/// 32×8 for both passes, one thread per pixel (separable.cu's "Launch shape").
pub const BLOCK: (u32, u32) = (32, 8);

/// The loaded kernels of this pattern.
pub struct Separable {
    rows_pass: CudaFunction,
    columns_pass: CudaFunction,
}

impl Separable {
    /// Loads the kernels from the compiled module.
    pub fn load(m: &Arc<CudaModule>) -> Result<Separable, DriverError> {
        Ok(Separable {
            rows_pass: m.load_function("sobel_rows_pass")?,
            columns_pass: m.load_function("sobel_columns_pass")?,
        })
    }
}

impl Pattern for Separable {
    fn scratch_bytes_per_pixel(&self) -> usize {
        4
    }

    fn scratch(&self, stream: &Arc<CudaStream>, pixels: usize) -> Result<Scratch, DriverError> {
        // SAFETY (alloc): uninitialised; the row pass writes it in full before the column pass reads it.
        unsafe { Ok(Scratch::RowPass(stream.alloc(pixels)?)) }
    }

    /// `sobel_rows_pass(const u8* rgb, short2* he, int width, int height, int border)`, then
    /// `sobel_columns_pass(const short2* he, out_t* out, int width, int height, int border)`: the first reads
    /// 3·w·h bytes and writes w·h short pairs (4 bytes each, held here as u32), the second reads those and
    /// writes w·h outputs of `job.out_bytes`.
    fn enqueue(
        &self,
        job: &Job,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        scratch: &mut Scratch,
    ) -> Result<(), DriverError> {
        let Scratch::RowPass(he) = scratch else { panic!("gpu-separable runs with RowPass scratch") };
        let (d, border) = (job.d, job.border_arg());
        check_rgb_out(rgb, out, job);
        assert!(he.len() >= d.pixels());
        let mut rows = job.stream.launch_builder(&self.rows_pass);
        rows.arg(rgb).arg(&mut *he).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: see the module contract in patterns/mod.rs; sizes checked above, arguments match the C
        // signature.
        unsafe { rows.launch(d.grid(BLOCK)) }?;
        let mut cols = job.stream.launch_builder(&self.columns_pass);
        cols.arg(&*he).arg(out).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: as above.
        unsafe { cols.launch(d.grid(BLOCK)) }.map(drop)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
