//! General 2-D convolution, the `filter` command: the filters of the four studies beside the report (box
//! blurs, Gaussians, the dilated Scharr family of the filter-size study, any integer matrix from a file) on
//! the grey image or on each RGB channel, in exact integers, with every border mode.
//!
//! The semantics, defined once here and restated for the kernels in `cuda/conv.cuh`:
//! - a [`ConvKernel`] is a square, odd-sized integer matrix `K` (a rectangular one from a file is padded with
//!   zero taps to a square, which changes no output), applied as a correlation, as OpenCV's `filter2D` does:
//!   `S(x, y) = Σᵢ Σⱼ K[i][j] · p(x + j − r, y + i − r)`, with pixels outside the image from the [`crate::sobel::Border`]
//!   rule at any distance;
//! - a smoothing kernel ([`Kind::Smooth`], divisor `d > 0`, by default the sum of its taps) gives
//!   `clamp(⌊(S + ⌊d/2⌋) / d⌋, 0, 255)` — the division rounds half up, towards +∞, for sums of either sign;
//! - a gradient kernel ([`Kind::Gradient`]) gives the edge byte of Sobel itself: `Gx = S` with `K`, `Gy = S`
//!   with `Kᵀ`, then `min(255, round(√(Gx² + Gy²)))` ([`crate::sobel::magnitude`]).
//!
//! Sums are 32-bit where `255 · Σ|K|` fits (every named kernel but `gaussian:13` and `:15`), 64-bit otherwise
//! ([`ConvKernel::wide`]); the kernels choose the same width at compile time.

use std::path::Path;

use crate::sobel::{Ksize, Operator, Stencil};

pub mod reference;
mod spec;
pub mod strategy;
pub use strategy::STRIP_PACKED_BOUND;

pub use reference::{filter_plane, filter_scalar};

/// The largest kernel side (`box:15`): radius 7.
pub const MAX_SIZE: usize = 15;

/// What a kernel's sum becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A smoothing filter: the sum divided by `divisor` (> 0), rounded, clamped to a byte.
    Smooth {
        /// The divisor `d`.
        divisor: i64,
    },
    /// A derivative: the kernel gives Gx, its transpose Gy, and the pixel their magnitude.
    Gradient,
}

/// A square integer convolution kernel of odd side, and what its sum becomes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvKernel {
    /// How the user named it (`box:5`, `scharr:9`, a file's path).
    pub name: String,
    /// Pixels it reaches on each side: its side is `2·radius + 1`.
    pub radius: usize,
    /// `side()²` taps, row by row: `taps[i·side + j]` multiplies the pixel at (x + j − r, y + i − r).
    pub taps: Vec<i32>,
    /// Smoothing or gradient.
    pub kind: Kind,
}

/// A kernel that cannot be used, in one line (the caller adds where it came from).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

impl ConvKernel {
    /// Parses `--kernel SPEC`: `box:D`, `gaussian:D` (D odd, 1 to 15), `scharr:D` (D odd, 3 to 15),
    /// `sobel:K` (K = 1, 3, 5, 7), or the path of a matrix file ([`ConvKernel::from_text`]).
    pub fn parse(spec: &str) -> Result<ConvKernel, SpecError> {
        spec::parse(spec)
    }

    /// A kernel from a matrix file's text: rows of integers (spaces or commas between them; `#` starts a
    /// comment), odd numbers of rows and columns, up to 15 each; optionally a line `divisor N` (N > 0) and a
    /// line `gradient` (the magnitude of the matrix and its transpose, as Sobel). Without either, the divisor
    /// is the sum of the taps, which must then be positive.
    pub fn from_text(name: &str, text: &str) -> Result<ConvKernel, SpecError> {
        spec::from_text(name, text)
    }

