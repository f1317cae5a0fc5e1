//! Canny on every core: bands of rows suppress and follow the hysteresis inside themselves, then one thread continues
//! across the bands ([`Canny::edges_rayon`] from gradients, [`Canny::edges_of`] from an image's grey rows). The
//! same bytes as the reference, [`Canny::edges`].

use std::cell::RefCell;

use super::seams::{over_bands, Open};
use super::{Canny, EDGE, WEAK};

/// A band's weak candidate that a path of weak ones joins to the band's first or last row: the only kind a path
/// through another band can still make an edge. In the output it stays WEAK until the hysteresis across the bands.
const OPEN: u8 = 3;
use crate::sobel::{direction4_in, Ksize, Norm};

impl Canny {
    /// [`Canny::edges`] on every core, the same bytes (tests below, `tests/canny.rs`, and cv2's in
    /// `python/tests/test_opencv.py`): what the command line writes from each variant's gradients. Each band of
    /// rows, on its own core, computes its magnitudes (and the rows either side), suppresses, and follows the
    /// hysteresis from its strong pixels as far as its own rows go, noting the edge pixels on its first and last rows;
    /// then one thread continues from those across the bands. Reachability is the same whoever reaches a pixel first.
    pub fn edges_rayon(&self, gx: &[i32], gy: &[i32], width: usize, height: usize) -> Vec<u8> {
        assert!(gx.len() == width * height && gy.len() == gx.len(), "a gradient a pixel");
        let thresholds = self.thresholds();
        // A band computes the magnitudes of a row either side again: at least 16 rows keep that within an eighth.
        let mut out = vec![0u8; width * height];
        thread_local! { static STATES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) }; }
        over_bands((width, height), 16, &mut out, &STATES, |top, out, states| {
            let row = |y: usize| (&gx[y * width..][..width], &gy[y * width..][..width]);
            self.band((row, self.ksize == Ksize::K7), (width, height), (top, out), thresholds, states)
        });
        out
    }

    /// One band of [`Canny::edges_rayon`]: rows `top..top + rows` (`out` holds them), the gradients of image row `y`
    /// given by `gradients(y)` — exact ones, or with `k7_rule` false at aperture 7 OpenCV's already
    /// ([`Plane::Sixteenths`](crate::cpu::rayon::Plane::Sixteenths)); `states` is room the band may reuse. Its rows
    /// end as the output's bytes (255 an edge, else 0; its open candidates ([`OPEN`]) 0 until a path across the
    /// bands reaches them); returns those, in the components that paths inside the band join, and the edges of its
    /// first and last rows.
    fn band<'g, G: Gradient>(
        &self,
        (gradients, k7_rule): (impl Fn(usize) -> (&'g [G], &'g [G]), bool),
        (width, height): (usize, usize),
        (top, out): (usize, &mut [u8]),
        (low, high): (i64, i64),
        states: &mut Vec<u8>,
    ) -> Open {
        let rows = out.len() / width;
        // Magnitudes of three rows at a time (row y in slot (y + 1) mod 3; 0 outside the image), each computed once a
        // band: every magnitude fits 32 bits, |Gx| + |Gy| ≤ 65 535 and Gx² + Gy² ≤ 2 · 32 767². A band's full
        // magnitude plane instead (8 MB at 2048×1024) made its page faults a third of the time. Each line has a 0 at
        // either end, the magnitudes beyond the image's sides, so the suppression reads its neighbours unchecked.
        let mut ring = [vec![0i32; width + 2], vec![0i32; width + 2], vec![0i32; width + 2]];
        let fill = |line: &mut [i32], y: isize| {
            if !(0..height as isize).contains(&y) {
                line.fill(0);
                return;
            }
            let (gx, gy) = gradients(y as usize);
            magnitudes(k7_rule, self.norm, gx, gy, &mut line[1..=width]);
        };
        let slot = |y: isize| (y + 1).rem_euclid(3) as usize;
        fill(&mut ring[slot(top as isize - 1)], top as isize - 1);
        fill(&mut ring[slot(top as isize)], top as isize);
        // Every magnitude is below 2^31, so thresholds clamped to 32 bits compare as the 64-bit ones.
        let clamp = |t: i64| t.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        let (low, high) = (clamp(low), clamp(high));
        // The band's states with a ring of 0 around them (row r, column x at (r + 1) · stride + x + 1): the hysteresis
        // then steps to its eight neighbours without a bounds test or a division, and stops at the band's edges.
        // Only the ring is cleared: the rows write every state inside it. Clearing all of a band's states (135 kB at
        // 2048×1024) took 3 % of Canny's time on one thread (perf).
        let stride = width + 2;
        states.resize((rows + 2) * stride, 0);
        states[..stride].fill(0);
        states[(rows + 1) * stride..].fill(0);
        for r in 1..=rows {
            states[r * stride] = 0;
            states[r * stride + stride - 1] = 0;
        }
        let mut stack = Vec::new();
        for r in 0..rows {
            let y = (top + r) as isize;
            fill(&mut ring[slot(y + 1)], y + 1);
            let lines = [&ring[slot(y - 1)][..], &ring[slot(y)][..], &ring[slot(y + 1)][..]];
            let at = (r + 1) * stride + 1;
            let row = &mut states[at..at + width];
            suppress_row(lines, gradients(top + r), k7_rule, (low, high), row);
        }
        seeds(states, (stride, rows, width), &mut stack);
        // The hysteresis inside the band.
        // The eight neighbours of i as offsets into the 3×3 window whose first state is i − stride − 1: one bounds
        // test a pixel, for the window, instead of one a neighbour (a tenth of this loop's time).
        let neighbours = [0, 1, 2, stride, stride + 2, 2 * stride, 2 * stride + 1, 2 * stride + 2];
        while let Some(i) = stack.pop() {
            let corner = i - stride - 1;
            let window = &mut states[corner..corner + 2 * stride + 3];
            for o in neighbours {
                if window[o] == WEAK {
                    window[o] = EDGE;
                    stack.push(corner + o);
                }
            }
        }
        // The open candidates: the weak ones on a first or last row that has a band beyond it, and every weak one a
        // path joins to them, one component at a time (found breadth first, `open` its own queue): component k is
        // open[starts[k]..starts[k + 1]]. Every other weak candidate is final here (0), so the hysteresis across the
        // bands touches these alone, a component at a time.
        let (mut open, mut starts) = (Vec::new(), vec![0]);
        for (r, beyond) in [(0, top > 0), (rows - 1, top + rows < height)] {
            let at = (r + 1) * stride + 1;
            for x in (0..width).filter(|_| beyond) {
                if states[at + x] != WEAK {
                    continue;
                }
                states[at + x] = OPEN;
                open.push(at + x);
                let mut next = open.len() - 1;
                while let Some(&i) = open.get(next) {
                    next += 1;
                    let corner = i - stride - 1;
                    let window = &mut states[corner..corner + 2 * stride + 3];
                    for o in neighbours {
                        if window[o] == WEAK {
                            window[o] = OPEN;
                            open.push(corner + o);
                        }
                    }
                }
                starts.push(open.len());
            }
        }
        for (r, row) in out.chunks_exact_mut(width).enumerate() {
            for (o, &s) in row.iter_mut().zip(&states[(r + 1) * stride + 1..][..width]) {
                *o = u8::from(s == EDGE) * 255;
            }
        }
        Open::of_band(states, (width, rows), open, starts)
    }
}

