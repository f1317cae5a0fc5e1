//! The exact arithmetic of the pipeline, defined once. Every variant, CPU or GPU, must produce the
//! bytes these functions define; `cuda/sobel.cuh` restates them in CUDA C (the host passes the stencil's
//! taps as `-D` constants) and the tests hold every path to them.
//!
//! 1. **Grey** ([`Grey`]): `(30·R + 59·G + 11·B + 50) / 100` in integers — the report's
//!    `0.30R + 0.59G + 0.11B`, rounded half up (the default) — or OpenCV's `cvtColor` RGB→GRAY,
//!    `(9798·R + 19235·G + 3735·B + 2^14) >> 15` (`--grey bt601`).
//! 2. **Gradients**: the [`Stencil`] of the operator and kernel size — OpenCV's `getDerivKernels`:
//!    Gx = smooth (down the rows) ⊗ derivative (along a row), Gy the transpose — applied to the grey image in
//!    exact integers. Pixels outside the image come from the [`Border`] rule, at any distance.
//! 3. **Edges** ([`Norm`]): `min(255, round(√(Gx² + Gy²)))` (L2, the default) or `min(255, |Gx| + |Gy|)`
//!    (L1, Canny's default). `Gx² + Gy²` is an integer, and the square root of an integer is never exactly
//!    `k + ½`, so "round" needs no tie rule; see [`magnitude_from_squared`] for how it is computed exactly.
//! 4. **Direction** ([`direction`], [`direction4`]): `atan2(Gy, Gx)` in radians by one fixed sequence of
//!    IEEE single-precision operations (the same on the GPU), and OpenCV-Canny's four quantised directions.
//!
//! A [`Filter`] picks the operator, kernel size, border, grey, norm and arithmetic: the exact one above, or
//! [`Compat::Report`], which reproduces the report's C program byte for byte, wrap-arounds included (see
//! [`Compat`] for each divergence and why the default is right).

use serde::Serialize;

mod pixel;
mod stencil;
pub use pixel::*;
pub use stencil::{Ksize, Stencil};

/// Which gradient operator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operator {
    /// Sobel, of any [`Ksize`]: at 3, [-1 0 1; -2 0 2; -1 0 1].
    #[default]
    Sobel,
    /// Scharr, 3×3 only: [-3 0 3; -10 0 10; -3 0 3] (better rotational symmetry).
    Scharr,
}

impl Operator {
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

/// A number type of gradient planes (`--output gx` writes one; Python's `gradients(…, dtype=)` both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Number {
    /// 16-bit integers: every stencil but Sobel 7×7.
    I16,
    /// 32-bit integers: every stencil.
    I32,
    /// 32-bit floats: every stencil, exactly (|G| < 2^24).
    F32,
}

impl Number {
    /// Bytes a value.
    pub const fn bytes(self) -> usize {
        match self {
            Number::I16 => 2,
            Number::I32 | Number::F32 => 4,
        }
    }

    /// The smallest integer type that holds `stencil`'s gradients.
    pub const fn integer_for(stencil: &Stencil) -> Number {
        if stencil.fits_i16() {
            Number::I16
        } else {
            Number::I32
        }
    }
}

/// What each pixel gives: the edge byte, or what the edges are made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Output {
    /// The edge byte, in the filter's norm (magnitude or L1).
    #[default]
    Edges,
    /// Gx and Gy, two planes of this type (Gx's first).
    Gradients(Number),
    /// `atan2(Gy, Gx)` in radians, float ([`direction`]).
    Direction,
    /// OpenCV Canny's four directions, a byte ([`direction4`]).
    Direction4,
    /// What Canny's suppression reads of each pixel, one plane of words of this type: its magnitude shifted up two
    /// bits and its sector ([`crate::canny::Canny::sector`], in the filter's norm). Not an output users ask for: the
    /// GPU's Canny writes it ([`crate::canny::Canny::gradients`]).
    Sectors(Number),
}

impl Output {
    /// Bytes a pixel takes in every plane together.
    pub const fn bytes_per_pixel(self) -> usize {
        match self {
            Output::Edges | Output::Direction4 => 1,
            Output::Gradients(n) => 2 * n.bytes(),
            Output::Sectors(n) => n.bytes(),
            Output::Direction => 4,
        }
    }
}

