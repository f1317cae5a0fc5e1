//! Tiny literal images with expectations worked out by hand from the definitions in `core/src/sobel.rs`
//! (each border mode, corners included; Sobel and Scharr; the exact arithmetic and `--compat report`).
//! Every CPU variant is held to them; `tests/gpu.rs` holds the GPU variants to the same images.

mod common;

use common::{grey_rgb, report_colours, SCHARR_GREY};
use cuda_sobel::cpu;
use cuda_sobel::sobel::{Border, Compat, Filter, Operator};

/// 4×3, grey values:
/// ```text
///  10  50 200   0
///  30  90 255  20
///   0   0 100 250
/// ```
const W: u32 = 4;
const H: u32 = 3;
const GREY: [u8; 12] = [10, 50, 200, 0, 30, 90, 255, 20, 0, 0, 100, 250];

struct Expected {
    border: Border,
    gx: [i32; 12],
    gy: [i32; 12],
    magnitude: [u8; 12],
}

// Worked example, replicate, pixel (0,0): the neighbourhood is rows [10 10 50], [10 10 50], [30 30 90], so
// Gx = (50−10) + 2·(50−10) + (90−30) = 180, Gy = (30+2·30+90) − (10+2·10+50) = 100, √(180²+100²) = 205.9 → 206.
// Zero, pixel (0,0): rows [0 0 0], [0 10 50], [0 30 90]: Gx = 2·50 + 90 = 190, Gy = 2·30 + 90 = 150 → 242.
// Reflect101, pixel (0,0): column −1 mirrors column 1 and row −1 mirrors row 1, so Gx = Gy = 0.
const EXPECTED: [Expected; 3] = [
    Expected {
        border: Border::Replicate,
        gx: [180, 795, -220, -835, 160, 740, 60, -520, 60, 525, 680, 215],
        gy: [100, 155, 170, 115, -80, -210, 0, 650, -180, -365, -170, 535],
        magnitude: [206, 255, 255, 255, 179, 255, 60, 255, 190, 255, 255, 255],
    },
    Expected {
        border: Border::Zero,
        gx: [190, 605, -170, -655, 230, 740, 60, -810, 90, 425, 430, -455],
        gy: [150, 465, 620, 295, -70, -210, 0, 400, -150, -465, -620, -295],
        magnitude: [242, 255, 255, 255, 240, 255, 60, 255, 175, 255, 255, 255],
    },
    Expected {
        border: Border::Reflect101,
        gx: [0, 830, -240, 0, 0, 740, 60, 0, 0, 650, 360, 0],
        gy: [0, 0, 0, 0, -120, -210, 0, 300, 0, 0, 0, 0],
        magnitude: [0, 255, 240, 0, 120, 255, 60, 255, 0, 255, 255, 0],
    },
];

#[test]
fn gradients_and_magnitude_on_a_4x3_image_for_every_border() {
    let rgb = grey_rgb(W, H, &GREY);
    for e in &EXPECTED {
        let f = Filter::with_border(e.border);
        let stages = cpu::scalar::sobel_stages(&rgb, f);
        assert_eq!(stages.grey, GREY, "{:?}: grey of R = G = B is unchanged", e.border);
        assert_eq!(stages.gx, e.gx, "{:?}: Gx", e.border);
        assert_eq!(stages.gy, e.gy, "{:?}: Gy", e.border);
        assert_eq!(stages.magnitude, e.magnitude, "{:?}: scalar magnitude", e.border);
        assert_eq!(cpu::rayon::sobel(&rgb, f).as_raw(), &e.magnitude, "{:?}: rayon magnitude", e.border);
    }
}