/// OpenCV's 1/16 for aperture 7 ([`Canny::opencv_gradient`]), rounded half to even, without a branch: ⌊g/16⌋ plus
/// the rounding's carry.
#[inline(always)]
pub(crate) fn sixteenth(g: i32) -> i32 {
    let (q, r) = (g >> 4, g & 15);
    q + i32::from(r > 8 || (r == 8 && q & 1 == 1))
}

/// OpenCV's gradient for apertures 3 and 5 ([`Canny::opencv_gradient`]): saturated to 16 bits.
#[inline(always)]
fn k35(g: i32) -> i32 {
    g.clamp(i16::MIN as i32, i16::MAX as i32)
}

/// [`Canny::magnitudes`] in loops the compiler vectorises, one a norm and aperture rule (picked per pixel, they made
/// the suppression 2–3× slower than the gradients), compiled for each CPU's vector width. OpenCV's gradients stay
/// within ±12 240 (apertures 3 and 5; aperture 7's ÷ 16 of ±163 200 is ±10 200), so both norms fit 32 bits.
#[multiversion::multiversion(targets("x86_64+avx512bw+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn magnitudes<G: Gradient>(k7_rule: bool, norm: Norm, gx: &[G], gy: &[G], line: &mut [i32]) {
    #[inline(always)]
    fn each<G: Gradient>(line: &mut [i32], gx: &[G], gy: &[G], f: impl Fn(i32, i32) -> i32) {
        line.iter_mut().zip(gx.iter().zip(gy)).for_each(|(v, (&x, &y))| *v = f(x.into(), y.into()));
    }
    match (k7_rule, norm) {
        (false, Norm::L1) => each(line, gx, gy, |x, y| k35(x).abs() + k35(y).abs()),
        (false, Norm::L2) => each(line, gx, gy, |x, y| k35(x) * k35(x) + k35(y) * k35(y)),
        (true, Norm::L1) => each(line, gx, gy, |x, y| sixteenth(x).abs() + sixteenth(y).abs()),
        (true, Norm::L2) => each(line, gx, gy, |x, y| sixteenth(x) * sixteenth(x) + sixteenth(y) * sixteenth(y)),
    }
}

