//! Tiny literal images with expectations worked out by hand from the definitions in `src/sobel.rs`
//! (each border mode, corners included). Every CPU variant is held to them.

mod common;

use common::grey_rgb;
use cuda_sobel::cpu;
use cuda_sobel::sobel::Border;

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
    gx: [i16; 12],
    gy: [i16; 12],
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
        let stages = cpu::scalar::sobel_stages(&rgb, e.border);
        assert_eq!(stages.grey, GREY, "{:?}: grey of R = G = B is unchanged", e.border);
        assert_eq!(stages.gx, e.gx, "{:?}: Gx", e.border);
        assert_eq!(stages.gy, e.gy, "{:?}: Gy", e.border);
        assert_eq!(stages.magnitude, e.magnitude, "{:?}: scalar magnitude", e.border);
        assert_eq!(cpu::rayon::sobel(&rgb, e.border).as_raw(), &e.magnitude, "{:?}: rayon magnitude", e.border);
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
        assert_eq!(cpu::scalar::sobel(&rgb, border).as_raw(), &expected, "{border:?} scalar");
        assert_eq!(cpu::rayon::sobel(&rgb, border).as_raw(), &expected, "{border:?} rayon");
    }
}

#[test]
fn single_pixel_has_no_gradient() {
    let rgb = grey_rgb(1, 1, &[200]);
    for border in Border::ALL {
        assert_eq!(cpu::scalar::sobel(&rgb, border).as_raw(), &[0], "{border:?}");
        assert_eq!(cpu::rayon::sobel(&rgb, border).as_raw(), &[0], "{border:?}");
    }
}

#[test]
fn colour_goes_through_the_grey_weights() {
    // Pure red, green, blue → 77, 150, 28 (76.5 rounds up; 150.45 and 28.05 round down).
    let rgb = image::RgbImage::from_raw(3, 1, vec![255, 0, 0, 0, 255, 0, 0, 0, 255]).unwrap();
    assert_eq!(cpu::scalar::sobel_stages(&rgb, Border::Replicate).grey, [77, 150, 28]);
    // Replicate: Gx(1) = 4·(28 − 77) = −196 → 196; Gx(0) = 4·(150 − 77) = 292 → 255; Gx(2) = 4·(28 − 150) → 255.
    assert_eq!(cpu::scalar::sobel(&rgb, Border::Replicate).as_raw(), &[255, 196, 255]);
    assert_eq!(cpu::rayon::sobel(&rgb, Border::Replicate).as_raw(), &[255, 196, 255]);
}
