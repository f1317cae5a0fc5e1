//! JPEGs decoded on the GPU by nvJPEG: loading it, which backend decodes, the edges of one JPEG through a slot
//! (batch mode), and one JPEG's RGB (the image command).

use image::RgbImage;

use super::{Engine, EngineError};
use crate::gpu::nvjpeg::Nvjpeg;
use crate::gpu::slots::{Edges, Want};
use crate::gpu::{variants, GpuError};
use crate::sobel::{Filter, Output};
use crate::variant::Variant;

/// Where JPEGs are decoded (`--jpeg-decoder`, of batch and of the image command).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JpegDecoder {
    /// batch: nvJPEG when the GPU has it, else the CPU; the image command: the CPU (one image does not pay for
    /// nvJPEG's start-up).
    #[default]
    Auto,
    /// nvJPEG, or the command refuses to start (a file nvJPEG refuses still goes to the CPU, with a line).
    Gpu,
    /// The CPU decoder (zune-jpeg, through the image crate).
    Cpu,
}

impl JpegDecoder {
    /// Every choice, in `--help`'s order.
    pub const ALL: [JpegDecoder; 3] = [JpegDecoder::Auto, JpegDecoder::Gpu, JpegDecoder::Cpu];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            JpegDecoder::Auto => "auto",
            JpegDecoder::Gpu => "gpu",
            JpegDecoder::Cpu => "cpu",
        }
    }
}

/// What [`Engine::sobel_jpeg`] hands back.
pub struct JpegEdges {
    /// The edge image (its bytes or PNG data, as asked).
    pub edges: Edges,
    /// The RGB nvJPEG decoded, when asked for (`--check`).
    pub rgb: Option<RgbImage>,
    /// Whether the GPU's JPEG engine decoded it (else nvJPEG's default backend).
    pub on_engine: bool,
}

impl Engine {
    /// Loads nvJPEG for [`Engine::sobel_jpeg`] (which also needs slots: [`Engine::with_slots`]); its absence is
    /// kept as the reason ([`Engine::jpeg_decoder`]), not an error: JPEGs are then decoded on the CPU.
    pub fn with_nvjpeg(self) -> Engine {
        self.loading_nvjpeg(true)
    }

    /// nvJPEG, and with `engine` the GPU's JPEG engine's handle too (where the GPU has one).
    fn loading_nvjpeg(mut self, engine: bool) -> Engine {
        if let Some(gpu) = &self.gpu {
            let loaded =
                gpu.ctx.bind_to_thread().map_err(|e| e.to_string()).and_then(|()| Nvjpeg::load(&gpu.ctx, engine));
            crate::trace::mark("nvJPEG loaded");
            self.nvjpeg = Some(loaded);
        }
        self
    }

    /// nvJPEG and one slot, for [`Engine::decode_jpeg`] (the image command's GPU decoder); a slot that cannot be
    /// made is kept as nvJPEG's absence, with its reason. nvJPEG's default backend only: the JPEG engine decodes
    /// one image a call no faster (162 against 128–208 images/s, H200) and costs start-up.
    pub fn with_jpeg_decoder(mut self) -> Engine {
        let Some(gpu) = &self.gpu else { return self };
        match crate::gpu::slots::SlotPool::new(gpu, 1) {
            Ok(pool) => {
                self.slots = Some(pool);
                self.loading_nvjpeg(false)
            }
            Err(e) => {
                self.nvjpeg = Some(Err(format!("a stream for nvJPEG: {e}")));
                self
            }
        }
    }

    /// The GPU's JPEG engine, where nvJPEG is loaded and decodes on it.
    fn jpeg_engine(&self) -> Option<&crate::gpu::jpeg_batch::Batcher> {
        match &self.nvjpeg {
            Some(Ok(n)) => n.hardware.as_ref().ok(),
            _ => None,
        }
    }

    /// What the GPU's JPEG engine has done, where it decodes (for `CUDA_SOBEL_TRACE`).
    pub fn jpeg_engine_stats(&self) -> Option<crate::gpu::jpeg_batch::EngineStats> {
        self.jpeg_engine().map(|b| b.stats())
    }

