//! Canny edges as OpenCV defines them (`cv::Canny`), the stage after the gradients: non-maximum suppression along
//! the gradient's direction, then hysteresis — the definition every path is checked against.
//!
//! From the exact gradients of the image's Sobel (any border; OpenCV's is replicate):
//! 1. **OpenCV's gradients.** Canny takes `CV_16S` gradients. Apertures 3 and 5 fit (|G| ≤ 12 240); for aperture 7
//!    OpenCV computes the Sobel scaled by 1/16 (rounded half to even, as `cvRound` rounds) and divides both
//!    thresholds by 16 — measured against `cv2.Canny`: rounding half up or away from zero gives other bytes.
//! 2. **Thresholds.** Swapped when `low > high`; with the L2 norm clamped to 32 767 and squared when positive (the
//!    magnitude is then `Gx² + Gy²`, no square root); floored to integers. L1: `|Gx| + |Gy|`.
//! 3. **Non-maximum suppression.** A pixel is a candidate when its magnitude `m > low` and it is a maximum across
//!    its edge, in the sector [`crate::sobel::direction4`] gives (OpenCV's fixed-point test, tan 22.5° as
//!    13 573 / 2^15): horizontal gradient, `m > left && m ≥ right`; vertical, `m > above && m ≥ below`; a
//!    diagonal, strictly greater than both neighbours along it. Magnitudes outside the image are 0.
//! 4. **Hysteresis.** A candidate is an edge (255) when an 8-connected path of candidates joins it to a strong one
//!    (`m > high`); everything else is 0. Reachability does not depend on the order pixels are visited in, which is
//!    what lets every path (one thread, all cores, the GPU) give these bytes.

use crate::sobel::{direction4, Ksize, Norm};

/// What Canny adds to a Sobel: its thresholds and norm (the aperture is the Sobel's `ksize`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Canny {
    /// The lower threshold: candidates above it may join an edge.
    pub low: f64,
    /// The upper threshold: candidates above it start one.
    pub high: f64,
    /// L1 (`|Gx| + |Gy|`, OpenCV's default) or L2.
    pub norm: Norm,
    /// The aperture: 3, 5 or 7.
    pub ksize: Ksize,
}

impl Canny {
    /// The thresholds and aperture checked: finite numbers, an aperture OpenCV takes (3, 5, 7). The message names
    /// the problem in one line.
    pub fn new(low: f64, high: f64, norm: Norm, ksize: Ksize) -> Result<Canny, String> {
        for (name, v) in [("low", low), ("high", high)] {
            if !v.is_finite() {
                return Err(format!("canny: the {name} threshold must be a finite number, not {v}"));
            }
        }
        if !matches!(ksize, Ksize::K3 | Ksize::K5 | Ksize::K7) {
            return Err("canny: the aperture (ksize) must be 3, 5 or 7, as OpenCV's Canny takes".into());
        }
        Ok(Canny { low, high, norm, ksize })
    }

    /// The thresholds as the magnitude is compared with them (step 2 of the module's definition): `(low, high)`.
    pub fn thresholds(&self) -> (i64, i64) {
        let (mut low, mut high) = if self.low > self.high { (self.high, self.low) } else { (self.low, self.high) };
        if self.ksize == Ksize::K7 {
            (low, high) = (low / 16.0, high / 16.0);
        }
        if self.norm == Norm::L2 {
            let square = |t: f64| {
                let t = t.min(32_767.0);
                if t > 0.0 {
                    t * t
                } else {
                    t
                }
            };
            (low, high) = (square(low), square(high));
        }
        (low.floor() as i64, high.floor() as i64)
    }

