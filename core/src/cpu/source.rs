//! Where the CPU variants read their pixels: packed 8-bit RGB (what the decoder gives), or an image in
//! whatever layout a caller holds — a NumPy array's: grey, grey + alpha, RGB, RGBA, BGR(A), 8 or 16 bits a
//! channel, any strides. Each is turned into grey one row at a time, inside the band that needs the row, so
//! a caller's layout costs no copy of the image and its conversion runs on every core.
//!
//! The conversion is the command line's decoder's (`image_io::decode`): alpha is dropped, grey is expanded to
//! R = G = B, 16-bit channels are rounded to 8 bits, `round(v · 255 / 65535)`; then the filter's grey.

use ndarray::{ArrayView2, ArrayView3, Axis};

use crate::sobel::Filter;

/// Rows of an image the CPU variants can turn into grey.
pub trait Rows: Sync {
    /// Width in pixels.
    fn width(&self) -> usize;
    /// Height in pixels.
    fn height(&self) -> usize;
    /// Writes the grey values of row `y` (`0..height`) into `dst` (`width` bytes) in `filter`'s arithmetic.
    fn grey_row(&self, y: usize, filter: Filter, dst: &mut [u8]);
}

/// Packed 8-bit RGB, row after row: the decoder's output and the GPU's input.
#[derive(Clone, Copy, Debug)]
pub struct PackedRgb<'a> {
    /// `3 · width · height` bytes.
    pub data: &'a [u8],
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
}

impl<'a> PackedRgb<'a> {
    /// `data` as a `width × height` packed RGB image.
    pub fn new(data: &'a [u8], width: usize, height: usize) -> PackedRgb<'a> {
        assert_eq!(data.len(), 3 * width * height, "packed RGB, width × height pixels");
        PackedRgb { data, width, height }
    }
}

impl Rows for PackedRgb<'_> {
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.height
    }
    #[inline(always)]
    fn grey_row(&self, y: usize, filter: Filter, dst: &mut [u8]) {
        let row = &self.data[3 * self.width * y..3 * self.width * (y + 1)];
        grey_of_pixels::<3>(row, [0, 1, 2], filter, dst);
    }
}

/// The samples of a [`HostImage`]: (height, width, channels), 8 or 16 bits.
#[derive(Clone, Debug)]
pub enum Samples<'a> {
    /// 8-bit channels.
    U8(ArrayView3<'a, u8>),
    /// 16-bit channels, rounded to 8 bits as the decoder rounds them.
    U16(ArrayView3<'a, u16>),
}

/// An image as a caller holds it: 1 (grey), 2 (grey + alpha), 3 (RGB or BGR) or 4 (RGBA or BGRA) channels, any
/// strides.
#[derive(Clone, Debug)]
pub struct HostImage<'a> {
    /// The samples, (height, width, channels).
    pub samples: Samples<'a>,
    /// The colour channels are in OpenCV's order, B, G, R.
    pub bgr: bool,
}

impl HostImage<'_> {
    /// The channel count, or why this layout is not an image.
    pub fn check(&self) -> Result<(), String> {
        let c = self.dim().2;
        if (1..=4).contains(&c) {
            Ok(())
        } else {
            Err(format!("{c} channels, expected 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA)"))
        }
    }

    fn dim(&self) -> (usize, usize, usize) {
        match &self.samples {
            Samples::U8(a) => a.dim(),
            Samples::U16(a) => a.dim(),
        }
    }

    /// The image as packed 8-bit RGB (for the scalar reference and the GPU's upload), converted on all cores.
    pub fn to_packed_rgb(&self) -> Vec<u8> {
        use rayon::prelude::*;
        let (h, w, _) = self.dim();
        let mut rgb = vec![0u8; 3 * w * h];
        rgb.par_chunks_mut((3 * w).max(1)).enumerate().for_each(|(y, out)| match &self.samples {
            Samples::U8(a) => rgb_row(a.index_axis(Axis(0), y), self.bgr, |v| v, out),
            Samples::U16(a) => rgb_row(a.index_axis(Axis(0), y), self.bgr, to_8bit, out),
        });
        rgb
    }
}