/// How RGB becomes grey.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grey {
    /// `(30·R + 59·G + 11·B + 50) / 100`: the report's weights in percent, rounded half up.
    #[default]
    Percent,
    /// OpenCV's `cvtColor` RGB→GRAY (the pip wheel of OpenCV 5.0, all 2^24 colours checked):
    /// `(9798·R + 19235·G + 3735·B + 2^14) >> 15`, BT.601's 0.299/0.587/0.114 in 15-bit fixed point.
    Bt601,
}

impl Grey {
    /// Every value, in the order the help lists them.
    pub const ALL: [Grey; 2] = [Grey::Percent, Grey::Bt601];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Grey::Percent => "percent",
            Grey::Bt601 => "bt601",
        }
    }
}

/// How the two gradients become one edge byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Norm {
    /// `min(255, round(√(Gx² + Gy²)))`.
    #[default]
    L2,
    /// `min(255, |Gx| + |Gy|)` (OpenCV Canny's default, NPP's `nppiNormL1`).
    L1,
}

/// Which arithmetic turns grey values and gradients into bytes.
///
/// [`Compat::Report`] is the report's native C program, expression for expression (x86-64, SSE2 doubles,
/// no fused multiply-add, conversions truncating), for its 3×3 operators only:
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

/// Everything that decides the edge bytes, apart from the image: every variant takes one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Filter {
    /// Sobel or Scharr.
    pub operator: Operator,
    /// The Sobel kernel size (Scharr: 3).
    pub ksize: Ksize,
    /// What the stencil sees beyond the edge.
    pub border: Border,
    /// Exact arithmetic or the report's.
    pub compat: Compat,
    /// How RGB becomes grey (exact arithmetic only; the report has its own).
    pub grey: Grey,
    /// L2 or L1 edges (exact arithmetic only).
    pub norm: Norm,
}

/// A combination [`Filter::resolve`] refuses: a setting the others rule out, named by its option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// The report's arithmetic with a border other than its zero one.
    ReportBorder(Border),
    /// The report's arithmetic (defined for its 3×3 operators) with another kernel size.
    ReportKsize(Ksize),
    /// The report's arithmetic, which has its own grey, with `--grey bt601`.
    ReportGrey,
    /// The report's arithmetic, which has its own magnitude, with the L1 norm.
    ReportNorm,
    /// Scharr at a size other than 3.
    ScharrKsize(Ksize),
}

impl Conflict {
    /// The refusal in one line, each option with its value written by `opt` (`--border zero` on the command
    /// line, `border='zero'` in Python).
    pub fn message(self, opt: impl Fn(&str, &str) -> String) -> String {
        let report = opt("compat", "report");
        match self {
            Conflict::ReportBorder(b) => {
                format!("{report} uses the report's zero border; leave out {}", opt("border", b.name()))
            }
            Conflict::ReportKsize(k) => {
                format!("{report} is the report's 3×3 program; leave out {}", opt("ksize", k.name()))
            }
            Conflict::ReportGrey => format!("{report} has the report's own grey; leave out {}", opt("grey", "bt601")),
            Conflict::ReportNorm => format!("{report} has the report's own magnitude; leave out {}", opt("norm", "l1")),
            Conflict::ScharrKsize(k) => format!(
                "{} is 3×3 only; leave out {} (sobel takes 1, 3, 5 and 7)",
                opt("operator", "scharr"),
                opt("ksize", k.name())
            ),
        }
    }
}

impl Filter {
    /// The default filter (Sobel 3×3, exact) with this border.
    pub fn with_border(border: Border) -> Filter {
        Filter { border, ..Filter::default() }
    }