    /// The gradient OpenCV's Canny sees for an exact gradient `g` (step 1).
    #[inline]
    pub fn opencv_gradient(&self, g: i32) -> i32 {
        if self.ksize != Ksize::K7 {
            return g.clamp(i16::MIN as i32, i16::MAX as i32);
        }
        let (q, r) = (g.div_euclid(16), g.rem_euclid(16));
        if r > 8 || (r == 8 && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    }

    /// The magnitude compared with the thresholds, of OpenCV's gradients.
    pub fn magnitude(&self, gx: i32, gy: i32) -> i64 {
        let (x, y) = (gx as i64, gy as i64);
        match self.norm {
            Norm::L1 => x.abs() + y.abs(),
            Norm::L2 => x * x + y * y,
        }
    }

    /// The edges (0 or 255 a pixel) of a `width × height` image from its exact gradients: the reference, one
    /// thread, the module's four steps as written.
    pub fn edges(&self, gx: &[i32], gy: &[i32], width: usize, height: usize) -> Vec<u8> {
        assert!(gx.len() == width * height && gy.len() == gx.len(), "a gradient a pixel");
        let (low, high) = self.thresholds();
        let (gx, gy): (Vec<i32>, Vec<i32>) =
            gx.iter().zip(gy).map(|(&x, &y)| (self.opencv_gradient(x), self.opencv_gradient(y))).unzip();
        let m: Vec<i64> = gx.iter().zip(&gy).map(|(&x, &y)| self.magnitude(x, y)).collect();
        let at = |x: isize, y: isize| {
            let inside = (0..width as isize).contains(&x) && (0..height as isize).contains(&y);
            if inside {
                m[y as usize * width + x as usize]
            } else {
                0
            }
        };
        // 3. Candidates: above `low` and a maximum across the edge.
        let candidate: Vec<bool> = (0..width * height)
            .map(|i| {
                let (x, y, c) = ((i % width) as isize, (i / width) as isize, m[i]);
                c > low
                    && match direction4(gx[i], gy[i]) {
                        0 => c > at(x - 1, y) && c >= at(x + 1, y),
                        2 => c > at(x, y - 1) && c >= at(x, y + 1),
                        1 => c > at(x - 1, y - 1) && c > at(x + 1, y + 1),
                        _ => c > at(x + 1, y - 1) && c > at(x - 1, y + 1),
                    }
            })
            .collect();
        // 4. Hysteresis: everything reachable from a strong candidate through candidates.
        let mut out = vec![0u8; width * height];
        let mut stack: Vec<usize> = (0..width * height).filter(|&i| candidate[i] && m[i] > high).collect();
        stack.iter().for_each(|&i| out[i] = 255);
        while let Some(i) = stack.pop() {
            let (x, y) = ((i % width) as isize, (i / width) as isize);
            for (dx, dy) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                let (nx, ny) = (x + dx, y + dy);
                if (0..width as isize).contains(&nx) && (0..height as isize).contains(&ny) {
                    let n = ny as usize * width + nx as usize;
                    if candidate[n] && out[n] == 0 {
                        out[n] = 255;
                        stack.push(n);
                    }
                }
            }
        }
        out
    }
}

impl Canny {
    /// [`Canny::edges`] on every core, the same bytes (tests below, `tests/canny.rs`, and cv2's in
    /// `python/tests/test_opencv.py`): what the command line writes from each variant's gradients. Each band of
    /// rows, on its own core, computes its magnitudes (and the rows either side), suppresses, and follows the
    /// hysteresis from its strong pixels as far as its own rows go, noting the edge pixels on its first and last rows;
    /// then one thread continues from those across the bands. Reachability is the same whoever reaches a pixel first.
    pub fn edges_rayon(&self, gx: &[i32], gy: &[i32], width: usize, height: usize) -> Vec<u8> {
        use rayon::prelude::*;
        assert!(gx.len() == width * height && gy.len() == gx.len(), "a gradient a pixel");
        if width * height == 0 {
            return Vec::new();
        }
        let (low, high) = self.thresholds();
        let band = height.div_ceil(4 * rayon::current_num_threads()).max(1);
        // One byte a pixel through every step: 0 no edge, WEAK a candidate not (yet) joined to a strong one, EDGE.
        let mut out = vec![0u8; width * height];
        let borders: Vec<usize> = out
            .par_chunks_mut(band * width)
            .enumerate()
            .flat_map_iter(|(b, out)| {
                let row = |y: usize| (&gx[y * width..][..width], &gy[y * width..][..width]);
                self.band(row, (width, height), (b * band, out), (low, high))
            })
            .collect();
        follow_across(&mut out, borders, width, height);
        out.par_iter_mut().for_each(|v| *v = if *v == EDGE { 255 } else { 0 });
        out
    }

