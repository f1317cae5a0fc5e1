//! Golden file: the reference output for `imgs_in/512x512.png` (replicate border) is checked in as
//! `tests/data/512x512_sobel.png`. It changes only on purpose: run with `UPDATE_GOLDEN=1` to rewrite it,
//! and review the picture before committing.

use std::path::Path;

use cuda_sobel::sobel::Border;
use cuda_sobel::{cpu, image_io};

const INPUT: &str = "imgs_in/512x512.png";
const GOLDEN: &str = "tests/data/512x512_sobel.png";

#[test]
fn scalar_output_matches_the_golden_png() {
    let rgb = image_io::decode_rgb(Path::new(INPUT)).expect("test image decodes");
    let out = cpu::scalar::sobel(&rgb, Border::Replicate);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        image_io::write_png(Path::new(GOLDEN), out.width(), out.height(), out.as_raw(), image::ExtendedColorType::L8)
            .unwrap();
    }
    let golden = image::open(GOLDEN).expect("golden PNG present (UPDATE_GOLDEN=1 writes it)").into_luma8();
    assert_eq!(golden.dimensions(), out.dimensions());
    let differing = golden.as_raw().iter().zip(out.as_raw()).filter(|(a, b)| a != b).count();
    assert_eq!(differing, 0, "{differing} pixels differ from {GOLDEN}");
    // The rayon variant is held to the same file.
    assert_eq!(cpu::rayon::sobel(&rgb, Border::Replicate).as_raw(), golden.as_raw());
}
