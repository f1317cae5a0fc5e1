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
//!
//! A [`Filter`] picks the operator ([`Operator::Sobel`] or [`Operator::Scharr`]), the border, and the
//! arithmetic: the exact one above, or [`Compat::Report`], which reproduces the report's C program byte
//! for byte, wrap-arounds included (see [`Compat`] for each divergence and why the default is right).

use serde::Serialize;

/// Horizontal Sobel kernel (responds to vertical edges), row-major.
pub const KX: [[i32; 3]; 3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
/// Vertical Sobel kernel (responds to horizontal edges), row-major.
pub const KY: [[i32; 3]; 3] = [[-1, -2, -1], [0, 0, 0], [1, 2, 1]];
/// Horizontal Scharr kernel (the filter-optimisation article's choice): better rotational symmetry.
pub const SCHARR_KX: [[i32; 3]; 3] = [[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]];
/// Vertical Scharr kernel.
pub const SCHARR_KY: [[i32; 3]; 3] = [[-3, -10, -3], [0, 0, 0], [3, 10, 3]];

/// Which 3×3 gradient operator. Both are separable: Gx = [e c e]ᵀ·[−1 0 1] and Gy = [−1 0 1]ᵀ·[e c e],
/// with smoothing weights (e, c) = (1, 2) for Sobel and (3, 10) for Scharr. The discriminants are
/// irrelevant to the kernels: the `.cu` files get the weights as `TAP_EDGE`/`TAP_CENTRE` (a test checks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operator {
    /// [-1 0 1; -2 0 2; -1 0 1]: |G| ≤ 1020.
    #[default]
    Sobel,
    /// [-3 0 3; -10 0 10; -3 0 3]: |G| ≤ 4080; the magnitude saturates at 255 just the same.
    Scharr,
}

impl Operator {
    /// The smoothing weights (edge, centre) of the separable form.
    pub const fn weights(self) -> (i32, i32) {
        match self {
            Operator::Sobel => (1, 2),
            Operator::Scharr => (3, 10),
        }
    }

    /// The horizontal and vertical kernels, row-major.
    pub const fn kernels(self) -> ([[i32; 3]; 3], [[i32; 3]; 3]) {
        match self {
            Operator::Sobel => (KX, KY),
            Operator::Scharr => (SCHARR_KX, SCHARR_KY),
        }
    }

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Operator::Sobel => "sobel",
            Operator::Scharr => "scharr",
        }
    }

    /// Every value, in the order the help lists them.
    pub const ALL: [Operator; 2] = [Operator::Sobel, Operator::Scharr];
}

/// Which arithmetic turns grey values and gradients into bytes.
///
/// [`Compat::Report`] is the report's native C program, expression for expression (x86-64, SSE2 doubles,
/// no fused multiply-add, conversions truncating):
///
/// | step      | report (`--compat report`)                               | default (exact)                       |
/// |-----------|----------------------------------------------------------|---------------------------------------|
/// | grey      | `(byte)(0.30·R + 0.59·G + 0.11·B)`, doubles, truncated    | `(30R + 59G + 11B + 50) / 100`, rounded |
/// | border    | zero                                                     | `--border` (replicate by default)     |
/// | Gx, Gy    | `(byte)abs(conv)`: kept mod 256                          | exact integers                        |
/// | magnitude | `(byte)(int)sqrt(h² + v²)` of those bytes: truncated, mod 256 | `min(255, round(√(Gx² + Gy²)))` |
///
/// Why the default is right: an edge of strength 300 is a strong edge, and wrapping makes it 44 (dark);
/// a gradient of 260 wraps to 4 *before* the magnitude, so strong edges can vanish entirely. Truncation
/// biases every value down by ½ on average, and 0.30/0.59/0.11 are not exact in binary, so a grey
/// pixel (v, v, v) comes out v − 1 for 67 of the 256 values of v (e.g. (2, 2, 2) → 1). Saturating and
/// rounding in exact integers has neither defect and needs no floating point at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compat {
    /// Exact integers, rounded, saturated (the default).
    #[default]
    Exact,
    /// The report's C program: doubles, truncation, gradients and magnitude wrapped mod 256.
    Report,
}

impl Compat {
    /// Every value, in the order the help lists them.
    pub const ALL: [Compat; 2] = [Compat::Exact, Compat::Report];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Compat::Exact => "exact",
            Compat::Report => "report",
        }
    }
}

/// Everything that decides the output bytes, apart from the image: every variant takes one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Filter {
    /// Sobel or Scharr.
    pub operator: Operator,
    /// What the stencil sees beyond the edge.
    pub border: Border,
    /// Exact arithmetic or the report's.
    pub compat: Compat,
}

impl Filter {
    /// The default filter (Sobel, exact) with this border.
    pub fn with_border(border: Border) -> Filter {
        Filter { border, ..Filter::default() }
    }

