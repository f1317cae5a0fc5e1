//! The arithmetic of `core/src/sobel.rs` itself: the grey rules, the magnitude against integer arithmetic for every
//! square up to saturation, the report's truncations and wrap-arounds, the stencils' taps (OpenCV's
//! `getDerivKernels`) and bounds, the border rules at any distance (OpenCV's `borderInterpolate`), the
//! direction's accuracy over every direction a 3×3 gradient can have, Canny's quantisation, the refusals.

use cuda_sobel::sobel::*;

#[test]
fn grey_rounds_half_up() {
    assert_eq!(grey(0, 0, 0), 0);
    assert_eq!(grey(255, 255, 255), 255);
    assert_eq!(grey(255, 0, 0), 77); // 76.5 → 77
    assert_eq!(grey(0, 255, 0), 150); // 150.45 → 150
    assert_eq!(grey(0, 0, 255), 28); // 28.05 → 28
    assert_eq!(grey(5, 0, 0), 2); // 1.5 → 2 (half up)
    assert_eq!(grey(1, 1, 1), 1);
}

#[test]
fn bt601_is_opencvs_fixed_point_and_keeps_grey_grey() {
    assert_eq!(BT601_WEIGHTS.iter().sum::<u32>(), 1 << 15);
    // 0.299·255 = 76.245 → 76; 0.587·255 = 149.685 → 150 (9798·255 = 2 498 490, + 2^14, >> 15 = 76.75 → 76).
    assert_eq!(grey_bt601(255, 0, 0), 76);
    assert_eq!(grey_bt601(0, 255, 0), 150);
    assert_eq!(grey_bt601(0, 0, 255), 29);
    // Where the 16-bit textbook weights (19595, 38470, 7471) round the other way: (0, 1, 201) is 23.5007 with
    // them (→ 24) and 23.4977 in OpenCV's 15-bit weights (→ 23), which OpenCV 5.0's cvtColor returns.
    assert_eq!(grey_bt601(0, 1, 201), 23);
    for v in 0..=255u8 {
        assert_eq!(grey_bt601(v, v, v), v, "weights summing to 2^15 keep (v, v, v) at v");
        assert_eq!(grey(v, v, v), v);
    }
}

#[test]
fn magnitude_is_rounded_sqrt_saturated() {
    // Every square up to well past saturation (64 771), against integer arithmetic; above that the clamp
    // makes the answer 255, checked up to the largest reachable square 2·1020².
    for s in 0..=70_000u32 {
        let mut r = 0u32;
        while (r + 1) * (r + 1) <= s {
            r += 1;
        }
        // round(√s) = r + 1 iff √s ≥ r + ½ iff 4s ≥ (2r + 1)² (never equal for integers).
        let rounded = if 4 * s > (2 * r + 1) * (2 * r + 1) { r + 1 } else { r };
        assert_eq!(magnitude_from_squared(s) as u32, rounded.min(255), "s = {s}");
    }
    assert!((70_000..=2 * 1020 * 1020).all(|s| magnitude_from_squared(s) == 255));
    assert_eq!(magnitude(1020, 1020), 255);
    assert_eq!(magnitude(-1020, 0), 255);
    assert_eq!(magnitude(3, 4), 5);
    assert_eq!(magnitude(1, 1), 1); // 1.414
    assert_eq!(magnitude(1, 2), 2); // 2.236
    assert_eq!(magnitude(180, 180), 255); // 254.56 → 255
    assert_eq!(magnitude(179, 180), 254); // 253.85 → 254
                                          // ksize 7's gradients: squares past 2^32 would wrap; clamping each gradient to 255 first cannot change a
                                          // saturated answer, and leaves an unsaturated one alone.
    assert_eq!(magnitude(163_200, -163_200), 255);
    assert_eq!(magnitude(0, -163_200), 255);
    assert_eq!(magnitude(254, 0), 254);
    assert_eq!(magnitude(255, 0), 255);
    assert_eq!(magnitude_l1(100, -100), 200);
    assert_eq!(magnitude_l1(200, -100), 255);
    assert_eq!(magnitude_l1(-163_200, 163_200), 255);
}