    /// The magnitudes of one row of exact gradients, as [`Canny::magnitude`] of [`Canny::opencv_gradient`]s, in loops
    /// the compiler vectorises (one a norm and aperture rule: picked per pixel, they made the suppression 2–3× slower
    /// than the gradients).
    fn magnitudes(&self, gx: &[i32], gy: &[i32], line: &mut [i32]) {
        // OpenCV's 1/16 for aperture 7, rounded half to even, without a branch: ⌊g/16⌋ plus the rounding's carry.
        #[inline(always)]
        fn k7(g: i32) -> i32 {
            let (q, r) = (g >> 4, g & 15);
            q + i32::from(r > 8 || (r == 8 && q & 1 == 1))
        }
        #[inline(always)]
        fn k35(g: i32) -> i32 {
            g.clamp(i16::MIN as i32, i16::MAX as i32)
        }
        // OpenCV's gradients stay within ±12 240 (apertures 3 and 5; aperture 7's ÷ 16 of ±163 200 is ±10 200), so both
        // norms fit 32 bits.
        #[inline(always)]
        fn each(line: &mut [i32], gx: &[i32], gy: &[i32], f: impl Fn(i32, i32) -> i32) {
            line.iter_mut().zip(gx.iter().zip(gy)).for_each(|(v, (&x, &y))| *v = f(x, y));
        }
        match (self.ksize == Ksize::K7, self.norm) {
            (false, Norm::L1) => each(line, gx, gy, |x, y| k35(x).abs() + k35(y).abs()),
            (false, Norm::L2) => each(line, gx, gy, |x, y| k35(x) * k35(x) + k35(y) * k35(y)),
            (true, Norm::L1) => each(line, gx, gy, |x, y| k7(x).abs() + k7(y).abs()),
            (true, Norm::L2) => each(line, gx, gy, |x, y| k7(x) * k7(x) + k7(y) * k7(y)),
        }
    }

