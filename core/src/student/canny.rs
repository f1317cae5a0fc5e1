//! `--kernel-file F --output canny`: a student's hysteresis step — the contract of `cuda/exercises/06_hysteresis.cu`,
//! `(const u8* state, int* parent, int width, int height)`, in place of `cuda/canny.cu`'s `canny_link` — run between
//! the library's own launches ([`Engine::student_canny`]), checked byte for byte against the Canny definition, and
//! timed beside the worked solution.
//!
//! A union-find with a lost union can still pass on one run by luck (the threads' order differs run to run), so each
//! case runs twice; `--sweep` adds the images that make chains long or ties many: the awkward sizes of noise, a
//! one-pixel spiral hanging on one seed (and without it), a checkerboard.

use std::fmt::Write as _;
use std::path::Path;

use image::RgbImage;

use super::{sweep_sizes, StudentOptions};
use crate::canny::Canny;
use crate::engine::{Engine, RunOptions, StudentKernel};
use crate::sobel::{Border, Filter, Ksize, Norm};
use crate::variant::Variant;

/// One image to check, with its filter, its Canny and how the messages name it.
struct Case {
    rgb: RgbImage,
    filter: Filter,
    canny: Canny,
    what: String,
}

/// The definition's bytes: cpu-scalar's gradients, then [`Canny::edges`].
fn definition(case: &Case) -> Vec<u8> {
    let stages = crate::cpu::scalar::sobel_stages(&case.rgb, case.filter);
    case.canny.edges(&stages.gx, &stages.gy, case.rgb.width() as usize, case.rgb.height() as usize)
}

/// The first differing pixel of `got` against `want`, as the student reads it; `None` when they are identical.
pub fn describe_mismatch(want: &[u8], got: &[u8], width: usize, what: &str) -> Option<String> {
    let i = want.iter().zip(got).position(|(a, b)| a != b)?;
    let count = want.iter().zip(got).filter(|(a, b)| a != b).count();
    let (x, y) = (i % width, i / width);
    let mut s = format!(
        "{what}: pixel (x {x}, y {y}) is {} but the definition gives {} ({count} pixel(s) differ)\n",
        got[i], want[i]
    );
    let hint = if want[i] == 255 {
        "a weak pixel joined to a strong one by a chain of candidates did not reach node 0: does unite link the two \
         roots, and retry from what atomicMin returned when another thread linked the root first?"
    } else {
        "a pixel reached node 0 without a chain of candidates to a strong one: is only a root ever linked, and only \
         under a smaller node?"
    };
    let _ = writeln!(s, "  hint: {hint}");
    Some(s)
}

/// Checks the student's link step on the image (and the sweep's images), then times the whole Canny with it and with
/// `cuda/canny.cu`'s own; prints the outcome and returns the exit code (0 identical, 1 a mismatch).
pub(super) fn run(
    engine: &Engine,
    kernel: &StudentKernel,
    (label, image): (&str, &Path),
    rgb: &RgbImage,
    (filter, canny): (Filter, Canny),
    opts: &StudentOptions,
) -> anyhow::Result<u8> {
    let (w, h) = (rgb.width(), rgb.height());
    let mut cases = vec![Case { rgb: rgb.clone(), filter, canny, what: format!("{} ({w}×{h})", image.display()) }];
    if opts.sweep {
        for (k, &(w, h)) in sweep_sizes().iter().enumerate() {
            for border in Border::ALL {
                let rgb = crate::generate::noise(w, h, 7 + k as u64);
                let what = format!("{w}×{h} noise, border {}", border.name());
                cases.push(Case { rgb, filter: Filter { border, ..filter }, canny, what });
            }
        }
        // The spiral's thresholds are its own: its line's gradients are strong, the ring's weak (generate::spiral).
        let long = Canny::new(60.0, 500.0, Norm::L1, Ksize::K3).expect("valid");
        let flat = Filter { ksize: Ksize::K3, ..Filter::default() };
        for (w, h) in [(257, 255), (1024, 1024)] {
            for (seed, what) in [(255, "the spiral"), (40, "the spiral without its seed")] {
                let rgb = crate::generate::spiral(w, h, 40, seed);
                cases.push(Case { rgb, filter: flat, canny: long, what: format!("{what}, {w}×{h}") });
            }
            let checker = RgbImage::from_fn(w, h, |x, y| image::Rgb([if (x + y) % 2 == 0 { 200 } else { 10 }; 3]));
            cases.push(Case { rgb: checker, filter: flat, canny: long, what: format!("a checkerboard, {w}×{h}") });
        }
    }
    let once = RunOptions::default();
    for case in &cases {
        let want = definition(case);
        for _ in 0..2 {
            let got = engine.student_canny(kernel, &case.rgb, (case.filter, &case.canny), once)?.output;
            let what = format!("{label} differs on {}", case.what);
            if let Some(described) = describe_mismatch(&want, &got, case.rgb.width() as usize, &what) {
                crate::say!("{described}");
                return Ok(1);
            }
        }
    }
    let timed = RunOptions { warm_up: true, reps: opts.reps };
    let ms = engine.student_canny(kernel, rgb, (filter, &canny), timed)?.compute_ms;
    let ours = engine.run_canny(Variant::GpuStrip, rgb, filter, &canny, timed)?.compute_ms;
    let mpx = |ms: f64| f64::from(w) * f64::from(h) / (ms * 1e3);
    let checked = format!("identical (2 runs each{})", if opts.sweep { ", with the sweep" } else { "" });
    let mut s = format!(
        "{label}: entry {}, Canny's link step on {} ({w}×{h}, thresholds {} and {}, {} cases)\n\n",
        kernel.name,
        image.display(),
        canny.low,
        canny.high,
        cases.len()
    );
    let _ = writeln!(s, "{:<28} {:>12} {:>8}  check", "Canny with", "compute ms", "Mpx/s");
    let _ = writeln!(s, "{label:<28} {ms:>12.4} {:>8.0}  {checked}", mpx(ms));
    let _ = writeln!(s, "{:<28} {ours:>12.4} {:>8.0}  the worked solution", "cuda/canny.cu", mpx(ours));
    let _ = writeln!(
        s,
        "\ncompute: gpu-strip's gradients, the suppression, the link step and the edges; median of {} event-timed runs \
         after a warm-up",
        opts.reps
    );
    crate::say!("{s}");
    Ok(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_mismatch_names_its_pixel_and_a_hint() {
        let s = super::describe_mismatch(&[0, 255, 0, 255], &[0, 255, 0, 0], 2, "mine").unwrap();
        assert!(s.starts_with("mine: pixel (x 1, y 1) is 0 but the definition gives 255 (1 pixel(s) differ)"), "{s}");
        assert!(s.contains("retry from what atomicMin returned"), "{s}");
        assert!(super::describe_mismatch(&[1, 2], &[1, 2], 2, "same").is_none());
    }
}
