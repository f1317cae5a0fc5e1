//! `cpu-rayon`: the fast CPU path, of the edges and of the filter command's kernels alike ([`filter`]). Same bytes as
//! `cpu-scalar`, but
//! - **fused**: grey, Gx, Gy and the output in one pass, with no full-size intermediate buffers;
//! - **parallel**: the output is cut into bands of rows, one rayon task per band;
//! - **stencil with a rolling window**: a band keeps the stencil's `2r + 1` grey rows (r its radius), each
//!   padded with r border pixels on either side, in a ring; each new output row converts one new row to
//!   grey (plus `2r` halo rows at the band's top). Each row is then computed **separably**, in loops the
//!   compiler vectorises: down the columns, the smoothing and derivative sums of the ring's rows (16-bit
//!   lanes: they stay below 64·255), then along the row, Gx and Gy from those sums (32-bit lanes: ksize 7's
//!   reach 163 200) — `4r + 2` multiply-adds a pixel instead of the `2·(2r + 1)²` of the 2-D stencil;
//! - **its input in any layout** ([`Rows`]): packed RGB, or a caller's array (grey, RGBA, BGR, 16 bits, any
//!   strides), turned into grey a row at a time inside the band, so a layout costs no copy;
//! - **any output** ([`Out`]): the edge bytes, Gx and Gy (16 or 32-bit integers, or floats), the direction;
//! - **runtime CPU dispatch** (`multiversion`): the band loop is compiled for AVX-512/AVX2 as well as the
//!   baseline SSE2 and the best one the CPU has is picked at run time. Measured reason: 2048×1024 on the
//!   development machine (2 threads) took 4.3 ms with SSE2 and 2.9 ms with AVX2 (median of 60 runs);
//! - **specialised per stencil**: the edges' stencil is a const generic parameter, chosen once per band, so each
//!   inner loop is compiled with its taps folded in (zero taps vanish, ×1 becomes an add); a filter's kernel runs
//!   the same loop with its taps read at run time, in the narrowest lanes its sums fit (32 or 64 bits), and a
//!   kernel that does not separate sums its matrix's rows along the ring's rows instead.

use ::rayon::prelude::*;
use image::{GrayImage, RgbImage};

pub use super::source::{HostImage, PackedRgb, Rows, Samples};
use super::taps::{Const, GreyPlane, Runtime, Taps};
use crate::conv::{self, ConvKernel, Kind, Planes, MAX_SIZE};
use crate::sobel::{Border, Compat, Filter, Ksize, Norm, Operator};

/// The largest radius a band's ring holds: a filter's (the edges' stencils reach 3).
const MAX_RADIUS: usize = MAX_SIZE / 2;

/// Rows per band at most; bands this tall keep the redundant halo rows small while giving each of many
/// threads several bands to balance.
const MAX_BAND_ROWS: usize = 32;

