//! The filter command's engine (`cuda_sobel filter`, `bench --study`): the GPU strategies of `src/gpu/conv.rs` as the
//! layers above see them, and the choice between them and the CPU.

use super::EngineError;
use crate::conv::{self, ConvKernel, Planes};
pub use crate::gpu::conv::{launches_an_image, refusal, ConvGpu, Prepared, RawPlanes, Tuning};
pub use crate::gpu::patterns::Dims;
pub use crate::gpu::Gpu;
use crate::gpu::GpuError;
use crate::sobel::Border;
use crate::variant::Variant;

/// The filter of `img` by `strategy`, or by the default one (`None`: [`Variant::auto_for`] the kernel where a GPU
/// opens, else cpu-rayon, with a note saying why). Returns the result and that note.
pub fn apply(
    img: &Planes,
    kernel: &ConvKernel,
    strategy: Option<Variant>,
    border: Border,
) -> Result<(Planes, Option<String>), GpuError> {
    let chosen = strategy.unwrap_or_else(|| Variant::auto_for(kernel));
    if let Some(why) = refusal(kernel, chosen) {
        return Err(GpuError::Refused(why));
    }
    if !chosen.is_gpu() {
        return Ok((conv::filter_plane(img, kernel, border, chosen == Variant::CpuRayon), None));
    }
    let gpu = match Gpu::open() {
        Ok(gpu) => gpu,
        Err(e) if strategy.is_none() => {
            let note = format!("no GPU ({e}): filtered with cpu-rayon");
            return Ok((crate::cpu::rayon::filter(img, kernel, border), Some(note)));
        }
        Err(e) => return Err(e),
    };
    let out = ConvGpu::new(gpu).run(img, kernel, chosen, border)?;
    Ok((out, None))
}

impl super::Engine {
    /// The filter of `img` by `kernel`: on this engine's GPU by the strategy the studies measured fastest for the
    /// kernel ([`Variant::auto_for`]; its files loaded once, on first use), else cpu-rayon — `batch --kernel`'s
    /// computation, the bytes `cuda_sobel filter` gives.
    pub fn filter_planes(&self, img: &Planes, kernel: &ConvKernel, border: Border) -> Result<Planes, GpuError> {
        let Some(gpu) = self.gpu.as_ref() else { return Ok(crate::cpu::rayon::filter(img, kernel, border)) };
        let conv = self.conv.get_or_init(|| ConvGpu::new(gpu.clone()));
        conv.run_prepared(&*conv.prepared(kernel, Variant::auto_for(kernel))?, img, border)
    }

    /// The filter of `img` by `strategy`: a CPU one on the CPU, a GPU one on this engine's GPU (prepared once per
    /// kernel and strategy), uploaded and downloaded.
    pub fn filter_planes_by(
        &self,
        img: &Planes,
        kernel: &ConvKernel,
        strategy: Variant,
        border: Border,
    ) -> Result<Planes, EngineError> {
        if !strategy.is_gpu() {
            return Ok(conv::filter_plane(img, kernel, border, strategy == Variant::CpuRayon));
        }
        let gpu = self.need_gpu(strategy.name())?;
        let conv = self.conv.get_or_init(|| ConvGpu::new(gpu.clone()));
        Ok(conv.run_prepared(&*conv.prepared(kernel, strategy)?, img, border)?)
    }

    /// The device workspace [`super::Engine::filter_on_device`] needs for `planes` planes of `width × height`
    /// (`from_rgb`: as many RGB images), by a GPU `strategy`.
    pub fn filter_workspace(
        &self,
        kernel: &ConvKernel,
        strategy: Variant,
        call: (u32, u32, u32, bool),
    ) -> Result<usize, EngineError> {
        let gpu = self.need_gpu(strategy.name())?;
        Ok(self.conv.get_or_init(|| ConvGpu::new(gpu.clone())).workspace_bytes(kernel, strategy, call)?)
    }

    /// [`super::Engine::filter_planes_by`] a GPU strategy on device memory the caller owns (another library's
    /// arrays), on the caller's stream: no copy of the image, no synchronisation — the Python package's zero-copy
    /// path. Needs a GPU.
    ///
    /// # Safety
    /// See [`RawPlanes`]: the pointers must address that much device memory of this engine's device (its primary
    /// context, which PyTorch and CuPy share), and the stream must be a live stream of it, or 0.
    pub unsafe fn filter_on_device(
        &self,
        a: RawPlanes,
        kernel: &ConvKernel,
        strategy: Variant,
        border: Border,
    ) -> Result<(), EngineError> {
        let gpu = self.need_gpu(strategy.name())?;
        let conv = self.conv.get_or_init(|| ConvGpu::new(gpu.clone()));
        // SAFETY: forwarded from the caller.
        unsafe { conv.run_raw(a, kernel, strategy, border) }.map_err(EngineError::from)
    }
}