    /// One band of [`Canny::edges_rayon`]: rows `top..top + rows` (`out` holds them), the exact gradients of image row
    /// `y` given by `gradients(y)`. Returns the edge pixels on its first and last rows (image indices), where a path
    /// may go on into the next band.
    fn band<'g>(
        &self,
        gradients: impl Fn(usize) -> (&'g [i32], &'g [i32]),
        (width, height): (usize, usize),
        (top, out): (usize, &mut [u8]),
        (low, high): (i64, i64),
    ) -> Vec<usize> {
        let rows = out.len() / width;
        // Magnitudes of three rows at a time (row y in slot (y + 1) mod 3; 0 outside the image), each computed once a
        // band: every magnitude fits 32 bits, |Gx| + |Gy| ≤ 65 535 and Gx² + Gy² ≤ 2 · 32 767². A band's full
        // magnitude plane instead (8 MB at 2048×1024) made its page faults a third of the time.
        let mut ring = [vec![0i32; width], vec![0i32; width], vec![0i32; width]];
        let fill = |line: &mut [i32], y: isize| {
            if !(0..height as isize).contains(&y) {
                line.fill(0);
                return;
            }
            let (gx, gy) = gradients(y as usize);
            self.magnitudes(gx, gy, line);
        };
        let slot = |y: isize| (y + 1).rem_euclid(3) as usize;
        fill(&mut ring[slot(top as isize - 1)], top as isize - 1);
        fill(&mut ring[slot(top as isize)], top as isize);
        let mut stack = Vec::new();
        for r in 0..rows {
            let y = (top + r) as isize;
            fill(&mut ring[slot(y + 1)], y + 1);
            let (up, here, down) = (&ring[slot(y - 1)], &ring[slot(y)], &ring[slot(y + 1)]);
            let at = |line: &[i32], x: isize| if (0..width as isize).contains(&x) { line[x as usize] } else { 0 };
            let (gx, gy) = gradients(top + r);
            for x in 0..width {
                let c = here[x];
                if c as i64 <= low {
                    continue;
                }
                let xi = x as isize;
                let peak = match direction4(self.opencv_gradient(gx[x]), self.opencv_gradient(gy[x])) {
                    0 => c > at(here, xi - 1) && c >= at(here, xi + 1),
                    2 => c > up[x] && c >= down[x],
                    1 => c > at(up, xi - 1) && c > at(down, xi + 1),
                    _ => c > at(up, xi + 1) && c > at(down, xi - 1),
                };
                if peak && c as i64 > high {
                    out[r * width + x] = EDGE;
                    stack.push(r * width + x);
                } else if peak {
                    out[r * width + x] = WEAK;
                }
            }
        }
        // The hysteresis inside the band, in band indices.
        let mut borders = Vec::new();
        while let Some(i) = stack.pop() {
            let (x, r) = (i % width, i / width);
            if r == 0 || r + 1 == rows {
                borders.push((top + r) * width + x);
            }
            for nr in r.saturating_sub(1)..(r + 2).min(rows) {
                for nx in x.saturating_sub(1)..(x + 2).min(width) {
                    let n = nr * width + nx;
                    if out[n] == WEAK {
                        out[n] = EDGE;
                        stack.push(n);
                    }
                }
            }
        }
        borders
    }
}

impl Canny {
    /// The edges of an image straight from its grey rows, on every core: [`Canny::edges_rayon`] with each band's
    /// gradients computed inside the band (cpu-rayon's gradient pass over the band and the rows its stencil reaches),
    /// so that no image-sized gradient plane is written and read again: the Python package's. The same bytes as
    /// [`Canny::edges`] of [`crate::cpu::scalar`]'s gradients (tests below). `filter` gives the grey, the border and
    /// the stencil (its ksize is this Canny's).
    pub fn edges_of<R: crate::cpu::source::Rows>(&self, src: &R, filter: crate::sobel::Filter) -> Vec<u8> {
        use crate::cpu::rayon::{Out, Plane};
        use rayon::prelude::*;
        let (width, height) = (src.width(), src.height());
        if width * height == 0 {
            return Vec::new();
        }
        let (low, high) = self.thresholds();
        let band = height.div_ceil(4 * rayon::current_num_threads()).max(1);
        let mut out = vec![0u8; width * height];
        let borders: Vec<usize> = out
            .par_chunks_mut(band * width)
            .enumerate()
            .flat_map_iter(|(b, out)| {
                let (top, rows, r) = (b * band, out.len() / width, filter.stencil().radius);
                // The gradients of rows top − 1 … top + rows, from a window reaching the radius beyond them (cut at
                // the image's edges), by cpu-rayon's gradient pass.
                let first = top.saturating_sub(1 + r);
                let last = (top + rows + 1 + r).min(height);
                let window = Window { src, first, height: last - first };
                let (mut gx, mut gy) = (vec![0i32; (last - first) * width], vec![0i32; (last - first) * width]);
                let planes = Out::Gradients(Plane::I32(&mut gx), Plane::I32(&mut gy));
                crate::cpu::rayon::run(&window, filter, planes);
                let row = |y: usize| (&gx[(y - first) * width..][..width], &gy[(y - first) * width..][..width]);
                self.band(row, (width, height), (top, out), (low, high))
            })
            .collect();
        follow_across(&mut out, borders, width, height);
        out.par_iter_mut().for_each(|v| *v = if *v == EDGE { 255 } else { 0 });
        out
    }
}