    /// [`ConvKernel::from_text`] of a file, naming it in any error.
    pub fn from_file(path: &Path) -> Result<ConvKernel, SpecError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| SpecError(format!("{}: cannot read it: {e}", path.display())))?;
        spec::from_text(&path.display().to_string(), &text)
    }

    /// A box blur of side `d`: every tap 1, divided by `d²`.
    pub fn boxed(d: usize) -> ConvKernel {
        let taps = vec![1; d * d];
        ConvKernel { name: format!("box:{d}"), radius: d / 2, taps, kind: Kind::Smooth { divisor: (d * d) as i64 } }
    }

    /// A Gaussian of side `d`: the outer product of the binomial row `C(d − 1, k)` with itself (OpenCV's own
    /// taps for 3, 5 and 7), divided by `4^(d − 1)`.
    pub fn gaussian(d: usize) -> ConvKernel {
        let mut row = vec![1i32];
        for _ in 1..d {
            let mut next = vec![1; row.len() + 1];
            for k in 1..row.len() {
                next[k] = row[k - 1] + row[k];
            }
            row = next;
        }
        let taps = row.iter().flat_map(|&a| row.iter().map(move |&b| a * b)).collect();
        let divisor = 1i64 << (2 * (d - 1));
        ConvKernel { name: format!("gaussian:{d}"), radius: d / 2, taps, kind: Kind::Smooth { divisor } }
    }

    /// The filter study's Scharr of side `d` (≥ 3): the 3×3 Scharr dilated by `r = (d − 1)/2`, its six
    /// non-zero taps −3, −10, −3 in column −r and 3, 10, 3 in column +r, at rows −r, 0, +r (the study divided them
    /// by 32·r; here they stay integers, and the magnitude is Sobel's).
    pub fn scharr(d: usize) -> ConvKernel {
        let r = d / 2;
        let mut taps = vec![0; d * d];
        for (row, w) in [(0, 3), (r, 10), (2 * r, 3)] {
            taps[row * d] = -w;
            taps[row * d + 2 * r] = w;
        }
        ConvKernel { name: format!("scharr:{d}"), radius: r, taps, kind: Kind::Gradient }
    }

    /// Sobel of `ksize` as a matrix (Gx's taps, OpenCV's `getDerivKernels`): the edge command's stencil, so that
    /// `filter --kernel sobel:K` and the edge command give the same bytes.
    pub fn sobel(ksize: Ksize) -> ConvKernel {
        ConvKernel::gradient(&format!("sobel:{}", ksize.name()), Stencil::of(Operator::Sobel, ksize))
    }

    /// A gradient stencil of the edge command as a matrix: Gx's taps `smooth[i] · deriv[j]`, named `name`.
    pub fn gradient(name: &str, st: Stencil) -> ConvKernel {
        let w = st.width();
        let taps = (0..w * w).map(|k| st.x_tap(k / w, k % w)).collect();
        ConvKernel { name: name.to_owned(), radius: st.radius, taps, kind: Kind::Gradient }
    }

    /// The kernel in an output's name: `box5` for `box:5`, a matrix file by its stem.
    pub fn tag(&self) -> String {
        match self.name.split_once(':') {
            Some((n, d)) if !self.name.contains('/') => format!("{n}{d}"),
            _ => Path::new(&self.name).file_stem().map_or("kernel".into(), |s| s.to_string_lossy().into_owned()),
        }
    }

    /// The side, `2·radius + 1`.
    pub fn side(&self) -> usize {
        2 * self.radius + 1
    }

    /// Tap (i, j) of the kernel, or of its transpose.
    #[inline(always)]
    pub fn tap(&self, i: usize, j: usize, transposed: bool) -> i32 {
        let d = self.side();
        if transposed {
            self.taps[j * d + i]
        } else {
            self.taps[i * d + j]
        }
    }

    /// The largest |S| an 8-bit image can give: `255 · Σ|K|` (the transpose's is the same).
    pub fn bound(&self) -> i64 {
        255 * self.taps.iter().map(|&t| t.unsigned_abs() as i64).sum::<i64>()
    }

    /// Whether gpu-strip keeps this kernel's rings two columns to a word (`RING_PACKED` in `cuda/conv_strip.cu`): a
    /// gradient whose every |G| is at most [`STRIP_PACKED_BOUND`] (the Scharr family, sobel:3 and :5).
    pub fn strip_packed(&self) -> bool {
        self.kind == Kind::Gradient && self.bound() <= STRIP_PACKED_BOUND
    }

    /// Whether sums need 64 bits: `bound + ⌊d/2⌋` passes `i32::MAX`.
    pub fn wide(&self) -> bool {
        let half = match self.kind {
            Kind::Smooth { divisor } => divisor / 2,
            Kind::Gradient => 0,
        };
        self.bound() + half > i32::MAX as i64
    }

    /// How many taps are not zero (what a kernel with its taps compiled in reads per output).
    pub fn nonzero_taps(&self) -> usize {
        self.taps.iter().filter(|&&t| t != 0).count()
    }

    /// The kernel as `column ⊗ row` in integers (`K[i][j] = column[i] · row[j]`), when it has rank one: box,
    /// Gaussian, Sobel and the Scharr family do; most matrices from files do not.
    pub fn factors(&self) -> Option<(Vec<i32>, Vec<i32>)> {
        let d = self.side();
        let rows: Vec<&[i32]> = self.taps.chunks(d).collect();
        let first = rows.iter().find(|r| r.iter().any(|&t| t != 0))?;
        // The primitive row: the first non-zero row divided by the gcd of its taps.
        let g = first.iter().fold(0u32, |g, &t| gcd(g, t.unsigned_abs())) as i32;
        let row: Vec<i32> = first.iter().map(|&t| t / g).collect();
        let j0 = row.iter().position(|&t| t != 0)?;
        let mut column = Vec::with_capacity(d);
        for r in &rows {
            // Every row must be an integer multiple of the primitive row (its taps have gcd 1).
            let c = r[j0] / row[j0];
            if r.iter().zip(&row).any(|(&t, &b)| t != c * b) {
                return None;
            }
            column.push(c);
        }
        Some((column, row))
    }

    /// Which rows gpu-strip's ring keeps (`CONV_STRIDE` in `cuda/conv_strip.cu`): every `ring_stride()`-th from the
    /// centre. The gcd of the radius and of every non-zero tap's distance from the centre in the factors that run down
    /// the columns: the column factor, and for a gradient the row factor (its transpose's column factor). The Scharr
    /// family dilated by r reads rows −r, 0 and +r: r. A kernel of rank above one, or with a non-zero tap one row
    /// from the centre (box, Gaussian, Sobel): 1, every row.
    pub fn ring_stride(&self) -> usize {
        let Some((column, row)) = self.factors() else { return 1 };
        let down = if self.kind == Kind::Gradient { [column, row].concat() } else { column };
        let d = self.side() as i64;
        let taps = down.iter().enumerate().filter(|&(_, &t)| t != 0);
        let g = taps
            .fold(self.radius as u32, |g, (i, _)| gcd(g, ((i as i64 % d) - self.radius as i64).unsigned_abs() as u32));
        g.max(1) as usize
    }

    /// The byte for sums `s` (and `t`, the transpose's, for a gradient).
    #[inline(always)]
    pub fn finish(&self, s: i64, t: i64) -> u8 {
        match self.kind {
            Kind::Smooth { divisor } => smooth_byte(s, divisor),
            Kind::Gradient => gradient_byte(s, t),
        }
    }
}

