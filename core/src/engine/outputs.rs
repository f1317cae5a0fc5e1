//! The engine's runs of any [`Output`] — the edge bytes, Gx and Gy, the direction — on the CPU and the GPU,
//! each as the little-endian bytes of its planes (gradients: Gx's, then Gy's), so that every variant's output
//! is compared with the reference's byte for byte, whatever it is.

use image::RgbImage;

use super::{Engine, EngineError, RunOptions, VariantRun};
use crate::canny::Canny;
use crate::cpu;
use crate::gpu::variants::{self, CannyLaunches, RawImages};
use crate::sobel::{Filter, Output};
use crate::variant::{timed, Variant};

impl Engine {
    /// [`Engine::run`] writing `output` instead of the edges: its bytes in [`VariantRun::output`].
    pub fn run_output(
        &self,
        variant: Variant,
        rgb: &RgbImage,
        filter: Filter,
        output: Output,
        opts: RunOptions,
    ) -> Result<VariantRun, EngineError> {
        match variant {
            Variant::CpuScalar => {
                let (out, ms) =
                    timed(|| cpu::scalar::output_bytes(&cpu::scalar::sobel_stages(rgb, filter), filter, output));
                Ok(VariantRun { output: out, compute_ms: ms, gpu_memory_ms: None })
            }
            Variant::CpuRayon => {
                // Start rayon's thread pool outside the timed region: its start-up is not the variant's work.
                ::rayon::broadcast(|_| ());
                let (w, h) = (rgb.width() as usize, rgb.height() as usize);
                let src = cpu::rayon::PackedRgb::new(rgb.as_raw(), w, h);
                let (out, ms) = timed(|| cpu::rayon::output_bytes(&src, filter, output));
                Ok(VariantRun { output: out, compute_ms: ms, gpu_memory_ms: None })
            }
            gpu_variant => {
                let gpu = self.need_gpu(gpu_variant.name())?;
                let r = variants::run(gpu, gpu_variant, rgb, (filter, output), opts.warm_up, opts.reps)?;
                Ok(VariantRun { output: r.output, compute_ms: r.compute_ms, gpu_memory_ms: Some(r.memory_ms) })
            }
        }
    }

    /// [`Engine::run`] writing Canny's edges (0 or 255 a byte): cpu-scalar the definition ([`Canny::edges`] of its
    /// gradients), cpu-rayon [`Canny::edges_of`] on every core, a GPU variant its gradients then `cuda/canny.cu`
    /// ([`variants::run_canny`]). The same bytes from each.
    pub fn run_canny(
        &self,
        variant: Variant,
        rgb: &RgbImage,
        filter: Filter,
        canny: &Canny,
        opts: RunOptions,
    ) -> Result<VariantRun, EngineError> {
        let (w, h) = (rgb.width() as usize, rgb.height() as usize);
        match variant {
            Variant::CpuScalar => {
                let (out, ms) = timed(|| {
                    let stages = cpu::scalar::sobel_stages(rgb, filter);
                    canny.edges(&stages.gx, &stages.gy, w, h)
                });
                Ok(VariantRun { output: out, compute_ms: ms, gpu_memory_ms: None })
            }
            Variant::CpuRayon => {
                ::rayon::broadcast(|_| ());
                let src = cpu::rayon::PackedRgb::new(rgb.as_raw(), w, h);
                let (out, ms) = timed(|| canny.edges_of(&src, filter));
                Ok(VariantRun { output: out, compute_ms: ms, gpu_memory_ms: None })
            }
            gpu_variant => {
                let gpu = self.need_gpu(gpu_variant.name())?;
                let r = variants::run_canny(gpu, gpu_variant, rgb, filter, canny, opts.warm_up, opts.reps)?;
                Ok(VariantRun { output: r.output, compute_ms: r.compute_ms, gpu_memory_ms: Some(r.memory_ms) })
            }
        }
    }

    /// [`Engine::run_canny`] on gpu-strip with a student's kernel (`--kernel-file` with `--output canny`) as the
    /// hysteresis' link step in place of `cuda/canny.cu`'s: its edges and its computation's time, as ours are timed.
    pub fn student_canny(
        &self,
        k: &crate::engine::StudentKernel,
        rgb: &RgbImage,
        (filter, canny): (Filter, &Canny),
        opts: RunOptions,
    ) -> Result<VariantRun, EngineError> {
        let gpu = self.need_gpu("a student's kernel")?;
        let link = Some(k.function());
        let r =
            variants::run_canny_linked(gpu, Variant::GpuStrip, rgb, (filter, canny, link), opts.warm_up, opts.reps)?;
        Ok(VariantRun { output: r.output, compute_ms: r.compute_ms, gpu_memory_ms: Some(r.memory_ms) })
    }