/// Rows `first..first + height` of an image, as an image: its gradients are exact for every row at least the
/// stencil's radius from the window's cut edges (and at the image's own edges, where the border rule is the image's).
struct Window<'a, R> {
    src: &'a R,
    first: usize,
    height: usize,
}

impl<R: crate::cpu::source::Rows> crate::cpu::source::Rows for Window<'_, R> {
    fn width(&self) -> usize {
        self.src.width()
    }
    fn height(&self) -> usize {
        self.height
    }
    fn grey_row(&self, y: usize, filter: crate::sobel::Filter, dst: &mut [u8]) {
        self.src.grey_row(self.first + y, filter, dst)
    }
}

/// The hysteresis across the bands: from each band's edge pixels on its first and last rows, every weak candidate
/// an 8-connected path reaches becomes an edge.
fn follow_across(out: &mut [u8], mut stack: Vec<usize>, width: usize, height: usize) {
    while let Some(i) = stack.pop() {
        let (x, y) = (i % width, i / width);
        for ny in y.saturating_sub(1)..(y + 2).min(height) {
            for nx in x.saturating_sub(1)..(x + 2).min(width) {
                let n = ny * width + nx;
                if out[n] == WEAK {
                    out[n] = EDGE;
                    stack.push(n);
                }
            }
        }
    }
}