/// One plane of gradients, in the type the caller wants.
pub enum Plane<'a> {
    /// 16-bit integers (ksize 1, 3, 5 and Scharr: |G| ≤ 12 240).
    I16(&'a mut [i16]),
    /// 32-bit integers (every size).
    I32(&'a mut [i32]),
    /// Floats (exact: |G| < 2^24).
    F32(&'a mut [f32]),
    /// Sixteenths in 16 bits, rounded half to even ([`crate::canny::Canny::opencv_gradient`]): the gradients
    /// OpenCV's Canny takes at aperture 7, whose exact ones need 32.
    Sixteenths(&'a mut [i16]),
}

/// What a run writes, `width · height` values of each.
pub enum Out<'a> {
    /// The edge bytes: the magnitude in the filter's norm and arithmetic.
    Edges(&'a mut [u8]),
    /// Gx and Gy.
    Gradients(Plane<'a>, Plane<'a>),
    /// `atan2(Gy, Gx)` in radians ([`crate::sobel::direction`]).
    Direction(&'a mut [f32]),
    /// OpenCV Canny's quantised direction ([`crate::sobel::direction4`]).
    Direction4(&'a mut [u8]),
    /// A filter's bytes ([`ConvKernel::finish`]): the smoothed value, or a gradient kernel's magnitude.
    Filtered(&'a mut [u8], Kind),
}

impl Plane<'_> {
    fn len(&self) -> usize {
        match self {
            Plane::I16(p) => p.len(),
            Plane::I32(p) => p.len(),
            Plane::F32(p) => p.len(),
            Plane::Sixteenths(p) => p.len(),
        }
    }

    fn chunks(&mut self, n: usize) -> Vec<Plane<'_>> {
        match self {
            Plane::I16(p) => p.chunks_mut(n).map(Plane::I16).collect(),
            Plane::I32(p) => p.chunks_mut(n).map(Plane::I32).collect(),
            Plane::F32(p) => p.chunks_mut(n).map(Plane::F32).collect(),
            Plane::Sixteenths(p) => p.chunks_mut(n).map(Plane::Sixteenths).collect(),
        }
    }

    /// Row `y` of the plane from the row's gradients.
    #[inline(always)]
    fn put<G: Lane>(&mut self, y: usize, g: &[G]) {
        let w = g.len();
        match self {
            Plane::I16(p) => p[y * w..(y + 1) * w].iter_mut().zip(g).for_each(|(o, &v)| *o = v.get() as i16),
            Plane::I32(p) => p[y * w..(y + 1) * w].iter_mut().zip(g).for_each(|(o, &v)| *o = v.get() as i32),
            Plane::F32(p) => p[y * w..(y + 1) * w].iter_mut().zip(g).for_each(|(o, &v)| *o = v.get() as f32),
            Plane::Sixteenths(p) => p[y * w..(y + 1) * w]
                .iter_mut()
                .zip(g)
                .for_each(|(o, &v)| *o = crate::canny::sixteenth(v.get() as i32) as i16),
        }
    }
}

impl Out<'_> {
    fn len(&self) -> usize {
        match self {
            Out::Edges(o) | Out::Direction4(o) | Out::Filtered(o, _) => o.len(),
            Out::Gradients(x, y) => x.len().min(y.len()),
            Out::Direction(o) => o.len(),
        }
    }

    /// The output cut into bands of `n` values.
    fn bands(&mut self, n: usize) -> Vec<Out<'_>> {
        match self {
            Out::Edges(o) => o.chunks_mut(n).map(Out::Edges).collect(),
            Out::Direction4(o) => o.chunks_mut(n).map(Out::Direction4).collect(),
            Out::Filtered(o, kind) => o.chunks_mut(n).map(|o| Out::Filtered(o, *kind)).collect(),
            Out::Direction(o) => o.chunks_mut(n).map(Out::Direction).collect(),
            Out::Gradients(x, y) => {
                x.chunks(n).into_iter().zip(y.chunks(n)).map(|(x, y)| Out::Gradients(x, y)).collect()
            }
        }
    }
}

/// The edge image, fused and parallel over row bands (bytes identical to `scalar::sobel`).
pub fn sobel(rgb: &RgbImage, filter: Filter) -> GrayImage {
    let (width, height) = (rgb.width() as usize, rgb.height() as usize);
    let mut out = vec![0u8; width * height];
    sobel_into(rgb.as_raw(), width, height, filter, &mut out);
    GrayImage::from_raw(rgb.width(), rgb.height(), out).expect("width × height bytes")
}

/// [`sobel`] from packed RGB bytes into `out` (`width · height` bytes).
pub fn sobel_into(src: &[u8], width: usize, height: usize, filter: Filter, out: &mut [u8]) {
    run(&PackedRgb::new(src, width, height), filter, Out::Edges(out));
}

/// `output` of the image `src` in `filter`'s arithmetic, on every core, as the little-endian bytes of its
/// planes (gradients: Gx's, then Gy's): what [`crate::engine::Engine::run_output`] compares and writes.
pub fn output_bytes<R: Rows>(src: &R, filter: Filter, output: crate::sobel::Output) -> Vec<u8> {
    use crate::sobel::{Number, Output};
    let n = src.width() * src.height();
    fn bytes<T: Copy, const B: usize>(v: &[T], to: impl Fn(T) -> [u8; B]) -> Vec<u8> {
        v.iter().flat_map(|&x| to(x)).collect()
    }
    match output {
        Output::Edges | Output::Direction4 => {
            let mut o = vec![0u8; n];
            run(src, filter, if output == Output::Edges { Out::Edges(&mut o) } else { Out::Direction4(&mut o) });
            o
        }
        Output::Direction => {
            let mut o = vec![0f32; n];
            run(src, filter, Out::Direction(&mut o));
            bytes(&o, f32::to_le_bytes)
        }
        Output::Gradients(Number::I16) => {
            let (mut x, mut y) = (vec![0i16; n], vec![0i16; n]);
            run(src, filter, Out::Gradients(Plane::I16(&mut x), Plane::I16(&mut y)));
            [bytes(&x, i16::to_le_bytes), bytes(&y, i16::to_le_bytes)].concat()
        }
        Output::Gradients(Number::I32) => {
            let (mut x, mut y) = (vec![0i32; n], vec![0i32; n]);
            run(src, filter, Out::Gradients(Plane::I32(&mut x), Plane::I32(&mut y)));
            [bytes(&x, i32::to_le_bytes), bytes(&y, i32::to_le_bytes)].concat()
        }
        Output::Sectors(number) => {
            // The exact gradients, then each pixel's word ([`crate::canny::Canny::sector`]).
            let (mut x, mut y) = (vec![0i32; n], vec![0i32; n]);
            run(src, filter, Out::Gradients(Plane::I32(&mut x), Plane::I32(&mut y)));
            let canny = crate::canny::Canny::of_filter(filter);
            let words = x.iter().zip(&y).map(|(&x, &y)| canny.sector(x, y));
            match number {
                Number::I16 => words.flat_map(|w| (w as u16).to_le_bytes()).collect(),
                _ => words.flat_map(|w| w.to_le_bytes()).collect(),
            }
        }
        Output::Gradients(Number::F32) => {
            let (mut x, mut y) = (vec![0f32; n], vec![0f32; n]);
            run(src, filter, Out::Gradients(Plane::F32(&mut x), Plane::F32(&mut y)));
            [bytes(&x, f32::to_le_bytes), bytes(&y, f32::to_le_bytes)].concat()
        }
    }
}

/// Computes `out` for the image `src` in `filter`'s arithmetic, on every core.
pub fn run<R: Rows>(src: &R, filter: Filter, out: Out) {
    in_bands(src, out, |src, y0, out| by_stencil(src, y0, filter, out));
}

/// [`run`] on the calling thread, as one band: `src`'s rows `y0..` (as many as `out` holds), for a caller that is
/// itself one band of a parallel loop (Canny's [`crate::canny::Canny::edges_of`]), where splitting its few rows into
/// bands again recomputed each grey row up to seven times (once a band its stencil reaches) and made the Canny slower
/// the more cores it had.
pub fn run_here<R: Rows>(src: &R, y0: usize, filter: Filter, out: Out) {
    let rows = out.len() / src.width().max(1);
    assert!(out.len() == src.width() * rows && y0 + rows <= src.height(), "one output value a pixel of those rows");
    if out.len() > 0 {
        by_stencil(src, y0, filter, out);
    }
}

/// A filter's `kernel` over each plane of `img`, on every core: the filter command's `cpu-rayon`, the same band loop
/// as the edges' with the kernel's taps read at run time (bytes identical to [`crate::conv::filter_scalar`]).
pub fn filter(img: &Planes, kernel: &ConvKernel, border: Border) -> Planes {
    let (w, h) = (img.width, img.height);
    let mut data = vec![0u8; img.data.len()];
    let taps = Runtime::of(kernel);
    let filter = Filter::with_border(border);
    if w * h > 0 {
        for (plane, out) in img.data.chunks(w * h).zip(data.chunks_mut(w * h)) {
            let src = GreyPlane { data: plane, width: w, height: h };
            in_bands(&src, Out::Filtered(out, kernel.kind), |src, y0, out| by_kernel(src, y0, filter, &taps, out));
        }
    }
    Planes { data, ..*img }
}

/// `band(src, y0, out)` over bands of rows of `out`, in parallel.
fn in_bands<R: Rows>(src: &R, mut out: Out, band: impl Fn(&R, usize, Out) + Sync) {
    let (width, height) = (src.width(), src.height());
    assert_eq!(out.len(), width * height, "one output value a pixel");
    if width * height == 0 {
        return;
    }
    let tasks = ::rayon::current_num_threads() * 4;
    let band_rows = height.div_ceil(tasks).clamp(1, MAX_BAND_ROWS);
    out.bands(width * band_rows)
        .into_par_iter()
        .enumerate()
        .for_each(|(b, out_band)| band(src, b * band_rows, out_band));
}

/// One band (output rows from `y0`, as many as `out` holds), with the filter's stencil as a constant.
#[multiversion::multiversion(targets("x86_64+avx512bw+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn by_stencil<R: Rows>(src: &R, y0: usize, filter: Filter, out: Out) {
    match (filter.operator, filter.ksize) {
        (Operator::Scharr, _) => band::<R, 0, 3>(src, y0, filter, out),
        (Operator::Sobel, Ksize::K1) => band::<R, 1, 1>(src, y0, filter, out),
        (Operator::Sobel, Ksize::K3) => band::<R, 1, 3>(src, y0, filter, out),
        (Operator::Sobel, Ksize::K5) => band::<R, 1, 5>(src, y0, filter, out),
        (Operator::Sobel, Ksize::K7) => band::<R, 1, 7>(src, y0, filter, out),
    }
}

/// One band of a filter's kernel read at run time, in the narrowest lanes its sums fit.
#[multiversion::multiversion(targets("x86_64+avx512bw+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn by_kernel(src: &GreyPlane, y0: usize, filter: Filter, taps: &Runtime, out: Out) {
    match (taps.column_fits_i32, taps.fits_i32) {
        (true, true) => band_in::<_, _, i32, i32>(src, y0, filter, taps, out),
        (true, false) => band_in::<_, _, i32, i64>(src, y0, filter, taps, out),
        _ => band_in::<_, _, i64, i64>(src, y0, filter, taps, out),
    }
}