#[test]
fn one_row_image() {
    // 3×1, grey [0 20 60]. Replicate: rows above and below repeat it, so Gy = 0 and Gx = 4·(right − left).
    // Zero: rows above and below are 0, so Gx = 2·(right − left). Reflect101 of a 1-pixel-high image repeats
    // the row; columns mirror, so the end pixels see equal left and right neighbours.
    let rgb = grey_rgb(3, 1, &[0, 20, 60]);
    for (border, expected) in
        [(Border::Replicate, [80, 240, 160]), (Border::Zero, [40, 120, 40]), (Border::Reflect101, [0, 240, 0])]
    {
        let f = Filter::with_border(border);
        assert_eq!(cpu::scalar::sobel(&rgb, f).as_raw(), &expected, "{border:?} scalar");
        assert_eq!(cpu::rayon::sobel(&rgb, f).as_raw(), &expected, "{border:?} rayon");
    }
}

#[test]
fn single_pixel_has_no_gradient() {
    let rgb = grey_rgb(1, 1, &[200]);
    for f in Filter::all() {
        assert_eq!(cpu::scalar::sobel(&rgb, f).as_raw(), &[0], "{f:?}");
        assert_eq!(cpu::rayon::sobel(&rgb, f).as_raw(), &[0], "{f:?}");
    }
}

#[test]
fn colour_goes_through_the_grey_weights() {
    // Pure red, green, blue → 77, 150, 28 (76.5 rounds up; 150.45 and 28.05 round down).
    let rgb = image::RgbImage::from_raw(3, 1, vec![255, 0, 0, 0, 255, 0, 0, 0, 255]).unwrap();
    let f = Filter::default();
    assert_eq!(cpu::scalar::sobel_stages(&rgb, f).grey, [77, 150, 28]);
    // Replicate: Gx(1) = 4·(28 − 77) = −196 → 196; Gx(0) = 4·(150 − 77) = 292 → 255; Gx(2) = 4·(28 − 150) → 255.
    assert_eq!(cpu::scalar::sobel(&rgb, f).as_raw(), &[255, 196, 255]);
    assert_eq!(cpu::rayon::sobel(&rgb, f).as_raw(), &[255, 196, 255]);
}

/// Checks every stage of cpu-scalar and the output of cpu-rayon against literal expectations.
fn check(rgb: &image::RgbImage, f: Filter, grey: &[u8], gx: &[i32], gy: &[i32], magnitude: &[u8]) {
    let stages = cpu::scalar::sobel_stages(rgb, f);
    assert_eq!(stages.grey, grey, "{f:?}: grey");
    assert_eq!(stages.gx, gx, "{f:?}: Gx");
    assert_eq!(stages.gy, gy, "{f:?}: Gy");
    assert_eq!(stages.magnitude, magnitude, "{f:?}: scalar magnitude");
    assert_eq!(cpu::rayon::sobel(rgb, f).as_raw(), magnitude, "{f:?}: rayon magnitude");
}

#[test]
fn scharr_on_a_4x3_image_for_every_border() {
    // Worked example, replicate, pixel (0,0): rows [10 10 12], [10 10 12], [9 9 10], so
    // Gx = 3·(12−10) + 10·(12−10) + 3·(10−9) = 29, Gy = (3·9 + 10·9 + 3·10) − (3·10 + 10·10 + 3·12) = −19,
    // √(29² + 19²) = 34.67 → 35. Zero, pixel (3,0): rows [0 0 0], [15 11 0], [14 20 0]:
    // Gx = 10·(0−15) + 3·(0−14) = −192, Gy = 3·14 + 10·20 = 242, √(192² + 242²) = 308.9 → saturates at 255.
    let rgb = grey_rgb(W, H, &SCHARR_GREY);
    let cases = [
        Expected {
            border: Border::Replicate,
            gx: [29, 80, 17, -34, 16, 68, 109, 57, 3, 28, 82, 57],
            gy: [-19, -26, 11, 114, -38, -64, -69, -5, -19, -38, -80, -119],
            magnitude: [35, 84, 20, 119, 41, 93, 129, 57, 19, 47, 115, 132],
        },
        Expected {
            border: Border::Zero,
            gx: [150, 65, 20, -192, 160, 68, 109, -212, 110, 25, 70, -132],
            gy: [120, 169, 230, 242, -32, -64, -69, -8, -120, -169, -230, -242],
            magnitude: [192, 181, 231, 255, 163, 93, 129, 212, 163, 171, 240, 255],
        },
        Expected {
            border: Border::Reflect101,
            gx: [0, 80, 50, 0, 0, 68, 109, 0, 0, 40, 100, 0],
            gy: [0, 0, 0, 0, -44, -64, -69, -26, 0, 0, 0, 0],
            magnitude: [0, 80, 50, 0, 44, 93, 129, 26, 0, 40, 100, 0],
        },
    ];
    for e in cases {
        let f = Filter { operator: Operator::Scharr, border: e.border, compat: Compat::Exact, ..Filter::default() };
        check(&rgb, f, &SCHARR_GREY, &e.gx, &e.gy, &e.magnitude);
    }
}

