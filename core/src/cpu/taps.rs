//! The stencils `cpu-rayon`'s band loop runs ([`super::rayon`]): the edges' Sobel and Scharr as compile-time
//! constants, a filter's kernel with its taps read at run time, and a plane of bytes as the rows it reads.

use super::source::Rows;
use crate::conv::ConvKernel;
use crate::sobel::{Filter, Ksize, Operator, Stencil};

/// A stencil as the band loop reads it: its radius and, for one of rank one (`K[i][j] = column[i]·row[j]`: every
/// Sobel, Scharr, box and Gaussian), its factor down the columns and its factor along the rows — the transpose is
/// `row ⊗ column`; for any other, its matrix, row by row.
pub(super) trait Taps: Sync {
    fn radius(&self) -> usize;
    /// `Some((column, row))` for a kernel of rank one.
    fn factors(&self) -> Option<(&[i32], &[i32])>;
    /// Row `i` of the matrix (of its transpose with `transposed`).
    fn matrix_row(&self, i: usize, transposed: bool) -> &[i32];
}

/// The stencil of operator `OP` (0 Scharr, 1 Sobel) and size `K`, as a constant: its loops are compiled with their
/// taps folded in (zero taps vanish, ×1 becomes an add).
pub(super) struct Const<const OP: u8, const K: usize>;

impl<const OP: u8, const K: usize> Const<OP, K> {
    pub(super) const STENCIL: &'static Stencil = &Stencil::of(
        if OP == 0 { Operator::Scharr } else { Operator::Sobel },
        match K {
            1 => Ksize::K1,
            3 => Ksize::K3,
            5 => Ksize::K5,
            _ => Ksize::K7,
        },
    );
}

impl<const OP: u8, const K: usize> Taps for Const<OP, K> {
    #[inline(always)]
    fn radius(&self) -> usize {
        Self::STENCIL.radius
    }
    #[inline(always)]
    fn factors(&self) -> Option<(&[i32], &[i32])> {
        Some((Self::STENCIL.smooth(), Self::STENCIL.deriv()))
    }
    fn matrix_row(&self, _: usize, _: bool) -> &[i32] {
        unreachable!("a Sobel or Scharr stencil has rank one")
    }
}

/// A filter's kernel, its taps read at run time.
pub(super) struct Runtime {
    radius: usize,
    factors: Option<(Vec<i32>, Vec<i32>)>,
    /// The matrix's rows, then its transpose's.
    rows: Vec<Vec<i32>>,
    /// Whether the column sums (`255·Σ|column|`), and every sum (`255·Σ|K|`), fit 32 bits.
    pub(super) column_fits_i32: bool,
    pub(super) fits_i32: bool,
}

impl Runtime {
    pub(super) fn of(k: &ConvKernel) -> Runtime {
        let d = k.side();
        let factors = k.factors();
        let rows = (0..2 * d).map(|n| (0..d).map(|j| k.tap(n % d, j, n >= d)).collect()).collect();
        let fits = |bound: i64| bound <= i32::MAX as i64;
        let column_bound =
            factors.as_ref().map_or(k.bound(), |(c, _)| 255 * c.iter().map(|&t| t.unsigned_abs() as i64).sum::<i64>());
        Runtime { radius: k.radius, rows, column_fits_i32: fits(column_bound), fits_i32: fits(k.bound()), factors }
    }
}

impl Taps for Runtime {
    #[inline(always)]
    fn radius(&self) -> usize {
        self.radius
    }
    #[inline(always)]
    fn factors(&self) -> Option<(&[i32], &[i32])> {
        self.factors.as_ref().map(|(c, r)| (&c[..], &r[..]))
    }
    #[inline(always)]
    fn matrix_row(&self, i: usize, transposed: bool) -> &[i32] {
        &self.rows[i + if transposed { 2 * self.radius + 1 } else { 0 }]
    }
}

/// One plane of bytes, as rows the band loop reads (the filter's input: the grey image, or one channel).
pub(super) struct GreyPlane<'a> {
    pub(super) data: &'a [u8],
    pub(super) width: usize,
    pub(super) height: usize,
}

impl Rows for GreyPlane<'_> {
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.height
    }
    #[inline(always)]
    fn grey_row(&self, y: usize, _: Filter, dst: &mut [u8]) {
        dst.copy_from_slice(&self.data[y * self.width..(y + 1) * self.width]);
    }
}
