//! Property tests: on arbitrary images of arbitrary (odd, tiny, wide, tall) sizes, every CPU variant
//! produces exactly the reference's bytes, for every filter (operator × ksize × border × arithmetic, and each
//! grey and norm) and every output (edges, gradients as i16/i32/f32, direction, Canny's directions).

use cuda_sobel::cpu;
use cuda_sobel::sobel::{Filter, Grey, Norm, Number, Output};
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

    #[test]
    fn rayon_equals_scalar_for_every_grey_norm_and_output(
        rgb in image_strategy(),
        filter in prop::sample::select(Filter::all().filter(|f| f.compat == cuda_sobel::sobel::Compat::Exact).collect::<Vec<_>>()),
        grey in prop::sample::select(Grey::ALL.to_vec()),
        norm in prop::sample::select(vec![Norm::L2, Norm::L1]),
        output in prop::sample::select(vec![
            Output::Edges,
            Output::Gradients(Number::I16),
            Output::Gradients(Number::I32),
            Output::Gradients(Number::F32),
            Output::Direction,
            Output::Direction4,
            Output::Sectors(Number::I32),
        ]),
    ) {
        let filter = Filter { grey, norm, ..filter };
        // 16-bit gradients only where the stencil's bound fits (ksize 7 takes i32 or f32).
        prop_assume!(output != Output::Gradients(Number::I16) || filter.stencil().fits_i16());
        let stages = cpu::scalar::sobel_stages(&rgb, filter);
        let src = cpu::rayon::PackedRgb::new(rgb.as_raw(), rgb.width() as usize, rgb.height() as usize);
        prop_assert_eq!(cpu::rayon::output_bytes(&src, filter, output), cpu::scalar::output_bytes(&stages, filter, output));
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