#[test]
fn report_arithmetic_truncates_and_wraps() {
    // Doubles, truncated: 0.30 + 0.59 + 0.11 is 0.99999999999999989 in binary, so (1, 1, 1) → 0.
    assert_eq!(grey_report(1, 1, 1), 0);
    assert_eq!(grey_report(2, 2, 2), 1);
    assert_eq!(grey_report(3, 3, 3), 3);
    assert_eq!(grey_report(255, 255, 255), 255);
    assert_eq!(grey_report(255, 0, 0), 76); // 76.5 truncated
                                            // Gradients wrap mod 256 before the magnitude: 300 → 44, 256 → 0, −260 → 4.
    assert_eq!(magnitude_report(300, 0), 44);
    assert_eq!(magnitude_report(256, 0), 0);
    assert_eq!(magnitude_report(0, -260), 4);
    // The magnitude truncates, and wraps above 255: √(2·255²) = 360.6 → 360 → 104.
    assert_eq!(magnitude_report(3, 3), 4); // 4.24
    assert_eq!(magnitude_report(255, 255), 104);
    assert_eq!(magnitude_report(200, 200), (282 - 256) as u8);
    assert_eq!(magnitude_report(180, 180), 254); // 254.56, truncated
    let report = Filter::report();
    assert_eq!(report.magnitude(255, 255), 104);
    assert_eq!(Filter::default().magnitude(255, 255), 255);
    assert_eq!(report.gradient_byte(-300), 44);
    assert_eq!(Filter::default().gradient_byte(-300), 255);
}