/// `clamp(⌊(s + ⌊d/2⌋) / d⌋, 0, 255)`.
#[inline(always)]
pub fn smooth_byte(s: i64, d: i64) -> u8 {
    (s + d / 2).div_euclid(d).clamp(0, 255) as u8
}

/// Sobel's edge byte of two sums of any size: each clamped to ±255 first, which changes no answer.
#[inline(always)]
pub fn gradient_byte(gx: i64, gy: i64) -> u8 {
    crate::sobel::magnitude(gx.clamp(-255, 255) as i32, gy.clamp(-255, 255) as i32)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A plane-by-plane image for the filter: `planes` planes of `width × height` bytes, one after another (the
/// grey image, or R, G and B apart).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planes {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// 1 (grey) or 3 (R, G, B).
    pub planes: usize,
    /// `planes · width · height` bytes.
    pub data: Vec<u8>,
}

impl Planes {
    /// The report's grey of an RGB image, as one plane (the edge command's, as [`crate::sobel::Filter::grey`]).
    pub fn grey(rgb: &image::RgbImage) -> Planes {
        let f = crate::sobel::Filter::default();
        let data = rgb.pixels().map(|p| f.grey(p[0], p[1], p[2])).collect();
        Planes { width: rgb.width() as usize, height: rgb.height() as usize, planes: 1, data }
    }

    /// R, G and B as three planes.
    pub fn channels(rgb: &image::RgbImage) -> Planes {
        let raw = rgb.as_raw();
        let data = (0..3).flat_map(|c| raw.iter().skip(c).step_by(3).copied()).collect();
        Planes { width: rgb.width() as usize, height: rgb.height() as usize, planes: 3, data }
    }

    /// The pixels interleaved again (grey as is, three planes as RGB), as a PNG takes them.
    pub fn interleaved(&self) -> Vec<u8> {
        if self.planes == 1 {
            return self.data.clone();
        }
        let n = self.width * self.height;
        (0..n).flat_map(|i| (0..self.planes).map(move |c| (c, i))).map(|(c, i)| self.data[c * n + i]).collect()
    }
}

/// Where `filter` writes by default: `<stem>_<kernel>.png` beside the input (`box:5` → `box5`; a matrix file by its
/// stem).
pub fn default_output(input: &Path, kernel: &ConvKernel) -> std::path::PathBuf {
    let stem = input.file_stem().map_or("image".into(), |s| s.to_string_lossy().into_owned());
    input.with_file_name(format!("{stem}_{}.png", kernel.tag()))
}
