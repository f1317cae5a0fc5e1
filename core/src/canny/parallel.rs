//! Canny on every core: bands of rows suppress and follow the hysteresis inside themselves, then one thread continues
//! across the bands ([`Canny::edges_rayon`] from gradients, [`Canny::edges_of`] from an image's grey rows). The
//! same bytes as the reference, [`Canny::edges`].

use super::{Canny, EDGE, WEAK};
use crate::sobel::{direction4, Ksize, Norm};

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
            // Each worker's gradient rows are reused from band to band.
            .map_init(
                || (Vec::new(), Vec::new()),
                |(gx, gy): &mut (Vec<i32>, Vec<i32>), (b, out)| {
                    let (top, rows, r) = (b * band, out.len() / width, filter.stencil().radius);
                    // The gradients of rows top − 1 … top + rows, from a window reaching the radius beyond them (cut
                    // at the image's edges), by cpu-rayon's gradient pass on this thread: the band is already one of
                    // many.
                    let first = top.saturating_sub(1 + r);
                    let last = (top + rows + 1 + r).min(height);
                    let window = Window { src, first, height: last - first };
                    gx.resize((last - first) * width, 0);
                    gy.resize((last - first) * width, 0);
                    let planes = Out::Gradients(Plane::I32(&mut gx[..]), Plane::I32(&mut gy[..]));
                    crate::cpu::rayon::run_here(&window, filter, planes);
                    let row = |y: usize| (&gx[(y - first) * width..][..width], &gy[(y - first) * width..][..width]);
                    self.band(row, (width, height), (top, out), (low, high))
                },
            )
            .flatten_iter()
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
