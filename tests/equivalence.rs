//! Property tests: on arbitrary images of arbitrary (odd, tiny, wide, tall) sizes, every CPU variant
//! produces exactly the reference's bytes, for every filter (operator × border × arithmetic).

use cuda_sobel::cpu;
use cuda_sobel::sobel::Filter;
use image::RgbImage;
use proptest::prelude::*;

fn image_strategy() -> impl Strategy<Value = RgbImage> {
    (1u32..=300, 1u32..=300).prop_flat_map(|(w, h)| {
        proptest::collection::vec(any::<u8>(), (w * h * 3) as usize)
            .prop_map(move |bytes| RgbImage::from_raw(w, h, bytes).unwrap())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn rayon_equals_scalar(rgb in image_strategy(), filter in prop::sample::select(Filter::all().collect::<Vec<_>>())) {
        let reference = cpu::scalar::sobel(&rgb, filter);
        let fast = cpu::rayon::sobel(&rgb, filter);
        prop_assert_eq!(reference.as_raw(), fast.as_raw());
    }
}

#[test]
fn rayon_equals_scalar_on_strong_edges() {
    // Random bytes rarely produce the extreme gradients; a 0/255 checkerboard and stripes do (saturation).
    for (w, h) in [(17, 9), (64, 3), (5, 130)] {
        let rgb = RgbImage::from_fn(w, h, |x, y| {
            let v = if (x + y) % 2 == 0 || x % 5 == 0 { 255 } else { 0 };
            image::Rgb([v, v / 2, 255 - v])
        });
        for f in Filter::all() {
            assert_eq!(cpu::scalar::sobel(&rgb, f).as_raw(), cpu::rayon::sobel(&rgb, f).as_raw(), "{f:?}");
        }
    }
}
