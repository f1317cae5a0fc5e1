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

use crate::sobel::{direction4, Filter, Ksize, Norm, Number, Output, Stencil};

mod parallel;
mod seams;
pub(crate) use parallel::sixteenth;

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

    /// What the GPU's suppression reads of a pixel whose exact gradients are `gx`, `gy` ([`Output::Sectors`],
    /// sobel.cuh's `sector_of`): the magnitude of OpenCV's gradients shifted up two bits, and their sector
    /// ([`direction4`]) in those two. The thresholds do not enter it.
    pub fn sector(&self, gx: i32, gy: i32) -> u32 {
        let (x, y) = (self.opencv_gradient(gx), self.opencv_gradient(gy));
        ((self.magnitude(x, y) as u32) << 2) | u32::from(direction4(x, y))
    }

    /// What the GPU computes before Canny's kernels (`cuda/canny.cu`): `filter`'s gradients in this Canny's norm,
    /// written as its words ([`Canny::words`]).
    pub fn gradients(&self, filter: Filter) -> (Filter, Output) {
        debug_assert_eq!(filter.ksize, self.ksize, "the Sobel's aperture is Canny's");
        (Filter { norm: self.norm, ..filter }, self.words(&filter.stencil()))
    }

    /// [`Output::Sectors`] of `stencil`'s gradients in this Canny's norm: 16-bit words where the largest fits
    /// (aperture 3 with L1: 2040 · 4 + 3), else 32-bit ones.
    pub fn words(&self, stencil: &Stencil) -> Output {
        let g = self.opencv_gradient(stencil.bound());
        let largest = 4 * self.magnitude(g, g) + 3;
        Output::Sectors(if largest <= i16::MAX as i64 { Number::I16 } else { Number::I32 })
    }

    /// A Canny of `filter`'s aperture and norm, for [`Canny::sector`] alone (its thresholds 0).
    pub fn of_filter(filter: Filter) -> Canny {
        Canny { low: 0.0, high: 0.0, norm: filter.norm, ksize: filter.ksize }
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
    fn cpu_rayons_sixteenths_are_opencvs_aperture_seven_gradients() {
        // A random 67 × 41 image (every border): cpu-rayon's 16-bit sixteenths are the rounding of its exact 32-bit
        // gradients, the halves included (about one gradient in sixteen).
        use crate::cpu::rayon::{run, Out, PackedRgb, Plane};
        let (w, h) = (67, 41);
        let data: Vec<u8> = (0..3 * w * h).map(|i| ((i * 7919) % 251) as u8 ^ (i / 5) as u8).collect();
        let src = PackedRgb::new(&data, w, h);
        let c = canny(0.0, 0.0, Norm::L1, Ksize::K7);
        for border in crate::sobel::Border::ALL {
            let filter = crate::sobel::Filter { ksize: Ksize::K7, border, ..Default::default() };
            let (mut x, mut y) = (vec![0i32; w * h], vec![0i32; w * h]);
            run(&src, filter, Out::Gradients(Plane::I32(&mut x), Plane::I32(&mut y)));
            let (mut x16, mut y16) = (vec![0i16; w * h], vec![0i16; w * h]);
            run(&src, filter, Out::Gradients(Plane::Sixteenths(&mut x16), Plane::Sixteenths(&mut y16)));
            let want: Vec<i16> = x.iter().chain(&y).map(|&g| c.opencv_gradient(g) as i16).collect();
            assert_eq!([x16, y16].concat(), want, "{border:?}");
            assert!(x.iter().chain(&y).filter(|&&g| g.rem_euclid(16) == 8).count() > w * h / 20, "halves tested");
        }
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
        // 131 × 6 and 70 × 33: rows of several 64-state masks (and a part of one); 37 × 131: several bands.
        for (w, h) in [(1, 1), (1, 9), (9, 1), (2, 2), (23, 19), (17, 4), (131, 6), (70, 33), (37, 131)] {
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
    fn chains_across_the_64_state_masks_are_followed() {
        // One row of vertical gradients (every pixel a peak): a strong pixel whose only weak neighbour lies across a
        // boundary of the 64-state masks, on either side — the chain of weak ones beyond it is edges all the same.
        let (w, h) = (200, 5);
        for (strong, weak) in [(63, 64..70), (64, 57..64), (127, 128..131), (128, 120..128)] {
            let mut gy = vec![0; w * h];
            gy[2 * w + strong] = 500;
            for x in weak.clone() {
                gy[2 * w + x] = 100;
            }
            let c = canny(50.0, 150.0, Norm::L1, Ksize::K3);
            let want = c.edges(&vec![0; w * h], &gy, w, h);
            assert!(weak.clone().all(|x| want[2 * w + x] == 255), "the reference follows the chain");
            assert_eq!(c.edges_rayon(&vec![0; w * h], &gy, w, h), want, "strong at {strong}, weak {weak:?}");
        }
    }

    #[test]
    fn a_chain_through_every_band_is_followed_across_their_seams() {
        // The spiral: one chain of weak pixels winding through every band (bands of 16 rows here), every edge hanging
        // on a seed in the first: each seam is crossed both ways, again and again.
        let (w, h) = (96, 200);
        let st = crate::cpu::scalar::sobel_stages(&crate::generate::spiral(w, h, 40, 255), Default::default());
        let c = canny(60.0, 500.0, Norm::L1, Ksize::K3);
        let want = c.edges(&st.gx, &st.gy, w as usize, h as usize);
        assert!(want.iter().filter(|&&b| b == 255).count() > (w * h) as usize / 5, "the spiral's edges");
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let got = pool.install(|| c.edges_rayon(&st.gx, &st.gy, w as usize, h as usize));
        assert_eq!(got, want);
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
        // 131 × 6: rows of several 64-state masks; 37 × 131: several bands of every aperture's size.
        for (w, h) in [(1, 1), (1, 9), (9, 1), (2, 3), (6, 5), (29, 23), (40, 7), (131, 6), (37, 131)] {
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

    #[test]
    fn the_sector_test_in_32_bits_is_the_64_bit_one_for_opencvs_gradients() {
        // Every pair on a grid through ±27 145 (the bound direction4_in::<i32> is exact to), and the pairs either side
        // of each sector boundary for |gx| up to 12 240, OpenCV's largest Canny gradient.
        let grid: Vec<i32> = (-27_145..=27_145).step_by(97).chain([-27_145, -1, 0, 1, 27_145]).collect();
        for &gx in &grid {
            for &gy in &grid {
                assert_eq!(crate::sobel::direction4_in::<i32>(gx, gy), direction4(gx, gy), "({gx}, {gy})");
            }
        }
        for gx in (0..=12_240).step_by(7) {
            for t in [13_573i64, 13_573 + 65_536] {
                let edge = (gx as i64 * t) >> 15;
                for gy in [edge - 1, edge, edge + 1] {
                    let (gx, gy) = (gx, gy as i32);
                    for (x, y) in [(gx, gy), (-gx, gy), (gx, -gy), (-gx, -gy)] {
                        assert_eq!(crate::sobel::direction4_in::<i32>(x, y), direction4(x, y), "({x}, {y})");
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