/// [`Canny::edges_rayon`]'s states of a pixel: a candidate not yet joined to a strong one, and an edge.
const WEAK: u8 = 1;
const EDGE: u8 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    fn canny(low: f64, high: f64, norm: Norm, ksize: Ksize) -> Canny {
        Canny::new(low, high, norm, ksize).unwrap()
    }

    #[test]
    fn thresholds_are_swapped_scaled_squared_and_floored_as_opencv_does() {
        assert_eq!(canny(150.7, 50.2, Norm::L1, Ksize::K3).thresholds(), (50, 150));
        assert_eq!(canny(50.5, 150.5, Norm::L2, Ksize::K3).thresholds(), (2550, 22650)); // 50.5² = 2550.25
        assert_eq!(canny(40_000.0, 50_000.0, Norm::L2, Ksize::K5).thresholds(), (32_767 * 32_767, 32_767 * 32_767));
        assert_eq!(canny(-3.5, 100.0, Norm::L2, Ksize::K5).thresholds(), (-4, 10_000)); // negatives are not squared
        assert_eq!(canny(800.0, 1600.0, Norm::L1, Ksize::K7).thresholds(), (50, 100));
    }

    #[test]
    fn aperture_seven_rounds_half_to_even() {
        let c = canny(0.0, 0.0, Norm::L1, Ksize::K7);
        let got: Vec<i32> = [8, 24, -8, -24, 9, -9, 7, 163_200].map(|g| c.opencv_gradient(g)).to_vec();
        assert_eq!(got, [0, 2, 0, -2, 1, -1, 0, 10_200]);
        assert_eq!(canny(0.0, 0.0, Norm::L1, Ksize::K5).opencv_gradient(12_240), 12_240);
    }

    #[test]
    fn what_opencv_refuses_is_refused() {
        assert!(Canny::new(f64::NAN, 1.0, Norm::L1, Ksize::K3).unwrap_err().contains("low threshold"));
        assert!(Canny::new(1.0, f64::INFINITY, Norm::L1, Ksize::K3).unwrap_err().contains("high threshold"));
        assert!(Canny::new(1.0, 2.0, Norm::L1, Ksize::K1).unwrap_err().contains("3, 5 or 7"));
    }

    #[test]
    fn on_every_core_it_gives_the_references_bytes() {
        // Random gradients of every size up to 23 × 19 (1×1 and single rows and columns included), for each aperture,
        // norm and a range of thresholds: the two implementations agree byte for byte.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |range: i32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % (2 * range as u64 + 1)) as i32 - range
        };
        for (w, h) in [(1, 1), (1, 9), (9, 1), (2, 2), (23, 19), (17, 4)] {
            for ksize in [Ksize::K3, Ksize::K5, Ksize::K7] {
                let range = ksize_bound(ksize);
                let gx: Vec<i32> = (0..w * h).map(|_| next(range)).collect();
                let gy: Vec<i32> = (0..w * h).map(|_| next(range)).collect();
                for norm in [Norm::L1, Norm::L2] {
                    for (low, high) in [(0.0, 0.0), (50.0, 150.0), (300.0, 90.0), (-4.0, 2000.0), (900.0, 9000.0)] {
                        let c = canny(low, high, norm, ksize);
                        assert_eq!(c.edges_rayon(&gx, &gy, w, h), c.edges(&gx, &gy, w, h), "{w}×{h} {c:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn from_the_grey_rows_it_gives_the_references_bytes() {
        // Random images of every size up to 29 × 23, each aperture, border, grey, norm and a range of thresholds:
        // the fused path equals the reference on cpu-scalar's gradients.
        use crate::sobel::{Border, Filter, Grey};
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut byte = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        };
        for (w, h) in [(1, 1), (1, 9), (9, 1), (2, 3), (6, 5), (29, 23), (40, 7)] {
            let data: Vec<u8> = (0..3 * w * h).map(|_| byte() / 4 * (1 + (w % 3) as u8)).collect();
            let rgb = image::RgbImage::from_raw(w as u32, h as u32, data.clone()).unwrap();
            let src = crate::cpu::source::PackedRgb::new(&data, w, h);
            for ksize in [Ksize::K3, Ksize::K5, Ksize::K7] {
                for border in Border::ALL {
                    for grey in [Grey::Percent, Grey::Bt601] {
                        let filter = Filter { ksize, border, grey, ..Filter::default() };
                        let st = crate::cpu::scalar::sobel_stages(&rgb, filter);
                        for norm in [Norm::L1, Norm::L2] {
                            for (low, high) in [(10.0, 40.0), (100.0, 300.0), (0.0, 0.0), (900.0, 100.0)] {
                                let c = canny(low, high, norm, ksize);
                                let want = c.edges(&st.gx, &st.gy, w, h);
                                assert_eq!(c.edges_of(&src, filter), want, "{w}×{h} {filter:?} {c:?}");
                            }
                        }
                    }
                }
            }
        }
    }

    fn ksize_bound(k: Ksize) -> i32 {
        crate::sobel::Stencil::of(crate::sobel::Operator::Sobel, k).bound()
    }

    /// A vertical step worked by hand: grey 0 | 0 | 100 | 100 across each row, Sobel 3×3 with replicate. Gx is 400
    /// in columns 1 and 2 (the step between them), 0 elsewhere; Gy is 0. Column 1: m = 400 > left 0 and ≥ right 400:
    /// a maximum; column 2: 400 > left 400 fails. So one thin edge, in column 1, on every row.
    #[test]
    fn a_step_gives_one_thin_edge_on_the_left_of_the_tie() {
        let (w, h) = (4, 3);
        let gx: Vec<i32> = (0..w * h).map(|i| if i % w == 1 || i % w == 2 { 400 } else { 0 }).collect();
        let gy = vec![0; w * h];
        let out = canny(100.0, 300.0, Norm::L1, Ksize::K3).edges(&gx, &gy, w, h);
        assert_eq!(out, [0, 255, 0, 0].repeat(h));
        // A weak edge alone is no edge; joined to a strong one it is.
        assert_eq!(canny(100.0, 500.0, Norm::L1, Ksize::K3).edges(&gx, &gy, w, h), vec![0; w * h]);
        let mut strong = gx.clone();
        strong[1] = 600; // the top row's maximum, now strong (and still a maximum: 600 > 0 and ≥ 400)
        assert_eq!(canny(100.0, 500.0, Norm::L1, Ksize::K3).edges(&strong, &gy, w, h), [0, 255, 0, 0].repeat(h));
    }
}
