//! The filter command's engine (`cuda_sobel filter`, `bench --study`): the GPU strategies of `src/gpu/conv.rs` as the
//! layers above see them, and the choice between them and the CPU.

use crate::conv::{self, ConvKernel, Planes, Strategy};
pub use crate::gpu::conv::{launches_an_image, refusal, ConvGpu, Prepared, Tuning};
pub use crate::gpu::patterns::Dims;
pub use crate::gpu::Gpu;
use crate::gpu::GpuError;
use crate::sobel::Border;

/// The filter of `img` by `strategy`, or by the default one (`None`: [`Strategy::auto_for`] the kernel where a GPU
/// opens, else cpu-rayon, with a note saying why). Returns the result and that note.
pub fn apply(
    img: &Planes,
    kernel: &ConvKernel,
    strategy: Option<Strategy>,
    border: Border,
) -> Result<(Planes, Option<String>), GpuError> {
    let chosen = strategy.unwrap_or_else(|| Strategy::auto_for(kernel));
    if let Some(why) = refusal(kernel, chosen) {
        return Err(GpuError::Refused(why));
    }
    if !chosen.is_gpu() {
        return Ok((conv::filter_plane(img, kernel, border, chosen == Strategy::CpuRayon), None));
    }
    let gpu = match Gpu::open() {
        Ok(gpu) => gpu,
        Err(e) if strategy.is_none() => {
            let note = format!("no GPU ({e}): filtered with cpu-rayon");
            return Ok((conv::filter_rayon(img, kernel, border), Some(note)));
        }
        Err(e) => return Err(e),
    };
    let out = ConvGpu::new(gpu).run(img, kernel, chosen, border)?;
    Ok((out, None))
}

impl super::Engine {
    /// The filter of `img` by `kernel`: on this engine's GPU by the strategy the studies measured fastest for the
    /// kernel ([`Strategy::auto_for`]; its files loaded once, on first use), else cpu-rayon — `batch --kernel`'s
    /// computation, the bytes `cuda_sobel filter` gives.
    pub fn filter_planes(&self, img: &Planes, kernel: &ConvKernel, border: Border) -> Result<Planes, GpuError> {
        let Some(gpu) = self.gpu.as_ref() else { return Ok(conv::filter_rayon(img, kernel, border)) };
        let strategy = Strategy::auto_for(kernel);
        self.conv.get_or_init(|| ConvGpu::new(gpu.clone())).run(img, kernel, strategy, border)
    }
}
