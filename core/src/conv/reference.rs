//! Stencils on the CPU: [`correlate`], the one definition of a stencil's sum that every path is held to (the
//! edge command's `cpu-scalar` computes its gradients with it too); the filter's scalar reference (that
//! definition read literally: every tap of every pixel, every neighbour through the border rule, 64-bit sums), which
//! tests hold the fast paths to — on the CPU, [`crate::cpu::rayon::filter`], the edges' band loop with the kernel's
//! taps.

use super::{ConvKernel, Planes, MAX_SIZE};
use crate::sobel::Border;

/// One plane under one kernel and border.
#[derive(Clone, Copy)]
struct View<'a> {
    plane: &'a [u8],
    w: usize,
    h: usize,
    k: &'a ConvKernel,
    border: Border,
}

/// The kernel's input rows for output row `y` of a `w × h` plane: row `y + i − r` for each of the kernel's rows
/// `i`, through the border rule at any distance (`None`: a row of the constant 0).
fn rows_at<'p>(
    plane: &'p [u8],
    (w, h): (usize, usize),
    k: &ConvKernel,
    border: Border,
    y: usize,
) -> [Option<&'p [u8]>; MAX_SIZE] {
    let mut rows = [None; MAX_SIZE];
    for (i, row) in rows.iter_mut().enumerate().take(k.side()) {
        *row = border.resolve(y as isize + i as isize - k.radius as isize, h).map(|sy| &plane[sy * w..][..w]);
    }
    rows
}

/// **The definition** every path of the project is held to, for any stencil: the correlation
/// `Σᵢ Σⱼ K[i][j] · p(x + j − r, y + i − r)` at column `x` of an output row whose input rows are `rows`
/// ([`rows_at`]), over every tap of `k` (or of its transpose), zero taps included, each column through the border
/// rule at any distance, in 64 bits. The filter's smoothing kernels and gradients, and the edge command's Sobel and
/// Scharr (`cpu-scalar`), are all this sum; what differs is only how the sums become a byte
/// ([`ConvKernel::finish`], [`crate::sobel::Filter::magnitude`]).
#[inline]
fn sum_in_rows(rows: &[Option<&[u8]>], w: usize, k: &ConvKernel, transposed: bool, border: Border, x: usize) -> i64 {
    let (d, r) = (k.side(), k.radius as isize);
    // Tap (i, j) of the kernel is taps[i·d + j], of its transpose taps[j·d + i].
    let (down, along) = if transposed { (1, d) } else { (d, 1) };
    let mut s = 0i64;
    for (i, row) in rows.iter().enumerate().take(d) {
        let Some(row) = row else { continue };
        for j in 0..d {
            if let Some(sx) = border.resolve(x as isize + j as isize - r, w) {
                s += k.taps[i * down + j * along] as i64 * row[sx] as i64;
            }
        }
    }
    s
}

/// The definition's sum at (x, y) of one `w × h` plane.
pub fn correlate(
    plane: &[u8],
    dims: (usize, usize),
    k: &ConvKernel,
    transposed: bool,
    border: Border,
    (x, y): (usize, usize),
) -> i64 {
    sum_in_rows(&rows_at(plane, dims, k, border, y), dims.0, k, transposed, border, x)
}

/// The definition's sum at every pixel of one plane, row by row, each handed to `emit` (no image-sized
/// intermediate); each output row's input rows resolved once.
pub fn correlate_plane(
    plane: &[u8],
    (w, h): (usize, usize),
    k: &ConvKernel,
    transposed: bool,
    border: Border,
    mut emit: impl FnMut(i64),
) {
    for y in 0..h {
        let rows = rows_at(plane, (w, h), k, border, y);
        for x in 0..w {
            emit(sum_in_rows(&rows, w, k, transposed, border, x));
        }
    }
}

/// One output byte by the definition.
fn pixel(v: View, x: usize, y: usize) -> u8 {
    let at = |t| correlate(v.plane, (v.w, v.h), v.k, t, v.border, (x, y));
    let t = match v.k.kind {
        super::Kind::Gradient => at(true),
        super::Kind::Smooth { .. } => 0,
    };
    v.k.finish(at(false), t)
}

/// The reference: one thread, every pixel by the definition (no image-sized intermediate: the memory estimates of
/// `filter --check` and `--variant cpu-scalar` count none).
pub fn filter_scalar(img: &Planes, k: &ConvKernel, border: Border) -> Planes {
    let (w, h) = (img.width, img.height);
    let mut data = Vec::with_capacity(img.data.len());
    for plane in img.data.chunks(w * h) {
        let v = View { plane, w, h, k, border };
        data.extend((0..h).flat_map(|y| (0..w).map(move |x| pixel(v, x, y))));
    }
    Planes { data, ..*img }
}

/// The filter by a CPU strategy: the reference, or rayon.
pub fn filter_plane(img: &Planes, k: &ConvKernel, border: Border, parallel: bool) -> Planes {
    if parallel {
        crate::cpu::rayon::filter(img, k, border)
    } else {
        filter_scalar(img, k, border)
    }
}
