//! Banded processing gives exactly the bytes of one pass (CPU path; the GPU path is in tests/gpu.rs):
//! random images, every filter (stencil × border, and the report's arithmetic), artificially small bands
//! with halos of the stencil's radius.

use cuda_sobel::bands::banded;
use cuda_sobel::cpu;
use cuda_sobel::sobel::Filter;
use image::RgbImage;
use proptest::prelude::*;

fn scalar_on(width: usize, height: usize, rgb: &[u8], filter: Filter) -> Vec<u8> {
    let img = RgbImage::from_raw(width as u32, height as u32, rgb.to_vec()).unwrap();
    cpu::scalar::sobel(&img, filter).into_raw()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn banded_equals_one_pass(
        (w, h, bytes) in (1usize..=60, 1usize..=60).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), proptest::collection::vec(any::<u8>(), w * h * 3))
        }),
        band_rows in 1usize..=7,
        filter in prop::sample::select(Filter::all().collect::<Vec<_>>()),
    ) {
        let whole = scalar_on(w, h, &bytes, filter);
        let pieces = banded(w, h, &bytes, band_rows, filter.stencil().radius, |bw, bh, band| {
            Ok::<_, ()>(scalar_on(bw, bh, band, filter))
        }).unwrap();
        prop_assert_eq!(whole, pieces);
    }
}
