//! JPEGs decoded on the GPU by nvJPEG (batch mode): loading it, which backend decodes, and the edges of one
//! JPEG through a slot.

use image::RgbImage;

use super::{Engine, EngineError};
use crate::gpu::nvjpeg::Nvjpeg;
use crate::gpu::slots::{Edges, Want};
use crate::gpu::{variants, GpuError};
use crate::sobel::{Filter, Output};
use crate::variant::Variant;

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
    pub fn with_nvjpeg(mut self) -> Engine {
        if let Some(gpu) = &self.gpu {
            self.nvjpeg =
                Some(gpu.ctx.bind_to_thread().map_err(|e| e.to_string()).and_then(|()| Nvjpeg::load(&gpu.ctx)));
        }
        self
    }

    /// Whether nvJPEG decodes on the GPU's JPEG engine (the hardware decoder of an A100, H100 or H200).
    pub fn has_jpeg_engine(&self) -> bool {
        matches!(&self.nvjpeg, Some(Ok(n)) if n.hardware.is_ok())
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
                Ok(_) => format!("{}, on the GPU's JPEG engine, batched", n.name),
                Err(why) => format!("{}, default backend: {why}", n.name),
            }),
            Some(Err(why)) => Err(why.clone()),
            None if self.slots.is_none() => Err("GPU decoding needs a GPU and batch slots".into()),
            None => Err("not asked for (--jpeg-decoder cpu)".into()),
        }
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
        let (Some(g), Some(pool), Some(Ok(nvjpeg))) = (&self.gpu, &self.slots, &self.nvjpeg) else { return Ok(None) };
        let info = nvjpeg.info(bytes).map_err(GpuError::Peer)?;
        let (w, h) = (info.width, info.height);
        if variants::max_band_rows(g, Variant::GpuStrip, Output::Edges, w as usize)? < h as usize {
            return Ok(None);
        }
        let (edges, rgb, on_engine) =
            pool.with_slot(|slot| slot.run_jpeg(nvjpeg, bytes, info, filter, want, want_rgb))?;
        let rgb = rgb.map(|rgb| RgbImage::from_raw(w, h, rgb).expect("3 · width · height bytes"));
        Ok(Some(JpegEdges { edges, rgb, on_engine }))
    }
}