/// [`by_stencil`] for one stencil; inlined into each of its CPU-feature versions. Column sums are 16-bit (every
/// stencil's fit), Gx and Gy 16-bit where the stencil's bound allows (every size but 7: twice the lanes of 32 bits).
#[inline(always)]
fn band<R: Rows, const OP: u8, const K: usize>(src: &R, y0: usize, filter: Filter, out: Out) {
    if Const::<OP, K>::STENCIL.fits_i16() {
        band_in::<R, _, i16, i16>(src, y0, filter, &Const::<OP, K>, out)
    } else {
        band_in::<R, _, i16, i32>(src, y0, filter, &Const::<OP, K>, out)
    }
}

/// A lane of sums: i16, i32 or i64, the narrowest the sums fit (more lanes a vector).
trait Lane: Copy + Default + Into<i64> + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {
    fn of(v: i64) -> Self;
    fn get(self) -> i64;
}
macro_rules! lane {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            #[inline(always)]
            fn of(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn get(self) -> i64 {
                self as i64
            }
        }
    )*};
}
lane!(i16, i32, i64);

/// The band loop: each new output row converts one new row to grey into a ring of the stencil's `2r + 1` padded
/// rows; a stencil of rank one then sums down the columns (`C` lanes) and along the row (`G` lanes), a matrix along
/// each of its rows. `S` is the sum with the kernel, `T` with its transpose (Gx and Gy; a smoothing filter has none).
#[inline(always)]
fn band_in<R: Rows, T: Taps, C: Lane, G: Lane>(src: &R, y0: usize, filter: Filter, st: &T, mut out: Out) {
    let r = st.radius();
    let taps = 2 * r + 1;
    let (width, height) = (src.width(), src.height());
    let padded = width + 2 * r;
    let rows_out = out.len() / width;
    let transpose = !matches!(out, Out::Filtered(_, Kind::Smooth { .. }));
    // ring[(y + r) % taps] holds grey row y (through the border rule), padded with r pixels each side.
    let mut ring = vec![vec![0u8; padded]; taps];
    for y in y0 as isize - r as isize..(y0 + r) as isize {
        padded_grey_row(src, y, width, height, r, filter, &mut ring[(y + r as isize) as usize % taps]);
    }
    let (mut s, mut d) = (vec![C::default(); padded], vec![C::default(); padded]);
    let (mut gx, mut gy) = (vec![G::default(); width], vec![G::default(); width]);
    for k in 0..rows_out {
        let y = y0 + k;
        padded_grey_row(src, (y + r) as isize, width, height, r, filter, &mut ring[(y + 2 * r) % taps]);
        let rows: [&[u8]; 2 * MAX_RADIUS + 1] = std::array::from_fn(|i| &ring[(y + i) % taps][..padded]);
        match st.factors() {
            // Down the columns: s = Σ column·row, d = Σ row-factor·row over the ring's rows y − r … y + r; then along
            // the row: S = Σ row·s, T = Σ column·d over columns x … x + 2r of the padded row, one pass a non-zero
            // tap. (Fusing the row sums into the output loop, the taps unrolled inside it, was 2× slower at 6000²
            // and 2048×1024 once the taps became the stencil's.)
            Some((column, row)) => {
                column_sums(&rows, taps, column, &mut s);
                row_sums(&s, taps, row, &mut gx, true);
                if transpose {
                    column_sums(&rows, taps, row, &mut d);
                    row_sums(&d, taps, column, &mut gy, true);
                }
            }
            // A matrix: S = Σᵢ (row i of the matrix along ring row i).
            None => {
                for (i, row) in rows.iter().enumerate().take(taps) {
                    row_sums(row, taps, st.matrix_row(i, false), &mut gx, i == 0);
                    if transpose {
                        row_sums(row, taps, st.matrix_row(i, true), &mut gy, i == 0);
                    }
                }
            }
        }
        let line = k * width..(k + 1) * width;
        match &mut out {
            Out::Gradients(px, py) => {
                px.put(k, &gx);
                py.put(k, &gy);
            }
            Out::Edges(o) => match (filter.compat, filter.norm) {
                (Compat::Report, _) => map2(&gx, &gy, &mut o[line], crate::sobel::magnitude_report),
                (_, Norm::L2) => map2(&gx, &gy, &mut o[line], crate::sobel::magnitude),
                (_, Norm::L1) => map2(&gx, &gy, &mut o[line], crate::sobel::magnitude_l1),
            },
            Out::Direction(o) => map2(&gx, &gy, &mut o[line], crate::sobel::direction),
            Out::Direction4(o) => map2(&gx, &gy, &mut o[line], crate::sobel::direction4),
            Out::Filtered(o, Kind::Smooth { divisor }) => {
                let divisor = *divisor;
                o[line].iter_mut().zip(&gx).for_each(|(o, &s)| *o = conv::smooth_byte(s.get(), divisor));
            }
            Out::Filtered(o, Kind::Gradient) => {
                let o = &mut o[line];
                o.iter_mut()
                    .zip(gx.iter().zip(&gy))
                    .for_each(|(o, (&x, &y))| *o = conv::gradient_byte(x.get(), y.get()));
            }
        }
    }
}