impl Rows for HostImage<'_> {
    fn width(&self) -> usize {
        self.dim().1
    }
    fn height(&self) -> usize {
        self.dim().0
    }
    fn grey_row(&self, y: usize, filter: Filter, dst: &mut [u8]) {
        match &self.samples {
            Samples::U8(a) => grey_row_of(a.index_axis(Axis(0), y), self.bgr, filter, dst),
            Samples::U16(a) => {
                let row = a.index_axis(Axis(0), y);
                let mut rgb = vec![0u8; 3 * row.nrows()];
                rgb_row(row, self.bgr, to_8bit, &mut rgb);
                grey_of_pixels::<3>(&rgb, [0, 1, 2], filter, dst);
            }
        }
    }
}

/// `round(v · 255 / 65535)`, exactly (the decoder's rounding of 16-bit channels).
#[inline(always)]
pub fn to_8bit(v: u16) -> u8 {
    ((v as u32 * 255 + 32767) / 65535) as u8
}

/// Grey of one 8-bit row (width, channels): packed rows take the fast path; any other strides go pixel by
/// pixel. Compiled for AVX-512 and AVX2 as well as the baseline, like the band loop that calls it: out of
/// line from that loop's clones it ran SSE2 code, and RGBA at 6000² took 1.30× packed RGB's time with a
/// quarter of the call in here (perf).
#[multiversion::multiversion(targets("x86_64+avx512bw+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn grey_row_of(row: ArrayView2<u8>, bgr: bool, filter: Filter, dst: &mut [u8]) {
    let c = row.ncols();
    let rgb_at = if bgr { [2, 1, 0] } else { [0, 1, 2] };
    match (row.as_slice(), c) {
        // Grey (with or without alpha): R = G = B = v. Every grey rule maps (v, v, v) to v itself in exact
        // arithmetic (the weights sum to one) — but not in the report's doubles, so the rule still runs.
        (Some(s), 1) => grey_of_pixels::<1>(s, [0, 0, 0], filter, dst),
        (Some(s), 2) => grey_of_pixels::<2>(s, [0, 0, 0], filter, dst),
        (Some(s), 3) => grey_of_pixels::<3>(s, rgb_at, filter, dst),
        (Some(s), 4) => grey_of_pixels::<4>(s, rgb_at, filter, dst),
        _ => {
            let mut rgb = vec![0u8; 3 * row.nrows()];
            rgb_row(row, bgr, |v| v, &mut rgb);
            grey_of_pixels::<3>(&rgb, [0, 1, 2], filter, dst);
        }
    }
}

/// One row (width, channels) of any strides as packed RGB bytes, each sample through `to8`.
fn rgb_row<T: Copy>(row: ArrayView2<T>, bgr: bool, to8: impl Fn(T) -> u8, out: &mut [u8]) {
    let c = row.ncols();
    for (px, o) in row.outer_iter().zip(out.chunks_exact_mut(3)) {
        let v = |i: usize| to8(px[i]);
        let rgb = match (c, bgr) {
            (1 | 2, _) => [v(0); 3],
            (_, false) => [v(0), v(1), v(2)],
            (_, true) => [v(2), v(1), v(0)],
        };
        o.copy_from_slice(&rgb);
    }
}

/// Grey of packed pixels of `C` bytes each, R, G and B at `at` (grey pixels: all three 0), in `filter`'s
/// arithmetic. One loop per arithmetic, each branch-free over the row so that it vectorises.
#[inline(always)]
fn grey_of_pixels<const C: usize>(row: &[u8], at: [usize; 3], filter: Filter, dst: &mut [u8]) {
    let [r, g, b] = at;
    let pixels = row.chunks_exact(C);
    // `for` loops, not `for_each`: `for_each` is a `fold` that the compiler may leave out of line, compiled
    // without the caller's CPU features.
    match (filter.compat, filter.grey) {
        (crate::sobel::Compat::Report, _) => {
            for (p, d) in pixels.zip(dst.iter_mut()) {
                *d = crate::sobel::grey_report(p[r], p[g], p[b]);
            }
        }
        (_, crate::sobel::Grey::Percent) => {
            for (p, d) in pixels.zip(dst.iter_mut()) {
                *d = crate::sobel::grey(p[r], p[g], p[b]);
            }
        }
        (_, crate::sobel::Grey::Bt601) => {
            for (p, d) in pixels.zip(dst.iter_mut()) {
                *d = crate::sobel::grey_bt601(p[r], p[g], p[b]);
            }
        }
    }
}