    /// The filter of `operator` and `compat` with the border asked for, if any: the report's arithmetic has its
    /// zero border (another one asked for is the error), exact arithmetic defaults to replicate. The command
    /// line and the Python package both choose a filter this way, each saying the error in its own words.
    pub fn resolve(operator: Operator, border: Option<Border>, compat: Compat) -> Result<Filter, Border> {
        let border = match (compat, border) {
            (Compat::Report, Some(b)) if b != Border::Zero => return Err(b),
            (Compat::Report, _) => Border::Zero,
            (Compat::Exact, b) => b.unwrap_or_default(),
        };
        Ok(Filter { operator, border, compat })
    }

    /// The report's program: Sobel, zero border, its arithmetic.
    pub fn report() -> Filter {
        Filter { operator: Operator::Sobel, border: Border::Zero, compat: Compat::Report }
    }

    /// Grey value of one RGB pixel in this filter's arithmetic.
    #[inline(always)]
    pub fn grey(self, r: u8, g: u8, b: u8) -> u8 {
        match self.compat {
            Compat::Exact => grey(r, g, b),
            Compat::Report => grey_report(r, g, b),
        }
    }

    /// The output byte for gradients (gx, gy) in this filter's arithmetic.
    #[inline(always)]
    pub fn magnitude(self, gx: i32, gy: i32) -> u8 {
        match self.compat {
            Compat::Exact => magnitude(gx, gy),
            Compat::Report => magnitude_report(gx, gy),
        }
    }

    /// A gradient as the byte `--intermediate` writes: |g| saturated (exact) or wrapped (report).
    pub fn gradient_byte(self, g: i32) -> u8 {
        match self.compat {
            Compat::Exact => g.unsigned_abs().min(255) as u8,
            Compat::Report => g.unsigned_abs() as u8,
        }
    }

    /// Every combination of operator, border and arithmetic, for tests and sweeps.
    pub fn all() -> impl Iterator<Item = Filter> {
        Operator::ALL.into_iter().flat_map(|operator| {
            Border::ALL.into_iter().flat_map(move |border| {
                [Compat::Exact, Compat::Report].into_iter().map(move |compat| Filter { operator, border, compat })
            })
        })
    }
}

/// The report's grey: `(byte)(0.30·R + 0.59·G + 0.11·B)`, evaluated left to right in doubles and
/// truncated. Rust, like C on x86-64, rounds each `*` and `+` on its own (it never fuses them into an
/// FMA), so this is the C expression's exact value.
#[inline(always)]
pub fn grey_report(r: u8, g: u8, b: u8) -> u8 {
    (0.30 * r as f64 + 0.59 * g as f64 + 0.11 * b as f64) as u8
}

/// The report's magnitude: each gradient stored as `(byte)abs(g)` (mod 256), then
/// `(byte)(int)sqrt(h² + v²)`: truncated, and wrapped mod 256 above 255 (at most √(2·255²) ≈ 360).
#[inline(always)]
pub fn magnitude_report(gx: i32, gy: i32) -> u8 {
    let (h, v) = (gx.unsigned_abs() as u8 as i32, gy.unsigned_abs() as u8 as i32);
    ((h * h + v * v) as f64).sqrt() as i32 as u8
}

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
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
    fn report_arithmetic_truncates_and_wraps() {
        // Doubles, truncated: 0.30 + 0.59 + 0.11 is 0.99999999999999989 in binary, so (1, 1, 1) → 0.
        assert_eq!(grey_report(1, 1, 1), 0);
        assert_eq!(grey_report(2, 2, 2), 1);
        assert_eq!(grey_report(3, 3, 3), 3);
        assert_eq!(grey_report(255, 255, 255), 255);
        assert_eq!(grey_report(255, 0, 0), 76); // 76.5 truncated
                                                // Gradients wrap mod 256 before the magnitude: 300 → 44, 256 → 0, −260 → 4.
        assert_eq!(magnitude_report(300, 0), 44);
        assert_eq!(magnitude_report(256, 0), 0);
        assert_eq!(magnitude_report(0, -260), 4);
        // The magnitude truncates, and wraps above 255: √(2·255²) = 360.6 → 360 → 104.
        assert_eq!(magnitude_report(3, 3), 4); // 4.24
        assert_eq!(magnitude_report(255, 255), 104);
        assert_eq!(magnitude_report(200, 200), (282 - 256) as u8);
        assert_eq!(magnitude_report(180, 180), 254); // 254.56, truncated
        let report = Filter::report();
        assert_eq!(report.magnitude(255, 255), 104);
        assert_eq!(Filter::default().magnitude(255, 255), 255);
        assert_eq!(report.gradient_byte(-300), 44);
        assert_eq!(Filter::default().gradient_byte(-300), 255);
    }

    #[test]
    fn operators_are_their_separable_weights() {
        for op in Operator::ALL {
            let (e, c) = op.weights();
            let (kx, ky) = op.kernels();
            assert_eq!(kx, [[-e, 0, e], [-c, 0, c], [-e, 0, e]]);
            assert_eq!(ky, [[-e, -c, -e], [0, 0, 0], [e, c, e]]);
        }
        assert_eq!(Filter::all().count(), 12);
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