/// Pushes the index of each strong candidate (EDGE) with a weak neighbour onto `stack`: the seeds of the hysteresis
/// (one with none has nothing to spread to). `states` holds `rows` rows of `width` states, row r at (r + 1) · `stride`
/// + 1, with a ring of 0 around them. Sixty-four states at a time become masks of bits: each row's weak ones, ORed
/// over the rows above and below and shifted a bit either way (the next masks' end bits carried in), against the
/// row's strong ones; the set bits of the intersection are walked. Pushed one by one instead, every strong pixel of
/// a textured photo (a third of its candidates) was popped again to find no weak neighbour: on one thread at
/// 2048×1024, the seeds and the hysteresis took 33 % of Canny's time that way, 15 % this way (perf).
#[multiversion::multiversion(targets("x86_64+avx512bw+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn seeds(states: &[u8], (stride, rows, width): (usize, usize, usize), stack: &mut Vec<usize>) {
    let chunks = width.div_ceil(64);
    let row = |r: usize| &states[(r + 1) * stride + 1..][..width];
    // The weak masks of rows −1 … rows (the ring's rows are all 0).
    let mut weak = vec![0u64; (rows + 2) * chunks];
    for r in 0..rows {
        masks(row(r), WEAK, &mut weak[(r + 1) * chunks..(r + 2) * chunks]);
    }
    let mut strong = vec![0u64; chunks];
    let mut near = vec![0u64; chunks];
    for r in 0..rows {
        masks(row(r), EDGE, &mut strong);
        for (c, v) in near.iter_mut().enumerate() {
            *v = weak[r * chunks + c] | weak[(r + 1) * chunks + c] | weak[(r + 2) * chunks + c];
        }
        for c in 0..chunks {
            let v = near[c];
            let before = if c > 0 { near[c - 1] >> 63 } else { 0 };
            let after = if c + 1 < chunks { near[c + 1] << 63 } else { 0 };
            let mut seeds = strong[c] & (v | (v << 1) | (v >> 1) | before | after);
            let at = (r + 1) * stride + 1 + 64 * c;
            while seeds != 0 {
                stack.push(at + seeds.trailing_zeros() as usize);
                seeds &= seeds - 1;
            }
        }
    }
}

