//! `cpu-scalar`: the reference, structured like the report's C program — four passes over the whole
//! image (grey, Gx, Gy, magnitude) with full-size intermediate buffers, one thread, no cleverness.
//! It is deliberately the most literal reading of [`crate::sobel`]: the convolution loops over the
//! operator's kernel matrices instead of spelling out the taps, so it shares no shortcut with the
//! optimised variants it checks. With [`Compat::Report`](crate::sobel::Compat) it is the report's C
//! program, expression for expression.

use image::{GrayImage, RgbImage};

use crate::sobel::{Border, Filter};

/// The pipeline's stages, kept for `--intermediate` output and for tests.
pub struct Stages {
    /// Image width.
    pub width: usize,
    /// Image height.
    pub height: usize,
    /// The grey image.
    pub grey: Vec<u8>,
    /// Horizontal gradient, exact (Sobel: ±1020, Scharr: ±4080).
    pub gx: Vec<i16>,
    /// Vertical gradient, exact.
    pub gy: Vec<i16>,
    /// The edge image.
    pub magnitude: Vec<u8>,
}

/// Runs the four passes and returns every stage.
pub fn sobel_stages(rgb: &RgbImage, filter: Filter) -> Stages {
    let (width, height) = (rgb.width() as usize, rgb.height() as usize);
    let grey: Vec<u8> = rgb.pixels().map(|p| filter.grey(p[0], p[1], p[2])).collect();
    let (kx, ky) = filter.operator.kernels();
    let gx = convolve(&grey, width, height, &kx, filter.border);
    let gy = convolve(&grey, width, height, &ky, filter.border);
    let magnitude = gx.iter().zip(&gy).map(|(&x, &y)| filter.magnitude(x as i32, y as i32)).collect();
    Stages { width, height, grey, gx, gy, magnitude }
}

/// The magnitude image alone.
pub fn sobel(rgb: &RgbImage, filter: Filter) -> GrayImage {
    let stages = sobel_stages(rgb, filter);
    GrayImage::from_raw(rgb.width(), rgb.height(), stages.magnitude).expect("width × height bytes")
}

fn convolve(grey: &[u8], width: usize, height: usize, k: &[[i32; 3]; 3], border: Border) -> Vec<i16> {
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height {
        for x in 0..width {
            let mut sum = 0i32;
            for (dy, row) in k.iter().enumerate() {
                for (dx, &weight) in row.iter().enumerate() {
                    let sy = border.resolve(y as isize + dy as isize - 1, height);
                    let sx = border.resolve(x as isize + dx as isize - 1, width);
                    if let (Some(sy), Some(sx)) = (sy, sx) {
                        sum += weight * grey[sy * width + sx] as i32;
                    }
                }
            }
            out.push(sum as i16);
        }
    }
    out
}
