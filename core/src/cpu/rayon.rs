//! `cpu-rayon`: the fast CPU baseline. Same bytes as `cpu-scalar`, but
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
//! - **specialised per stencil**: the stencil is a const generic parameter, chosen once per band, so each
//!   inner loop is compiled with its taps folded in (zero taps vanish, ×1 becomes an add).

use ::rayon::prelude::*;
use image::{GrayImage, RgbImage};

pub use super::source::{HostImage, PackedRgb, Rows, Samples};
use crate::sobel::{Compat, Filter, Ksize, Norm, Operator, Stencil};

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
}

impl Plane<'_> {
    fn len(&self) -> usize {
        match self {
            Plane::I16(p) => p.len(),
            Plane::I32(p) => p.len(),
            Plane::F32(p) => p.len(),
        }
    }

    fn chunks(&mut self, n: usize) -> Vec<Plane<'_>> {
        match self {
            Plane::I16(p) => p.chunks_mut(n).map(Plane::I16).collect(),
            Plane::I32(p) => p.chunks_mut(n).map(Plane::I32).collect(),
            Plane::F32(p) => p.chunks_mut(n).map(Plane::F32).collect(),
        }
    }

    /// Row `y` of the plane from the row's gradients.
    #[inline(always)]
    fn put<G: Lane>(&mut self, y: usize, g: &[G]) {
        let w = g.len();
        match self {
            Plane::I16(p) => p[y * w..(y + 1) * w].iter_mut().zip(g).for_each(|(o, &v)| *o = v.into() as i16),
            Plane::I32(p) => p[y * w..(y + 1) * w].iter_mut().zip(g).for_each(|(o, &v)| *o = v.into()),
            Plane::F32(p) => p[y * w..(y + 1) * w].iter_mut().zip(g).for_each(|(o, &v)| *o = v.into() as f32),
        }
    }
}

impl Out<'_> {
    fn len(&self) -> usize {
        match self {
            Out::Edges(o) | Out::Direction4(o) => o.len(),
            Out::Gradients(x, y) => x.len().min(y.len()),
            Out::Direction(o) => o.len(),
        }
    }

    /// The output cut into bands of `n` values.
    fn bands(&mut self, n: usize) -> Vec<Out<'_>> {
        match self {
            Out::Edges(o) => o.chunks_mut(n).map(Out::Edges).collect(),
            Out::Direction4(o) => o.chunks_mut(n).map(Out::Direction4).collect(),
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
        Output::Gradients(Number::F32) => {
            let (mut x, mut y) = (vec![0f32; n], vec![0f32; n]);
            run(src, filter, Out::Gradients(Plane::F32(&mut x), Plane::F32(&mut y)));
            [bytes(&x, f32::to_le_bytes), bytes(&y, f32::to_le_bytes)].concat()
        }
    }
}