/// The bits of `row`'s states equal to `v`, sixty-four a mask (bit i of mask c: state 64 · c + i).
#[inline(always)]
fn masks(row: &[u8], v: u8, out: &mut [u64]) {
    let bits = |chunk: &[u8]| chunk.iter().enumerate().fold(0u64, |m, (i, &s)| m | (u64::from(s == v) << i));
    let mut whole = row.chunks_exact(64);
    for (m, chunk) in out.iter_mut().zip(&mut whole) {
        let chunk: &[u8; 64] = chunk.try_into().expect("64 states");
        *m = bits(chunk);
    }
    if !whole.remainder().is_empty() {
        out[row.len() / 64] = bits(whole.remainder());
    }
}

/// The states of one row (0, WEAK or EDGE a pixel; before the hysteresis, EDGE is a strong candidate): `lines` are
/// the magnitudes of the rows above, here and below with a 0 at either end, `gradients` the row's exact ones. Written
/// without a branch, the neighbours picked by selects, so that it vectorises; compiled for each CPU's vector width
/// like cpu-rayon's band loop (runtime dispatch).
#[multiversion::multiversion(targets("x86_64+avx512bw+avx512vl", "x86_64+avx2", "aarch64+neon"))]
fn suppress_row<G: Gradient>(
    lines: [&[i32]; 3],
    gradients: (&[G], &[G]),
    k7_rule: bool,
    thresholds: (i32, i32),
    out: &mut [u8],
) {
    if k7_rule {
        suppress_in(lines, gradients, sixteenth, thresholds, out)
    } else {
        suppress_in(lines, gradients, k35, thresholds, out)
    }
}

/// [`suppress_row`] for one aperture rule `opencv` (inlined into each CPU version).
#[inline(always)]
fn suppress_in<G: Gradient>(
    [up, here, down]: [&[i32]; 3],
    (gx, gy): (&[G], &[G]),
    opencv: impl Fn(i32) -> i32,
    (low, high): (i32, i32),
    out: &mut [u8],
) {
    let n = out.len();
    let (up, here, down, gx, gy) = (&up[..n + 2], &here[..n + 2], &down[..n + 2], &gx[..n], &gy[..n]);
    for x in 0..n {
        // Line index x + 1 is pixel x: its left neighbour is line index x, its right x + 2.
        let c = here[x + 1];
        // OpenCV's gradients are within ±12 240: 32 bits hold the sector test.
        let d = direction4_in::<i32>(opencv(gx[x].into()), opencv(gy[x].into()));
        // The two neighbours across the edge, in the sector direction4 gives; ties go to the first (left, above).
        // All eight are loaded and the two picked by masks: picked by a match, the compiler gathered them by address,
        // which made this loop 1.5× slower.
        let is = |k: u8| -i32::from(d == k);
        let (s0, s1, s2, s3) = (is(0), is(1), is(2), is(3));
        let before = (here[x] & s0) | (up[x] & s1) | (up[x + 1] & s2) | (up[x + 2] & s3);
        let after = (here[x + 2] & s0) | (down[x + 2] & s1) | (down[x + 1] & s2) | (down[x] & s3);
        let peak = c > low && c > before && (c > after || (c == after && d & 1 == 0));
        out[x] = if !peak {
            0
        } else if c > high {
            EDGE
        } else {
            WEAK
        };
    }
}

impl Canny {
    /// The edges of an image straight from its grey rows, on every core: [`Canny::edges_rayon`] with each band's
    /// gradients computed inside the band (cpu-rayon's gradient pass over the band and the rows its stencil reaches),
    /// so that no image-sized gradient plane is written and read again: the Python package's. The same bytes as
    /// [`Canny::edges`] of [`crate::cpu::scalar`]'s gradients (tests below). `filter` gives the grey, the border and
    /// the stencil (its ksize is this Canny's).
    pub fn edges_of<R: crate::cpu::source::Rows>(&self, src: &R, filter: crate::sobel::Filter) -> Vec<u8> {
        let mut out = vec![0u8; src.width() * src.height()];
        self.edges_of_into(src, filter, &mut out);
        out
    }