    /// Whether nvJPEG decodes on the GPU's JPEG engine (the hardware decoder of an A100, H100 or H200).
    pub fn has_jpeg_engine(&self) -> bool {
        self.jpeg_engine().is_some()
    }

    /// How many JPEGs the GPU's JPEG engine decodes side by side (its decoders × cores), where it decodes.
    pub fn jpeg_engine_width(&self) -> Option<usize> {
        self.jpeg_engine().map(|b| b.width())
    }

    /// Whether [`Engine::sobel_jpeg`] decodes on the GPU (nvJPEG loaded), so that a caller should read JPEGs
    /// with [`crate::image_io::jpeg::read`] instead of decoding them.
    pub fn decodes_jpeg_on_gpu(&self) -> bool {
        matches!(self.nvjpeg, Some(Ok(_)))
    }

    /// Where [`Engine::sobel_jpeg`] decodes: nvJPEG's library, or why JPEGs are decoded on the CPU.
    pub fn jpeg_decoder(&self) -> Result<String, String> {
        match &self.nvjpeg {
            Some(Ok(n)) => Ok(match &n.hardware {
                Ok(b) => format!("{}, on the GPU's JPEG engine ({} at once), batched", n.name, b.width()),
                Err(why) => format!("{}, default backend: {why}", n.name),
            }),
            Some(Err(why)) => Err(why.clone()),
            None if self.slots.is_none() => Err("GPU decoding needs a GPU and batch slots".into()),
            None => Err("not asked for (--jpeg-decoder cpu)".into()),
        }
    }

    /// The RGB nvJPEG decodes of a JPEG ([`Engine::with_nvjpeg`], and one slot: [`Engine::with_slots`]), and
    /// whether the GPU's JPEG engine decoded it: the image command's GPU decoder. `None` when this engine has no
    /// nvJPEG or the image is larger than a slot takes; an error when nvJPEG refuses the file (the caller then decodes on the CPU, and says so).
    pub fn decode_jpeg(&self, bytes: &[u8]) -> Result<Option<(RgbImage, bool)>, EngineError> {
        let (Some(g), Some(pool), Some(Ok(nvjpeg))) = (&self.gpu, &self.slots, &self.nvjpeg) else { return Ok(None) };
        let info = nvjpeg.info(bytes).map_err(GpuError::Peer)?;
        if variants::max_band_rows(g, Variant::GpuStrip, Output::Edges, info.width as usize)? < info.height as usize {
            return Ok(None);
        }
        let (rgb, on_engine) = pool.with_slot(|slot| slot.decode_jpeg(nvjpeg, bytes, info))?;
        let rgb = RgbImage::from_raw(info.width, info.height, rgb).expect("3 · width · height bytes");
        Ok(Some((rgb, on_engine)))
    }

    /// The edge image of a JPEG decoded by nvJPEG on the GPU ([`Engine::with_nvjpeg`]), and with `want_rgb`
    /// the RGB it decoded; `None` when this engine has no nvJPEG or the image is too large for a slot, an error
    /// when nvJPEG refuses the file (CMYK, a layout it does not convert): the caller then decodes on the CPU.
    /// Bytes identical to [`crate::cpu::scalar::sobel`] of that RGB.
    pub fn sobel_jpeg(
        &self,
        bytes: &[u8],
        filter: Filter,
        want: Want,
        want_rgb: bool,
    ) -> Result<Option<JpegEdges>, EngineError> {
        let (Some(pool), Some(Ok(nvjpeg))) = (&self.slots, &self.nvjpeg) else { return Ok(None) };
        let info = nvjpeg.info(bytes).map_err(GpuError::Peer)?;
        let (w, h) = (info.width, info.height);
        if !self.fits_a_slot(w, h, want) {
            return Ok(None);
        }
        let (edges, rgb, on_engine) =
            pool.with_slot(|slot| slot.run_jpeg(nvjpeg, bytes, info, filter, want, want_rgb))?;
        let rgb = rgb.map(|rgb| RgbImage::from_raw(w, h, rgb).expect("3 · width · height bytes"));
        Ok(Some(JpegEdges { edges, rgb, on_engine }))
    }
}