    /// `base` with the border asked for, if any, checked: the report's arithmetic has its zero border (another
    /// one asked for is a conflict), its 3×3 operators, grey and magnitude; exact arithmetic defaults to
    /// replicate; Scharr is 3×3. The command line and the Python package both choose a filter this way, each
    /// saying a [`Conflict`] in its own words.
    pub fn resolve(base: Filter, border: Option<Border>) -> Result<Filter, Conflict> {
        if base.operator == Operator::Scharr && base.ksize != Ksize::K3 {
            return Err(Conflict::ScharrKsize(base.ksize));
        }
        let border = match (base.compat, border) {
            (Compat::Report, Some(b)) if b != Border::Zero => return Err(Conflict::ReportBorder(b)),
            (Compat::Report, _) if base.ksize != Ksize::K3 => return Err(Conflict::ReportKsize(base.ksize)),
            (Compat::Report, _) if base.grey != Grey::Percent => return Err(Conflict::ReportGrey),
            (Compat::Report, _) if base.norm != Norm::L2 => return Err(Conflict::ReportNorm),
            (Compat::Report, _) => Border::Zero,
            (Compat::Exact, b) => b.unwrap_or_default(),
        };
        Ok(Filter { border, ..base })
    }

    /// The report's program: Sobel, zero border, its arithmetic.
    pub fn report() -> Filter {
        Filter { border: Border::Zero, compat: Compat::Report, ..Filter::default() }
    }

    /// The stencil of this filter's operator and size.
    pub fn stencil(self) -> Stencil {
        Stencil::of(self.operator, self.ksize)
    }

    /// Grey value of one RGB pixel in this filter's arithmetic.
    #[inline(always)]
    pub fn grey(self, r: u8, g: u8, b: u8) -> u8 {
        match (self.compat, self.grey) {
            (Compat::Report, _) => grey_report(r, g, b),
            (Compat::Exact, Grey::Percent) => grey(r, g, b),
            (Compat::Exact, Grey::Bt601) => grey_bt601(r, g, b),
        }
    }

    /// The edge byte for gradients (gx, gy) in this filter's arithmetic and norm.
    #[inline(always)]
    pub fn magnitude(self, gx: i32, gy: i32) -> u8 {
        match (self.compat, self.norm) {
            (Compat::Report, _) => magnitude_report(gx, gy),
            (Compat::Exact, Norm::L2) => magnitude(gx, gy),
            (Compat::Exact, Norm::L1) => magnitude_l1(gx, gy),
        }
    }

    /// A gradient as the byte `--intermediate` writes: |g| saturated (exact) or wrapped (report).
    pub fn gradient_byte(self, g: i32) -> u8 {
        match self.compat {
            Compat::Exact => g.unsigned_abs().min(255) as u8,
            Compat::Report => g.unsigned_abs() as u8,
        }
    }

    /// Every stencil (operator × size) with every border, in exact arithmetic (default grey and norm), and the
    /// report's two operators: for tests and sweeps.
    pub fn all() -> impl Iterator<Item = Filter> {
        let stencils = [(Operator::Sobel, Ksize::K1), (Operator::Sobel, Ksize::K3), (Operator::Sobel, Ksize::K5)]
            .into_iter()
            .chain([(Operator::Sobel, Ksize::K7), (Operator::Scharr, Ksize::K3)]);
        let exact = stencils.flat_map(|(operator, ksize)| {
            Border::ALL.into_iter().map(move |border| Filter { operator, ksize, border, ..Filter::default() })
        });
        exact.chain(Operator::ALL.map(|operator| Filter { operator, ..Filter::report() }))
    }
}

/// What a stencil sees beyond the image edge. The discriminants are passed to the kernels as `int`
/// and must equal `BORDER_*` in `cuda/sobel.cuh` (a test checks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Border {
    /// The nearest edge pixel is repeated: `…a a | a b c | c c…` (NPP's and kornia's choice).
    #[default]
    Replicate = 0,
    /// Pixels outside the image are 0 (the report's program; OpenCV's `BORDER_CONSTANT` with 0).
    Zero = 1,
    /// Mirror without repeating the edge: `…c b | a b c | b a…` (OpenCV's default, `BORDER_REFLECT_101`),
    /// reflected again as often as a stencil wider than the image needs; one pixel repeats itself.
    Reflect101 = 2,
}

impl Border {
    /// Maps coordinate `i` (at any distance outside `0..n`) to the coordinate it reads, or `None` where the
    /// pixel is the constant 0 — OpenCV's `borderInterpolate`.
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
            Border::Reflect101 => {
                // Reflection is periodic with period 2·last: fold i into one period, then mirror its upper half.
                let period = 2 * last;
                let m = i.rem_euclid(period);
                Some(if m > last { period - m } else { m } as usize)
            }
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