    /// [`Canny::edges_of`] into `out` (a byte a pixel, every one written): the caller's own array, which a fresh
    /// image-sized buffer and a copy into it made 5–10 % slower (the Python package's host call).
    pub fn edges_of_into<R: crate::cpu::source::Rows>(&self, src: &R, filter: crate::sobel::Filter, out: &mut [u8]) {
        use crate::cpu::rayon::{Out, Plane};
        assert_eq!(out.len(), src.width() * src.height(), "a byte a pixel");
        debug_assert_eq!(filter.ksize, self.ksize, "the stencil is this Canny's");
        let (width, height) = (src.width(), src.height());
        let thresholds = self.thresholds();
        let r = filter.stencil().radius;
        // Aperture 7's exact gradients need 32 bits, but OpenCV's Canny takes their sixteenths, which fit 16: its
        // planes hold those, and the band reads them as it reads apertures 3 and 5's. 7680×4320 on one core: 174 ms
        // through 32-bit planes of the exact gradients, the sixteenths rounded in the band, against 102 at aperture 5.
        let sixteenths = !filter.stencil().fits_i16();
        // A band computes the gradients of 1 + r rows either side again: bands of at least 16 · (1 + r) rows keep that
        // within an eighth. With the seams joined a component at a time, smaller bands balance the threads better: on
        // 16 threads at 2048×1024 (one H200 host, seven runs alternating, each alone in its process), aperture 3 took
        // 0.74 ms in bands of 32 rows against 0.88 in bands of 64 (OpenCV 1.51); apertures 5 and 7, whose windows
        // reach further, 0.80 and 1.09 ms in bands of 32 against 0.72–0.74 and 0.94–1.01 in bands of 64, and 0.80 in
        // 22 bands of 48 at aperture 5 (some threads doing two, the rest one).
        thread_local! {
            static SCRATCH: RefCell<(Vec<i16>, Vec<i16>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new(), Vec::new())) };
        }
        over_bands((width, height), 16 * (1 + r), out, &SCRATCH, |top, out, (gx, gy, states)| {
            let rows = out.len() / width;
            // The gradients of rows top − 1 … top + rows (cut at the image's edges), by cpu-rayon's gradient pass on
            // this thread (the band is already one of many), from a window reaching the stencil's radius beyond them:
            // the rows the gradients need, each turned grey once. Computing the gradients of the window's every row
            // (its first and last r from rows the border rule made up) turned 38 rows grey for a band of 32 instead of
            // 36 (aperture 3), and 78 for 64 instead of 72 (aperture 7).
            let (g0, g1) = (top.saturating_sub(1), (top + rows + 1).min(height));
            let first = g0.saturating_sub(r);
            let window = Window { src, first, height: (g1 + r).min(height) - first };
            let n = (g1 - g0) * width;
            gx.resize(n, 0);
            gy.resize(n, 0);
            let planes = match sixteenths {
                true => Out::Gradients(Plane::Sixteenths(&mut gx[..n]), Plane::Sixteenths(&mut gy[..n])),
                false => Out::Gradients(Plane::I16(&mut gx[..n]), Plane::I16(&mut gy[..n])),
            };
            crate::cpu::rayon::run_here(&window, g0 - first, filter, planes);
            let row = |y: usize| (&gx[(y - g0) * width..][..width], &gy[(y - g0) * width..][..width]);
            self.band((row, false), (width, height), (top, out), thresholds, states)
        })
    }
}

/// A gradient's number in the band: 16 bits from an image's rows ([`Canny::edges_of`]: apertures 3 and 5's exact
/// gradients, aperture 7's sixteenths), 32 from exact gradients given ([`Canny::edges_rayon`]).
trait Gradient: Copy + Default + Into<i32> + Send + Sync + 'static {}

impl Gradient for i16 {}

impl Gradient for i32 {}

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
    // Inlined, as the source's own, into each CPU version of the band loop that calls it: out of line, the grey
    // conversion ran in baseline code, a tenth of Canny's time.
    #[inline(always)]
    fn grey_row(&self, y: usize, filter: crate::sobel::Filter, dst: &mut [u8]) {
        self.src.grey_row(self.first + y, filter, dst)
    }
}
