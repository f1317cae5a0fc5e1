//! Golden files: the reference output for `imgs_in/512x512.png` with the default filter (Sobel, replicate
//! border), with Scharr, and with `--compat report` is checked in under `tests/data/`. They change only on
//! purpose: run with `UPDATE_GOLDEN=1` to rewrite them, and review the pictures before committing.

use std::path::Path;

use cuda_sobel::sobel::{Filter, Operator};
use cuda_sobel::{cpu, image_io};

const INPUT: &str = "imgs_in/512x512.png";

#[test]
fn scalar_output_matches_the_golden_pngs() {
    let rgb = image_io::decode_rgb(Path::new(INPUT)).expect("test image decodes");
    let goldens = [
        (Filter::default(), "tests/data/512x512_sobel.png"),
        (Filter { operator: Operator::Scharr, ..Filter::default() }, "tests/data/512x512_scharr.png"),
        (Filter::report(), "tests/data/512x512_report.png"),
    ];
    for (filter, golden_path) in goldens {
        let out = cpu::scalar::sobel(&rgb, filter);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            let (w, h) = out.dimensions();
            image_io::write_png(Path::new(golden_path), w, h, out.as_raw(), image::ExtendedColorType::L8).unwrap();
        }
        let golden = image::open(golden_path).expect("golden PNG present (UPDATE_GOLDEN=1 writes it)").into_luma8();
        assert_eq!(golden.dimensions(), out.dimensions());
        let differing = golden.as_raw().iter().zip(out.as_raw()).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "{filter:?}: {differing} pixels differ from {golden_path}");
        // The rayon variant is held to the same file.
        assert_eq!(cpu::rayon::sobel(&rgb, filter).as_raw(), golden.as_raw(), "{filter:?}: rayon");
    }
}
