//! The exact arithmetic of the pipeline, defined once. Every variant, CPU or GPU, must produce the
//! bytes these functions define; the `.cu` kernels restate them in CUDA C and the tests hold them to it.
//!
//! 1. **Grey**: `grey = (30·R + 59·G + 11·B + 50) / 100` in integers — the report's `0.30R + 0.59G + 0.11B`,
//!    rounded half up. The largest numerator is 25 550, so 16-bit arithmetic is enough.
//! 2. **Gradients**: the 3×3 Sobel kernels [`KX`] and [`KY`] applied to the grey image in exact integers
//!    (|Gx|, |Gy| ≤ 4·255 = 1020). Pixels outside the image come from the [`Border`] rule.
//! 3. **Magnitude**: `min(255, round(√(Gx² + Gy²)))`. It saturates: the report's bytes wrapped mod 256.
//!    `Gx² + Gy²` is an integer, and the square root of an integer is never exactly `k + ½`, so "round"
//!    needs no tie rule; see [`magnitude_from_squared`] for how it is computed exactly.

use serde::Serialize;

/// Horizontal Sobel kernel (responds to vertical edges), row-major.
pub const KX: [[i32; 3]; 3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
/// Vertical Sobel kernel (responds to horizontal edges), row-major.
pub const KY: [[i32; 3]; 3] = [[-1, -2, -1], [0, 0, 0], [1, 2, 1]];

/// Grey weights in hundredths, for R, G and B.
pub const GREY_WEIGHTS: [u16; 3] = [30, 59, 11];

/// `Gx² + Gy²` at or above which the rounded magnitude is at least 255: `round(√s) ≥ 255 ⇔ s > 254² + 254`.
pub const SATURATED_SQUARE: u32 = 254 * 254 + 254 + 1;

/// Converts one RGB pixel to grey: `(30·R + 59·G + 11·B + 50) / 100`, i.e. rounded half up.
#[inline(always)]
pub fn grey(r: u8, g: u8, b: u8) -> u8 {
    let [wr, wg, wb] = GREY_WEIGHTS;
    // At most 100·255 + 50 = 25 550: fits in u16, which lets the compiler use 8 lanes per SSE register.
    ((wr * r as u16 + wg * g as u16 + wb * b as u16 + 50) / 100) as u8
}

/// The saturated, rounded gradient magnitude `min(255, round(√(gx² + gy²)))`.
#[inline(always)]
pub fn magnitude(gx: i32, gy: i32) -> u8 {
    magnitude_from_squared((gx * gx + gy * gy) as u32)
}

/// `min(255, round(√s))`, exactly, without branches (so loops over it vectorise).
///
/// Clamping `s` to [`SATURATED_SQUARE`] keeps it below 2^24, where `s as f32` is exact; IEEE `sqrt` is
/// correctly rounded, and for `s < 2^24` that never rounds a non-square up to the next integer, so
/// `r = ⌊√s⌋`. Then `round(√s) = r + 1` exactly when `s > r² + r` (because `(r + ½)² = r² + r + ¼`).
/// The GPU kernels do the same with `sqrtf` (correctly rounded unless `-use_fast_math`).
#[inline(always)]
pub fn magnitude_from_squared(s: u32) -> u8 {
    let s = s.min(SATURATED_SQUARE);
    let r = (s as f32).sqrt() as u32;
    (r + (s > r * r + r) as u32) as u8
}

/// What a 3×3 stencil sees beyond the image edge. The discriminants are passed to the kernels as `int`
/// and must equal `BORDER_*` in `cuda/sobel.cuh` (a test checks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Border {
    /// The nearest edge pixel is repeated: `…a a | a b c | c c…` (NPP's and kornia's choice).
    #[default]
    Replicate = 0,
    /// Pixels outside the image are 0 (the report's program).
    Zero = 1,
    /// Mirror without repeating the edge: `…c b | a b c | b a…` (OpenCV's default, `BORDER_REFLECT_101`).
    /// An image one pixel wide or high repeats its only pixel.
    Reflect101 = 2,
}

