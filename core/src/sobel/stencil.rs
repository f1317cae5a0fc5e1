//! The gradient stencils: the kernel size (`--ksize`) and the separable taps it stands for (OpenCV's
//! `getDerivKernels`), from which every halo, band and kernel build derives.

use serde::Serialize;

use super::Operator;

/// The kernel size of the Sobel operator (`--ksize`), as OpenCV's `Sobel(…, ksize)` takes it (serialised as
/// that number).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ksize {
    /// `[-1 0 1]` along the axis, no smoothing across it.
    K1 = 1,
    /// `[-1 0 1]` ⊗ `[1 2 1]`.
    #[default]
    K3 = 3,
    /// `[-1 -2 0 2 1]` ⊗ `[1 4 6 4 1]`.
    K5 = 5,
    /// `[-1 -4 -5 0 5 4 1]` ⊗ `[1 6 15 20 15 6 1]`.
    K7 = 7,
}

impl Serialize for Ksize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(*self as u32)
    }
}

impl Ksize {
    /// Every value, in the order the help lists them.
    pub const ALL: [Ksize; 4] = [Ksize::K1, Ksize::K3, Ksize::K5, Ksize::K7];

    /// The name the command line uses ("1", "3", …).
    pub fn name(self) -> &'static str {
        ["", "1", "", "3", "", "5", "", "7"][self as usize]
    }
}

/// A separable gradient stencil: Gx = `smooth` down the rows ⊗ `deriv` along a row, Gy = `deriv` down the
/// rows ⊗ `smooth` along a row, each `2·radius + 1` taps (centre at `radius`). Every halo, band, border
/// resolution, row ring and kernel build derives from it, so that a new size is data, not a branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stencil {
    /// Pixels the stencil reaches on each side (1 for ksize 1 and 3, 2 for 5, 3 for 7).
    pub radius: usize,
    smooth: [i32; 2 * Stencil::MAX_RADIUS + 1],
    deriv: [i32; 2 * Stencil::MAX_RADIUS + 1],
}

impl Stencil {
    /// The largest radius any operator has (ksize 7).
    pub const MAX_RADIUS: usize = 3;

    /// The stencil of `operator` at `ksize` (Scharr is 3×3 whatever `ksize`; [`Filter::resolve`](super::Filter::resolve) refuses
    /// other sizes for it). The taps are OpenCV's `getDerivKernels(1, 0, ksize)`.
    pub const fn of(operator: Operator, ksize: Ksize) -> Stencil {
        let (radius, smooth, deriv) = match (operator, ksize) {
            (Operator::Scharr, _) => (1, [3, 10, 3, 0, 0, 0, 0], [-1, 0, 1, 0, 0, 0, 0]),
            (Operator::Sobel, Ksize::K1) => (1, [0, 1, 0, 0, 0, 0, 0], [-1, 0, 1, 0, 0, 0, 0]),
            (Operator::Sobel, Ksize::K3) => (1, [1, 2, 1, 0, 0, 0, 0], [-1, 0, 1, 0, 0, 0, 0]),
            (Operator::Sobel, Ksize::K5) => (2, [1, 4, 6, 4, 1, 0, 0], [-1, -2, 0, 2, 1, 0, 0]),
            (Operator::Sobel, Ksize::K7) => (3, [1, 6, 15, 20, 15, 6, 1], [-1, -4, -5, 0, 5, 4, 1]),
        };
        Stencil { radius, smooth, deriv }
    }

    /// `2·radius + 1`.
    pub const fn width(&self) -> usize {
        2 * self.radius + 1
    }

    /// The smoothing taps, `width()` of them.
    pub fn smooth(&self) -> &[i32] {
        &self.smooth[..self.width()]
    }

    /// The derivative taps, `width()` of them (antisymmetric).
    pub fn deriv(&self) -> &[i32] {
        &self.deriv[..self.width()]
    }

    /// Gx's tap at row `i`, column `j` (`0..width()`, centre at `radius`); Gy's is `x_tap(j, i)`.
    pub fn x_tap(&self, i: usize, j: usize) -> i32 {
        self.smooth[i] * self.deriv[j]
    }

    /// The largest |Gx| or |Gy| an 8-bit grey image can give: 255 · Σ smooth · Σ positive deriv taps
    /// (ksize 1: 255, 3: 1020, 5: 12 240, 7: 163 200; Scharr: 4080).
    pub const fn bound(&self) -> i32 {
        let (mut s, mut d, mut i) = (0, 0, 0);
        while i < self.smooth.len() {
            s += self.smooth[i];
            if self.deriv[i] > 0 {
                d += self.deriv[i];
            }
            i += 1;
        }
        255 * s * d
    }

    /// Whether Gx and Gy fit 16 bits (every size but 7: its |G| reaches 163 200, which needs 32).
    pub const fn fits_i16(&self) -> bool {
        self.bound() <= i16::MAX as i32
    }

    /// The stencil factored as `smooth = [e c e] ⊛ [1 1]^levels` and `deriv = [−1 0 1] ⊛ [1 1]^levels`:
    /// (e, c, levels). Both directions then carry `[1 1]^levels`, so Gx and Gy are the 3×3 operator of weights
    /// (e, c) on the grey image smoothed by `[1 1]^levels` along and down (the register-blocked GPU kernels,
    /// `cuda/row16.cuh`). Sobel 5×5 and 7×7 are Sobel 3×3 after 2 and 4 levels; ksize 1 is (0, 1) with none.
    /// The smoothed grey is at most 255·4^levels (4080 at 5×5, 65 280 at 7×7): 16 bits, so the kernels add two
    /// columns of it with one 32-bit add.
    pub const fn factors(&self) -> (i32, i32, usize) {
        let levels = 2 * (self.radius - 1);
        // The inner taps of smooth are e and c convolved with [1 1]^levels: its first is e, its second e·levels + c.
        let e = self.smooth[0];
        let c = self.smooth[1] - e * levels as i32;
        (e, c, levels)
    }
}
