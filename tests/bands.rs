//! Banded processing gives exactly the bytes of one pass (CPU path; the GPU path is in tests/gpu.rs):
//! random images, every border mode, artificially small bands.

use cuda_sobel::bands::banded;
use cuda_sobel::cpu;
use cuda_sobel::sobel::Border;
use image::RgbImage;
use proptest::prelude::*;

fn scalar_on(width: usize, height: usize, rgb: &[u8], border: Border) -> Vec<u8> {
    let img = RgbImage::from_raw(width as u32, height as u32, rgb.to_vec()).unwrap();
    cpu::scalar::sobel(&img, border).into_raw()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn banded_equals_one_pass(
        (w, h, bytes) in (1usize..=60, 1usize..=60).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), proptest::collection::vec(any::<u8>(), w * h * 3))
        }),
        band_rows in 1usize..=7,
        border in prop::sample::select(Border::ALL.to_vec()),
    ) {
        let whole = scalar_on(w, h, &bytes, border);
        let pieces = banded(w, h, &bytes, band_rows, |bw, bh, band| {
            Ok::<_, ()>(scalar_on(bw, bh, band, border))
        }).unwrap();
        prop_assert_eq!(whole, pieces);
    }
}