/// Computes `out` for the image `src` in `filter`'s arithmetic, on every core.
pub fn run<R: Rows>(src: &R, filter: Filter, mut out: Out) {
    let (width, height) = (src.width(), src.height());
    assert_eq!(out.len(), width * height, "one output value a pixel");
    if width * height == 0 {
        return;
    }
    let tasks = ::rayon::current_num_threads() * 4;
    let band_rows = height.div_ceil(tasks).clamp(1, MAX_BAND_ROWS);
    out.bands(width * band_rows).into_par_iter().enumerate().for_each(|(band, out_band)| {
        by_stencil(src, band * band_rows, filter, out_band);
    });
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

/// The stencil of operator `OP` (0 Scharr, 1 Sobel) and size `K`, as a constant.
struct Taps<const OP: u8, const K: usize>;

impl<const OP: u8, const K: usize> Taps<OP, K> {
    const STENCIL: Stencil = Stencil::of(
        if OP == 0 { Operator::Scharr } else { Operator::Sobel },
        match K {
            1 => Ksize::K1,
            3 => Ksize::K3,
            5 => Ksize::K5,
            _ => Ksize::K7,
        },
    );
}

/// [`by_stencil`] for one stencil; inlined into each of its CPU-feature versions. Gx and Gy are 16-bit where
/// the stencil's bound allows (every size but 7: twice the lanes of 32 bits; measured below).
#[inline(always)]
fn band<R: Rows, const OP: u8, const K: usize>(src: &R, y0: usize, filter: Filter, out: Out) {
    if Taps::<OP, K>::STENCIL.fits_i16() {
        band_in::<R, OP, K, i16>(src, y0, filter, out)
    } else {
        band_in::<R, OP, K, i32>(src, y0, filter, out)
    }
}

/// A gradient lane type: i16 where the stencil's gradients fit, else i32.
trait Lane: Copy + Default + Into<i32> + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {
    fn of(v: i32) -> Self;
}
impl Lane for i16 {
    #[inline(always)]
    fn of(v: i32) -> Self {
        v as i16
    }
}
impl Lane for i32 {
    #[inline(always)]
    fn of(v: i32) -> Self {
        v
    }
}

#[inline(always)]
fn band_in<R: Rows, const OP: u8, const K: usize, G: Lane>(src: &R, y0: usize, filter: Filter, mut out: Out) {
    let st = Taps::<OP, K>::STENCIL;
    let (r, taps) = (st.radius, st.width());
    let (width, height) = (src.width(), src.height());
    let padded = width + 2 * r;
    let rows_out = out.len() / width;
    // ring[(y + r) % taps] holds grey row y (through the border rule), padded with r pixels each side.
    let mut ring = vec![vec![0u8; padded]; taps];
    for y in y0 as isize - r as isize..(y0 + r) as isize {
        padded_grey_row(src, y, width, height, r, filter, &mut ring[(y + r as isize) as usize % taps]);
    }
    let (mut s, mut d) = (vec![0i16; padded], vec![0i16; padded]);
    let (mut gx, mut gy) = (vec![G::default(); width], vec![G::default(); width]);
    for k in 0..rows_out {
        let y = y0 + k;
        padded_grey_row(src, (y + r) as isize, width, height, r, filter, &mut ring[(y + 2 * r) % taps]);
        // Down the columns: s = Σ smooth·row, d = Σ deriv·row over the ring's rows y − r … y + r.
        let rows: [&[u8]; 2 * Stencil::MAX_RADIUS + 1] = std::array::from_fn(|i| &ring[(y + i) % taps][..padded]);
        column_sums(&rows, taps, st.smooth(), st.deriv(), &mut s, &mut d);
        // Along the row: Gx = Σ deriv·s, Gy = Σ smooth·d over columns x … x + 2r of the padded row, one pass a
        // non-zero tap, then the output from the two rows. (Fusing the row sums into the output loop, the taps
        // unrolled inside it, was 2× slower at 6000² and 2048×1024 once the taps became the stencil's.)
        row_sums(&s, taps, st.deriv(), &mut gx);
        row_sums(&d, taps, st.smooth(), &mut gy);
        match &mut out {
            Out::Gradients(px, py) => {
                px.put(k, &gx);
                py.put(k, &gy);
            }
            Out::Edges(o) => {
                let o = &mut o[k * width..(k + 1) * width];
                match (filter.compat, filter.norm) {
                    (Compat::Report, _) => map2(&gx, &gy, o, crate::sobel::magnitude_report),
                    (_, Norm::L2) => map2(&gx, &gy, o, crate::sobel::magnitude),
                    (_, Norm::L1) => map2(&gx, &gy, o, crate::sobel::magnitude_l1),
                }
            }
            Out::Direction(o) => map2(&gx, &gy, &mut o[k * width..(k + 1) * width], crate::sobel::direction),
            Out::Direction4(o) => map2(&gx, &gy, &mut o[k * width..(k + 1) * width], crate::sobel::direction4),
        }
    }
}

/// `s[c] = Σ smooth[i]·rows[i][c]`, `d[c] = Σ deriv[i]·rows[i][c]` over the first `taps` rows, one pass over
/// the row per tap (each a plain loop over two slices, which vectorises: a single pass over the columns with
/// the rows unrolled inside took 2.2× longer, measured at 2048×1024); the taps are constants, so the zero
/// ones vanish.
#[inline(always)]
fn column_sums(
    rows: &[&[u8]; 2 * Stencil::MAX_RADIUS + 1],
    taps: usize,
    smooth: &[i32],
    deriv: &[i32],
    s: &mut [i16],
    d: &mut [i16],
) {
    s.fill(0);
    d.fill(0);
    for (i, row) in rows.iter().enumerate().take(taps) {
        let (ts, td) = (smooth[i] as i16, deriv[i] as i16);
        if ts != 0 {
            s.iter_mut().zip(*row).for_each(|(s, &v)| *s += ts * v as i16);
        }
        if td != 0 {
            d.iter_mut().zip(*row).for_each(|(d, &v)| *d += td * v as i16);
        }
    }
}

/// `o[x] = f(gx[x], gy[x])`.
#[inline(always)]
fn map2<G: Lane, T>(gx: &[G], gy: &[G], o: &mut [T], f: impl Fn(i32, i32) -> T) {
    o.iter_mut().zip(gx.iter().zip(gy)).for_each(|(o, (&x, &y))| *o = f(x.into(), y.into()));
}

/// `g[x] = Σ t[j]·v[x + j]` over `taps` columns, one pass over the row per non-zero tap.
#[inline(always)]
fn row_sums<G: Lane>(v: &[i16], taps: usize, t: &[i32], g: &mut [G]) {
    g.fill(G::default());
    for (j, &tj) in t.iter().enumerate().take(taps) {
        if tj != 0 {
            let tj = G::of(tj);
            g.iter_mut().zip(&v[j..]).for_each(|(g, &v)| *g = *g + tj * G::of(v as i32));
        }
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