/// `s[c] = Σ t[i]·rows[i][c]` over the first `taps` rows, one pass over the row per non-zero tap (each a plain loop
/// over two slices, which vectorises: a single pass over the columns with the rows unrolled inside took 2.2× longer,
/// measured at 2048×1024); with constant taps the zero ones vanish.
/// The first non-zero tap's pass writes the sums instead of adding to cleared ones: clearing them first took a memset
/// a sum a row, 3 % of Canny's time on one thread (perf), and a pass more over each.
#[inline(always)]
fn column_sums<C: Lane>(rows: &[&[u8]; 2 * MAX_RADIUS + 1], taps: usize, t: &[i32], s: &mut [C]) {
    let mut fresh = true;
    for (i, row) in rows.iter().enumerate().take(taps) {
        if t[i] != 0 {
            let ti = C::of(t[i] as i64);
            let row = &row[..s.len()];
            if fresh {
                s.iter_mut().zip(row).for_each(|(s, &v)| *s = ti * C::of(v as i64));
            } else {
                s.iter_mut().zip(row).for_each(|(s, &v)| *s = *s + ti * C::of(v as i64));
            }
            fresh = false;
        }
    }
    if fresh {
        s.fill(C::default());
    }
}

/// `o[x] = f(gx[x], gy[x])`.
#[inline(always)]
fn map2<G: Lane, T>(gx: &[G], gy: &[G], o: &mut [T], f: impl Fn(i32, i32) -> T) {
    o.iter_mut().zip(gx.iter().zip(gy)).for_each(|(o, (&x, &y))| *o = f(x.get() as i32, y.get() as i32));
}