impl Border {
    /// Maps coordinate `i` (which may be one step outside `0..n`) to the coordinate it reads,
    /// or `None` where the pixel is the constant 0.
    #[inline]
    pub fn resolve(self, i: isize, n: usize) -> Option<usize> {
        let last = n as isize - 1;
        if (0..=last).contains(&i) {
            return Some(i as usize);
        }
        match self {
            Border::Zero => None,
            Border::Replicate => Some(i.clamp(0, last) as usize),
            Border::Reflect101 if n == 1 => Some(0),
            Border::Reflect101 if i < 0 => Some((-i) as usize),
            Border::Reflect101 => Some((2 * last - i) as usize),
        }
    }

    /// The name used on the command line and in the `.cu` kernels' `BORDER_*` constants.
    pub fn name(self) -> &'static str {
        match self {
            Border::Replicate => "replicate",
            Border::Zero => "zero",
            Border::Reflect101 => "reflect101",
        }
    }

    /// Every border mode, for tests and sweeps.
    pub const ALL: [Border; 3] = [Border::Replicate, Border::Zero, Border::Reflect101];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grey_rounds_half_up() {
        assert_eq!(grey(0, 0, 0), 0);
        assert_eq!(grey(255, 255, 255), 255);
        assert_eq!(grey(255, 0, 0), 77); // 76.5 → 77
        assert_eq!(grey(0, 255, 0), 150); // 150.45 → 150
        assert_eq!(grey(0, 0, 255), 28); // 28.05 → 28
        assert_eq!(grey(5, 0, 0), 2); // 1.5 → 2 (half up)
        assert_eq!(grey(1, 1, 1), 1);
    }

    #[test]
    fn magnitude_is_rounded_sqrt_saturated() {
        // Every square up to well past saturation (64 771), against integer arithmetic; above that the
        // clamp makes the answer 255, checked up to the largest reachable square 2·1020².
        for s in 0..=70_000u32 {
            let mut r = 0u32;
            while (r + 1) * (r + 1) <= s {
                r += 1;
            }
            // round(√s) = r + 1 iff √s ≥ r + ½ iff 4s ≥ (2r + 1)² (never equal for integers).
            let rounded = if 4 * s > (2 * r + 1) * (2 * r + 1) { r + 1 } else { r };
            assert_eq!(magnitude_from_squared(s) as u32, rounded.min(255), "s = {s}");
        }
        assert!((70_000..=2 * 1020 * 1020).all(|s| magnitude_from_squared(s) == 255));
        assert_eq!(magnitude(1020, 1020), 255);
        assert_eq!(magnitude(-1020, 0), 255);
        assert_eq!(magnitude(3, 4), 5);
        assert_eq!(magnitude(1, 1), 1); // 1.414
        assert_eq!(magnitude(1, 2), 2); // 2.236
        assert_eq!(magnitude(180, 180), 255); // 254.56 → 255
        assert_eq!(magnitude(179, 180), 254); // 253.85 → 254
    }

    #[test]
    fn border_resolution() {
        use Border::*;
        assert_eq!(Replicate.resolve(-1, 5), Some(0));
        assert_eq!(Replicate.resolve(5, 5), Some(4));
        assert_eq!(Zero.resolve(-1, 5), None);
        assert_eq!(Zero.resolve(5, 5), None);
        assert_eq!(Reflect101.resolve(-1, 5), Some(1));
        assert_eq!(Reflect101.resolve(5, 5), Some(3));
        assert_eq!(Reflect101.resolve(-1, 2), Some(1));
        assert_eq!(Reflect101.resolve(2, 2), Some(0));
        assert_eq!(Reflect101.resolve(-1, 1), Some(0));
        assert_eq!(Reflect101.resolve(1, 1), Some(0));
        for b in Border::ALL {
            assert_eq!(b.resolve(2, 5), Some(2));
        }
    }
}