    /// The device workspace (bytes) [`Engine::canny_on_device`] needs for images of `width × height`.
    pub fn canny_workspace_bytes(&self, filter: Filter, canny: &Canny, width: u32, height: u32) -> usize {
        variants::canny_workspace_bytes(filter, canny, width, height)
    }

    /// Canny's edges of packed RGB images on device memory the caller owns, on the caller's stream, through the
    /// caller's `workspace` (pointer, bytes): no copy, no allocation, no synchronisation; `launches` which of them
    /// this call makes (the first image's up to its edges, then the rest, lets a caller allocate `a.out` while the
    /// first run). Needs a GPU.
    ///
    /// # Safety
    /// As [`Engine::outputs_on_device`] for `a` (the output a byte a pixel), and `workspace` must address that many
    /// bytes of device memory of this engine's device, 16-byte aligned, used by nothing else until the launches ran
    /// (with [`CannyLaunches::AfterFirstEdges`]: since the [`CannyLaunches::FirstUntilEdges`] call of the same
    /// images and workspace on the same stream).
    pub unsafe fn canny_on_device(
        &self,
        a: RawImages,
        workspace: (u64, usize),
        (filter, canny): (Filter, &Canny),
        launches: CannyLaunches,
    ) -> Result<(), EngineError> {
        let gpu = self.need_gpu("gpu-strip")?;
        // SAFETY: forwarded from the caller.
        unsafe { variants::canny_on_device(gpu, a, workspace, filter, canny, launches) }.map_err(EngineError::from)
    }

    /// gpu-strip writing `output` on device memory the caller owns (another library's arrays), on the caller's
    /// stream: one launch for the whole batch, no copy, no synchronisation — the caller's later work on that
    /// stream sees the result. Needs a GPU.
    ///
    /// # Safety
    /// `a.rgb` must address `3 · images · width · height` readable bytes and `a.out` `images · width · height`
    /// writable outputs (`output.bytes_per_pixel()` bytes a pixel: gradients are two planes, Gx's for every
    /// image, then Gy's) of device memory of this engine's device (its primary context, which PyTorch and CuPy
    /// share), neither written by anything else until the launch has run; `a.stream` must be a live stream of
    /// that context, or 0.
    pub unsafe fn outputs_on_device(&self, a: RawImages, filter: Filter, output: Output) -> Result<(), EngineError> {
        let gpu = self.need_gpu("gpu-strip")?;
        // SAFETY: forwarded from the caller.
        unsafe { variants::strip_on_device(gpu, a, (filter, output)) }.map_err(EngineError::from)
    }

    /// `output` of `images` packed `width × height` RGB images in host memory into `out` (its bytes, in the
    /// layout of [`Engine::outputs_on_device`]), on the GPU: one upload, one launch and one download for the
    /// batch (at most 65 535 images a launch: the grid's y limit).
    pub fn batch_on_gpu(
        &self,
        rgb: &[u8],
        width: u32,
        height: u32,
        images: u32,
        (filter, output): (Filter, Output),
        out: &mut [u8],
    ) -> Result<(), EngineError> {
        let gpu = self.need_gpu("gpu-strip")?;
        let (px, total) = (width as usize * height as usize, images as usize);
        if px == 0 || total == 0 {
            return Ok(());
        }
        const PER_LAUNCH: usize = 65_535;
        let (planes, value) = match output {
            Output::Gradients(n) => (2, n.bytes()),
            other => (1, other.bytes_per_pixel()),
        };
        let plane = px * value; // one image's plane, in bytes
        for start in (0..total).step_by(PER_LAUNCH) {
            let n = PER_LAUNCH.min(total - start);
            let src = &rgb[3 * px * start..3 * px * (start + n)];
            if n == total {
                variants::strip_batch_from_host(gpu, src, width, height, n as u32, (filter, output), out)?;
                break;
            }
            // A launch's planes span its images only: each plane goes to its place in the whole batch's.
            let mut part = vec![0u8; planes * n * plane];
            variants::strip_batch_from_host(gpu, src, width, height, n as u32, (filter, output), &mut part)?;
            for p in 0..planes {
                let dst = p * total * plane + start * plane;
                out[dst..dst + n * plane].copy_from_slice(&part[p * n * plane..(p + 1) * n * plane]);
            }
        }
        Ok(())
    }
}