#[test]
fn report_compat_truncates_grey_and_wraps_gradients() {
    // Grey, (byte)(0.30·R + 0.59·G + 0.11·B) in doubles: red 76.5 → 76 (exact mode: 77); (2,2,2) is
    // 1.9999999999999998 in doubles → 1 (exact mode: 2); green 150.45 → 150; blue 28.05 → 28;
    // (200,10,50): 60 + 5.9 + 5.5 = 71.4 → 71.
    // Pixel (0,0), zero border: rows [0 0 0], [0 76 1], [0 150 100]: Gx = 2·1 + 100 = 102,
    // Gy = 2·150 + 100 = 400, stored as (byte)400 = 144; (int)√(102² + 144²) = (int)176.5 = 176.
    // Pixel (3,0): rows [0 0 0], [255 0 0], [28 71 0]: Gx = −2·255 − 28 = −538 → (byte)538 = 26,
    // Gy = 28 + 2·71 = 170; (int)√(26² + 170²) = (int)171.98 = 171.
    // Pixel (1,1): Gx = −65, Gy = −333 → 65 and (byte)333 = 77; (int)√(65² + 77²) = (int)100.77 = 100.
    let rgb = report_colours();
    check(
        &rgb,
        Filter::report(),
        &[76, 1, 255, 0, 150, 100, 28, 71],
        &[102, 236, -31, -538, 201, -65, -59, -311],
        &[400, 378, 227, 170, -153, -333, -511, -255],
        &[176, 9, 229, 171, 252, 100, 5, 4],
    );
    // The same image in exact arithmetic (zero border too) saturates where the report wrapped: pixel
    // (0,0) is √(102² + 400²) = 412.8 → 255 (report: 176); pixel (2,0), Gx = −31, Gy = 227, wraps in
    // neither and is 229.1 → 229 in both.
    let exact = cpu::scalar::sobel(&rgb, Filter::with_border(Border::Zero));
    assert_eq!(exact.as_raw()[..4], [255, 255, 229, 255]);
}

#[test]
fn report_compat_magnitude_wraps_above_255() {
    // Grey 3×3 (R = G = B; 0 and 255 are exact in doubles), zero border:
    //   0   0   0
    //   0   0 255
    //   0 255 255
    // Pixel (1,0): Gx = 255, Gy = 255 → (int)√(2·255²) = (int)360.6 = 360 → (byte) 104.
    // Pixel (1,1): Gx = Gy = 765 → (byte)765 = 253 each → (int)√(2·253²) = 357 → (byte) 101.
    // Pixel (2,0): Gx = 0, Gy = 510 → (byte)510 = 254 → 254.
    let grey = [0, 0, 0, 0, 0, 255, 0, 255, 255];
    let rgb = grey_rgb(3, 3, &grey);
    check(
        &rgb,
        Filter::report(),
        &grey,
        &[0, 255, 0, 255, 765, -255, 510, 765, -510],
        &[0, 255, 510, 255, 765, 765, 0, -255, -510],
        &[0, 104, 254, 104, 101, 103, 254, 103, 103],
    );
    let exact = cpu::scalar::sobel(&rgb, Filter::with_border(Border::Zero));
    assert_eq!(exact.as_raw(), &[0, 255, 255, 255, 255, 255, 255, 255, 255]);
}
