//! `cpu-scalar`: the reference, structured like the report's C program — four passes over the whole
//! image (grey, Gx, Gy, magnitude) with full-size intermediate buffers, one thread, no cleverness.
//! It is deliberately the most literal reading of [`crate::sobel`]: Gx and Gy are the stencil's 2-D matrix
//! (`smooth[i]·deriv[j]`, zeros included) and its transpose through [`reference::correlate`] — the project's one
//! definition of a stencil's sum, every neighbour through the border rule — so it shares no shortcut with the
//! optimised variants it checks, and the filter command's reference is the same code. With
//! [`Compat::Report`](crate::sobel::Compat) it is the report's C program, expression for expression.

use image::{GrayImage, RgbImage};

use crate::conv::{reference, ConvKernel};
use crate::sobel::{self, Filter};

/// Bytes a pixel of [`Stages`]: grey 1, Gx and Gy 4 each (32 bits hold every kernel size), magnitude 1.
pub const STAGES_BYTES_PER_PIXEL: u64 = 1 + 4 + 4 + 1;

/// The pipeline's stages, kept for `--intermediate` output, the other outputs and tests.
pub struct Stages {
    /// Image width.
    pub width: usize,
    /// Image height.
    pub height: usize,
    /// The grey image.
    pub grey: Vec<u8>,
    /// Horizontal gradient, exact (Sobel 3×3: ±1020; 7×7: ±163 200; Scharr: ±4080).
    pub gx: Vec<i32>,
    /// Vertical gradient, exact.
    pub gy: Vec<i32>,
    /// The edge image.
    pub magnitude: Vec<u8>,
}

impl Stages {
    /// `atan2(Gy, Gx)` of every pixel ([`sobel::direction`]).
    pub fn direction(&self) -> Vec<f32> {
        self.gx.iter().zip(&self.gy).map(|(&x, &y)| sobel::direction(x, y)).collect()
    }

    /// OpenCV Canny's quantised direction of every pixel ([`sobel::direction4`]).
    pub fn direction4(&self) -> Vec<u8> {
        self.gx.iter().zip(&self.gy).map(|(&x, &y)| sobel::direction4(x, y)).collect()
    }
}

/// `output` of the stages, as the little-endian bytes of its planes (gradients: Gx's, then Gy's), converted
/// from the exact gradients one value at a time.
pub fn output_bytes(stages: &Stages, filter: Filter, output: crate::sobel::Output) -> Vec<u8> {
    use crate::sobel::{Number, Output};
    let planes = |f: &dyn Fn(i32) -> Vec<u8>| stages.gx.iter().chain(&stages.gy).flat_map(|&g| f(g)).collect();
    let sectors = |n: Number| {
        let canny = crate::canny::Canny::of_filter(filter);
        let words = stages.gx.iter().zip(&stages.gy).map(move |(&x, &y)| canny.sector(x, y));
        match n {
            Number::I16 => words.flat_map(|w| (w as u16).to_le_bytes()).collect(),
            _ => words.flat_map(|w| w.to_le_bytes()).collect(),
        }
    };
    match output {
        Output::Sectors(n) => sectors(n),
        Output::Edges => stages.magnitude.clone(),
        Output::Direction4 => stages.direction4(),
        Output::Direction => stages.direction().iter().flat_map(|d| d.to_le_bytes()).collect(),
        Output::Gradients(Number::I16) => planes(&|g| (g as i16).to_le_bytes().to_vec()),
        Output::Gradients(Number::I32) => planes(&|g| g.to_le_bytes().to_vec()),
        Output::Gradients(Number::F32) => planes(&|g| (g as f32).to_le_bytes().to_vec()),
    }
}

/// Runs the four passes and returns every stage.
pub fn sobel_stages(rgb: &RgbImage, filter: Filter) -> Stages {
    let (width, height) = (rgb.width() as usize, rgb.height() as usize);
    let grey: Vec<u8> = rgb.pixels().map(|p| filter.grey(p[0], p[1], p[2])).collect();
    // Gx is the stencil's matrix correlated with the grey image, Gy its transpose: the one definition of a stencil's
    // sum that the filter command's reference uses too.
    let kernel = ConvKernel::gradient(filter.operator.name(), filter.stencil());
    // Straight into 32-bit planes (every stencil's sums fit): the memory estimate counts 4 bytes a pixel for each.
    let sums = |transposed| {
        let mut plane = Vec::with_capacity(width * height);
        reference::correlate_plane(&grey, (width, height), &kernel, transposed, filter.border, |s| {
            plane.push(s as i32)
        });
        plane
    };
    let (gx, gy) = (sums(false), sums(true));
    let magnitude = gx.iter().zip(&gy).map(|(&x, &y)| filter.magnitude(x, y)).collect();
    Stages { width, height, grey, gx, gy, magnitude }
}

/// The magnitude image alone.
pub fn sobel(rgb: &RgbImage, filter: Filter) -> GrayImage {
    let stages = sobel_stages(rgb, filter);
    GrayImage::from_raw(rgb.width(), rgb.height(), stages.magnitude).expect("width × height bytes")
}