/// The full convolution of two tap lists (the polynomial product), as OpenCV builds its kernels.
fn convolve(a: &[i32], b: &[i32]) -> Vec<i32> {
    let mut out = vec![0; a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

/// OpenCV's `getDerivKernels(1, 0, ksize)` for ksize 3, 5, 7: the derivative is [-1 0 1] convolved with
/// [1 1] (ksize − 3) times, the smoothing [1 1] (ksize − 1) times; ksize 1 does not smooth.
#[test]
fn stencils_are_opencvs_kernels() {
    for ksize in [Ksize::K3, Ksize::K5, Ksize::K7] {
        let k = ksize as usize;
        let mut smooth = vec![1];
        let mut deriv = vec![-1, 0, 1];
        for _ in 0..k - 1 {
            smooth = convolve(&smooth, &[1, 1]);
        }
        for _ in 0..k - 3 {
            deriv = convolve(&deriv, &[1, 1]);
        }
        let st = Stencil::of(Operator::Sobel, ksize);
        assert_eq!((st.smooth(), st.deriv(), st.radius), (&smooth[..], &deriv[..], k / 2), "{ksize:?}");
    }
    let k1 = Stencil::of(Operator::Sobel, Ksize::K1);
    assert_eq!((k1.smooth(), k1.deriv()), (&[0, 1, 0][..], &[-1, 0, 1][..]));
    let scharr = Stencil::of(Operator::Scharr, Ksize::K3);
    assert_eq!((scharr.smooth(), scharr.deriv()), (&[3, 10, 3][..], &[-1, 0, 1][..]));
    // The 2-D taps: Gx's row i, column j is smooth[i]·deriv[j] (3×3 Sobel: [-1 0 1; -2 0 2; -1 0 1]).
    let st = Stencil::of(Operator::Sobel, Ksize::K3);
    let kx: Vec<i32> = (0..9).map(|t| st.x_tap(t / 3, t % 3)).collect();
    assert_eq!(kx, [-1, 0, 1, -2, 0, 2, -1, 0, 1]);
    // Bounds, and with them the integer widths.
    let bounds: Vec<i32> =
        [Ksize::K1, Ksize::K3, Ksize::K5, Ksize::K7].map(|k| Stencil::of(Operator::Sobel, k).bound()).to_vec();
    assert_eq!(bounds, [255, 1020, 12_240, 163_200]);
    assert_eq!(scharr.bound(), 4080);
    assert!(Stencil::of(Operator::Sobel, Ksize::K5).fits_i16() && !Stencil::of(Operator::Sobel, Ksize::K7).fits_i16());
}

/// The factoring the register-blocked GPU kernels use: smooth = [e c e] ⊛ [1 1]^L, deriv = [−1 0 1] ⊛ [1 1]^L.
#[test]
fn every_stencil_is_the_3x3_one_after_binomial_smoothing() {
    let stencils = [Ksize::K1, Ksize::K3, Ksize::K5, Ksize::K7].map(|k| Stencil::of(Operator::Sobel, k));
    for st in stencils.into_iter().chain([Stencil::of(Operator::Scharr, Ksize::K3)]) {
        let (e, c, levels) = st.factors();
        let (mut smooth, mut deriv) = (vec![e, c, e], vec![-1, 0, 1]);
        for _ in 0..levels {
            smooth = convolve(&smooth, &[1, 1]);
            deriv = convolve(&deriv, &[1, 1]);
        }
        assert_eq!((&smooth[..], &deriv[..]), (st.smooth(), st.deriv()), "{st:?}");
        // row16.cuh smooths two columns to a 32-bit add: U = [1 1]^L along ⊛ [1 1]^L down the grey, at most
        // 255·4^L, must fit a 16-bit half with nothing to carry into the other; and its words shrink from the
        // grey segment's (16 + 2r) − 8 to the 3×3 core's 18 − 8 by one a level, so L = 2(r − 1).
        assert!(255 * 4_i64.pow(levels as u32) <= u16::MAX as i64, "{st:?}");
        assert_eq!(levels, 2 * st.radius - 2, "{st:?}");
    }
    assert_eq!(Stencil::of(Operator::Sobel, Ksize::K7).factors(), (1, 2, 4));
    assert_eq!(Stencil::of(Operator::Sobel, Ksize::K1).factors(), (0, 1, 0));
}

/// OpenCV's `borderInterpolate` for BORDER_REFLECT_101: reflect until inside.
fn opencv_reflect101(mut p: isize, len: isize) -> usize {
    if len == 1 {
        return 0;
    }
    while p < 0 || p >= len {
        p = if p < 0 { -p } else { 2 * len - 2 - p };
    }
    p as usize
}

#[test]
fn border_resolution_at_any_distance() {
    use Border::*;
    assert_eq!(Replicate.resolve(-1, 5), Some(0));
    assert_eq!(Replicate.resolve(-7, 5), Some(0));
    assert_eq!(Replicate.resolve(5, 5), Some(4));
    assert_eq!(Zero.resolve(-3, 5), None);
    assert_eq!(Zero.resolve(5, 5), None);
    assert_eq!(Reflect101.resolve(-1, 5), Some(1));
    assert_eq!(Reflect101.resolve(5, 5), Some(3));
    assert_eq!(Reflect101.resolve(-3, 2), Some(1), "-3 → 3 → -1 → 1");
    assert_eq!(Reflect101.resolve(-1, 1), Some(0));
    for n in 1..12usize {
        for i in -40..40isize {
            assert_eq!(Reflect101.resolve(i, n), Some(opencv_reflect101(i, n as isize)), "i = {i}, n = {n}");
            assert_eq!(Replicate.resolve(i, n), Some(i.clamp(0, n as isize - 1) as usize));
        }
    }
}

#[test]
fn direction_is_within_3e7_rad_of_atan2_for_every_3x3_gradient() {
    let mut worst = 0f64;
    for x in -1020..=1020 {
        for y in -1020..=1020 {
            let e = (direction(x, y) as f64 - (y as f64).atan2(x as f64)).abs();
            worst = worst.max(e);
        }
    }
    assert!(worst <= 3e-7, "worst {worst:e} rad");
    assert_eq!(direction(0, 0), 0.0);
    assert_eq!(direction(-5, 0), std::f32::consts::PI, "(−π, π]: the negative x axis is +π");
    assert_eq!(direction(0, 7), std::f32::consts::FRAC_PI_2);
    assert_eq!(direction(0, -7), -std::f32::consts::FRAC_PI_2);
    // ksize 7's range, sampled.
    let mut s = 1u64;
    for _ in 0..200_000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let (x, y) = ((s % 326_401) as i32 - 163_200, ((s >> 20) % 326_401) as i32 - 163_200);
        assert!((direction(x, y) as f64 - (y as f64).atan2(x as f64)).abs() <= 3e-7, "({x}, {y})");
    }
}

#[test]
fn canny_directions_split_at_22_5_and_67_5_degrees() {
    // tan 22.5° = 0.41421: (100, 41) is below it, (100, 42) above; tan 67.5° = 2.41421: (100, 241) below.
    assert_eq!(direction4(100, 41), 0);
    assert_eq!(direction4(100, 42), 1);
    assert_eq!(direction4(100, -42), 3);
    assert_eq!(direction4(-100, -42), 1);
    assert_eq!(direction4(100, 241), 1);
    assert_eq!(direction4(100, 242), 2);
    assert_eq!(direction4(0, 5), 2);
    assert_eq!(direction4(5, 0), 0);
    assert_eq!(direction4(0, 0), 1, "no gradient: neither test passes, as in OpenCV");
    assert_eq!(direction4(163_200, 163_200), 1, "no overflow at ksize 7's range");
}

#[test]
fn filters_refuse_what_they_cannot_be() {
    let scharr5 = Filter { operator: Operator::Scharr, ksize: Ksize::K5, ..Filter::default() };
    assert_eq!(Filter::resolve(scharr5, None), Err(Conflict::ScharrKsize(Ksize::K5)));
    let report7 = Filter { ksize: Ksize::K7, ..Filter::report() };
    assert_eq!(Filter::resolve(report7, None), Err(Conflict::ReportKsize(Ksize::K7)));
    assert_eq!(
        Filter::resolve(Filter::report(), Some(Border::Replicate)),
        Err(Conflict::ReportBorder(Border::Replicate))
    );
    let cli = |c: Conflict| c.message(|o, v| format!("--{o} {v}"));
    assert_eq!(
        cli(Conflict::ReportBorder(Border::Replicate)),
        "--compat report uses the report's zero border; leave out --border replicate"
    );
    assert!(cli(Conflict::ScharrKsize(Ksize::K7)).starts_with("--operator scharr is 3×3 only; leave out --ksize 7"));
    assert_eq!(Filter::resolve(Filter::report(), None), Ok(Filter::report()));
    assert_eq!(Filter::all().count(), 5 * 3 + 2);
}
