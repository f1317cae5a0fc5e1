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
        let pieces = banded(w, h, &bytes, band_rows, filter.stencil().radius, (1, 1), |bw, bh, band| {
            Ok::<_, ()>(scalar_on(bw, bh, band, filter))
        }).unwrap();
        prop_assert_eq!(whole, pieces);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Two planes of 4-byte values (Gx and Gy as int32): each stitched on its own.
    #[test]
    fn banded_gradient_planes_equal_one_pass(
        (w, h, bytes) in (1usize..=30, 1usize..=30).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), proptest::collection::vec(any::<u8>(), w * h * 3))
        }),
        band_rows in 1usize..=5,
        filter in prop::sample::select(Filter::all().collect::<Vec<_>>()),
    ) {
        let planes = |w: usize, h: usize, rgb: &[u8]| {
            let img = RgbImage::from_raw(w as u32, h as u32, rgb.to_vec()).unwrap();
            let st = cpu::scalar::sobel_stages(&img, filter);
            st.gx.iter().chain(&st.gy).flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()
        };
        let whole = planes(w, h, &bytes);
        let pieces = banded(w, h, &bytes, band_rows, filter.stencil().radius, (2, 4), |bw, bh, band| {
            Ok::<_, ()>(planes(bw, bh, band))
        }).unwrap();
        prop_assert_eq!(whole, pieces);
    }
}
