//! What the image command writes (`--output`): the edges in either norm, one of the gradients, or the
//! direction — and how each goes into a file without loss: bytes in any format, 16-bit signed gradients in
//! `.npy`, `.tif`, or offset by 32 768 in 16-bit `.png`/`.pgm`, 32-bit gradients and the float direction in
//! `.npy` or `.tif` (docs/cli.md, "What it writes").

use std::path::{Path, PathBuf};

use crate::cpu;
use crate::error::Result;
use crate::image_io::format::{SampleKind, Samples};
use crate::image_io::{self, Picture, Staged, Target};
use crate::sobel::{Norm, Number, Output, Stencil};

/// What the image command writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Product {
    /// The edges: `min(255, round(√(Gx² + Gy²)))`.
    #[default]
    Magnitude,
    /// The edges in the L1 norm: `min(255, |Gx| + |Gy|)`.
    L1,
    /// The horizontal gradient, exact (int16, or int32 for ksize 7).
    Gx,
    /// The vertical gradient, exact.
    Gy,
    /// `atan2(Gy, Gx)` in radians, float32.
    Direction,
    /// OpenCV Canny's four directions, 0–3.
    Direction4,
    /// Canny's edges (0 or 255) from the exact gradients: [`crate::canny`], with the thresholds of
    /// [`super::Options::canny`]; each variant computes them (`Engine::run_canny`).
    Canny,
}

impl Product {
    /// Every value, in the order the help lists them.
    pub const ALL: [Product; 7] = [
        Product::Magnitude,
        Product::L1,
        Product::Gx,
        Product::Gy,
        Product::Direction,
        Product::Direction4,
        Product::Canny,
    ];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Product::Magnitude => "magnitude",
            Product::L1 => "l1",
            Product::Gx => "gx",
            Product::Gy => "gy",
            Product::Direction => "direction",
            Product::Direction4 => "direction4",
            Product::Canny => "canny",
        }
    }

    /// The norm the edges need (`--output l1`), for the filter.
    pub fn norm(self) -> Norm {
        if self == Product::L1 {
            Norm::L1
        } else {
            Norm::L2
        }
    }

    /// What the kernels compute for it (the gradients: both planes, in the smallest integer type that holds
    /// `stencil`'s; for Canny 32-bit, which its definition starts from).
    pub fn output(self, stencil: &Stencil) -> Output {
        match self {
            Product::Magnitude | Product::L1 => Output::Edges,
            Product::Gx | Product::Gy => Output::Gradients(Number::integer_for(stencil)),
            Product::Canny => Output::Gradients(Number::I32),
            Product::Direction => Output::Direction,
            Product::Direction4 => Output::Direction4,
        }
    }

    /// The type of the values written.
    pub fn kind(self, stencil: &Stencil) -> SampleKind {
        if self == Product::Canny {
            return SampleKind::U8;
        }
        match self.output(stencil) {
            Output::Edges | Output::Direction4 => SampleKind::U8,
            Output::Gradients(Number::I16) => SampleKind::I16,
            Output::Gradients(_) => SampleKind::I32,
            Output::Direction => SampleKind::F32,
            Output::Sectors(_) => unreachable!("no product is Canny's words (Product::output)"),
        }
    }

    /// The default output path for `input`: `imgs_out/<stem>_sobel.png` for the edges; `<stem>_gx.npy`,
    /// `_gy.npy`, `_direction.npy`, `_direction4.png` and `_canny.png` for the rest.
    pub fn default_output(self, input: &Path) -> PathBuf {
        let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "stdin".into());
        let name = match self {
            Product::Magnitude | Product::L1 => format!("{stem}_sobel.png"),
            Product::Direction4 | Product::Canny => format!("{stem}_{}.png", self.name()),
            other => format!("{stem}_{}.npy", other.name()),
        };
        Path::new("imgs_out").join(name)
    }
}

/// The product's values from an output's bytes (little-endian planes, as every variant gives them): Gx's plane
/// or Gy's for the gradients; Canny's edges of both.
fn values<'a>(opts: &super::Options, output: Output, bytes: &'a [u8], (width, height): (usize, usize)) -> Values<'a> {
    let (product, pixels) = (opts.product, width * height);
    let plane = |i: usize, b: usize| &bytes[i * pixels * b..(i + 1) * pixels * b];
    if product == Product::Canny {
        return Values::U8(bytes); // every variant writes Canny's edges themselves
    }
    let index = usize::from(product == Product::Gy);
    match output {
        Output::Edges | Output::Direction4 => Values::U8(bytes), // no copy: the peak is the budget's
        Output::Gradients(Number::I16) => {
            Values::I16(plane(index, 2).chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect())
        }
        Output::Gradients(Number::I32) => {
            Values::I32(plane(index, 4).chunks_exact(4).map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        }
        Output::Gradients(Number::F32) | Output::Direction => {
            let plane = if output == Output::Direction { bytes } else { plane(index, 4) };
            Values::F32(plane.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        }
        Output::Sectors(_) => unreachable!("no product is Canny's words (Product::output)"),
    }
}

/// The values of one plane: bytes as they are, wider numbers decoded from their little-endian bytes.
enum Values<'a> {
    U8(&'a [u8]),
    I16(Vec<i16>),
    I32(Vec<i32>),
    F32(Vec<f32>),
}

impl Values<'_> {
    fn samples(&self) -> Samples<'_> {
        match self {
            Values::U8(v) => Samples::U8(v),
            Values::I16(v) => Samples::I16(v),
            Values::I32(v) => Samples::I32(v),
            Values::F32(v) => Samples::F32(v),
        }
    }
}

/// Writes the product (from `bytes`, the output as every variant gives it) and, with
/// `--intermediate`, the grey, |Gx| and |Gy| images of the reference's `stages`: all or none, each in the format
/// its extension chooses.
#[allow(clippy::too_many_arguments)]
pub(super) fn write(
    opts: &super::Options,
    targets: &[Target],
    width: u32,
    height: u32,
    bytes: &[u8],
    stages: Option<&cpu::scalar::Stages>,
    zlib: Option<&[u8]>,
) -> Result<()> {
    let compression = opts.compression;
    let picture = |path: &Path, samples| -> Result<Picture> {
        let format = image_io::output::format_of(path)?;
        Ok(Picture { width, height, samples, color: png::ColorType::Grayscale, compression, format })
    };
    let output = opts.product.output(&opts.filter.stencil());
    let product = values(opts, output, bytes, (width as usize, height as usize));
    let mut staged = Staged::new();
    match zlib {
        // The edges' PNG data, already deflated on the GPU.
        Some(zlib) => staged.png_zlib(&targets[0], width, height, zlib)?,
        None => staged.image(&targets[0], &picture(&opts.output, product.samples())?)?,
    }
    if let (true, Some(stages)) = (opts.intermediate, stages) {
        // |Gx| and |Gy| as bytes: saturated at 255, or wrapped mod 256 as the report stored them.
        let abs8 = |g: &[i32]| g.iter().map(|&v| opts.filter.gradient_byte(v)).collect::<Vec<u8>>();
        let (gx, gy) = (abs8(&stages.gx), abs8(&stages.gy));
        for (target, (suffix, pixels)) in targets[1..].iter().zip([("grey", &stages.grey), ("gx", &gx), ("gy", &gy)]) {
            let path = super::sibling(&opts.output, suffix);
            staged.image(target, &picture(&path, Samples::U8(pixels))?)?;
        }
    }
    staged.commit()
}