/// `g[x] (+)= Σ t[j]·v[x + j]` over `taps` columns, one pass over the row per non-zero tap; with `fresh` the first of
/// them writes `g` instead of adding to it (as [`column_sums`]).
#[inline(always)]
fn row_sums<V: Copy + Into<i64>, G: Lane>(v: &[V], taps: usize, t: &[i32], g: &mut [G], mut fresh: bool) {
    for (j, &tj) in t.iter().enumerate().take(taps) {
        if tj != 0 {
            let tj = G::of(tj as i64);
            let v = &v[j..j + g.len()];
            if fresh {
                g.iter_mut().zip(v).for_each(|(g, &v)| *g = tj * G::of(v.into()));
            } else {
                g.iter_mut().zip(v).for_each(|(g, &v)| *g = *g + tj * G::of(v.into()));
            }
            fresh = false;
        }
    }
    if fresh {
        g.fill(G::default());
    }
}

/// Writes grey row `y` (resolved through the border rule, at any distance) into `dst[r..r + width]` and the
/// border pixels it implies into the `r` pixels each side; a row the rule makes 0 is all 0.
#[inline(always)]
fn padded_grey_row<R: Rows>(src: &R, y: isize, width: usize, height: usize, r: usize, filter: Filter, dst: &mut [u8]) {
    let border = filter.border;
    let Some(sy) = border.resolve(y, height) else {
        dst.fill(0);
        return;
    };
    src.grey_row(sy, filter, &mut dst[r..r + width]);
    for i in 1..=r {
        dst[r - i] = border.resolve(-(i as isize), width).map_or(0, |sx| dst[r + sx]);
        dst[r + width - 1 + i] = border.resolve((width - 1 + i) as isize, width).map_or(0, |sx| dst[r + sx]);
    }
}
