//! GPU execution: every GPU variant, every border mode and n ∈ {1, 2, 3, 4, 8, 64} produce exactly
//! `cpu-scalar`'s bytes, on the `imgs_in` images and on random images of awkward sizes. Without a GPU
//! each test prints why it skipped and passes; on the GPU machine they run for real (scripts/gpu-check.sh),
//! where `CUDA_SOBEL_REQUIRE_GPU=1` turns a skip into a failure.

use std::io::Write;

use cuda_sobel::gpu::{variants, Gpu};
use cuda_sobel::pipeline::Variant;
use cuda_sobel::sobel::Border;
use cuda_sobel::{cpu, image_io};
use image::RgbImage;

fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::open() {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some() => panic!("{test}: GPU required: {e}"),
        Err(e) => {
            // Written to the real stderr (not the test harness's capture) so CI logs show the reason.
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {e}");
            None
        }
    }
}

/// Deterministic pseudo-random image (xorshift), so a failure can be reproduced.
fn random_image(width: u32, height: u32, seed: u64) -> RgbImage {
    let mut s = seed | 1;
    let bytes = (0..width as usize * height as usize * 3)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect();
    RgbImage::from_raw(width, height, bytes).unwrap()
}

const NS: [u32; 6] = [1, 2, 3, 4, 8, 64];

/// Runs every GPU variant (gpu-n1 for every n) and compares each with the reference.
fn check_all_variants(gpu: &Gpu, rgb: &RgbImage, label: &str) {
    for border in Border::ALL {
        let reference = cpu::scalar::sobel(rgb, border);
        let mut runs: Vec<(Variant, u32)> =
            Variant::ALL.iter().filter(|v| v.is_gpu() && **v != Variant::GpuN1).map(|&v| (v, 1)).collect();
        runs.extend(NS.iter().map(|&n| (Variant::GpuN1, n)));
        for (variant, n) in runs {
            let run = variants::run(gpu, variant, rgb, border, n, false, 1)
                .unwrap_or_else(|e| panic!("{label} {border:?} {} n={n}: {e}", variant.name()));
            let differing = run.output.iter().zip(reference.as_raw()).filter(|(a, b)| a != b).count();
            assert_eq!(
                (run.output.len(), differing),
                (reference.as_raw().len(), 0),
                "{label} {}×{} border {border:?} {} n={n}: pixels differ",
                rgb.width(),
                rgb.height(),
                variant.name()
            );
        }
    }
}

#[test]
fn gpu_variants_match_scalar_on_awkward_sizes() {
    let Some(gpu) = gpu_or_skip("gpu_variants_match_scalar_on_awkward_sizes") else { return };
    // Widths around the 16-pixel groups of gpu-vec16 and gpu-strip (15, 16, 17, 32, 48) exercise both
    // their aligned and general forms and every border column case.
    let sizes = [
        (1, 1),
        (1, 37),
        (37, 1),
        (2, 2),
        (15, 9),
        (16, 16),
        (17, 5),
        (32, 3),
        (48, 70),
        (31, 17),
        (1025, 3),
        (3, 1025),
        (4097, 2049),
        (2048, 1024),
    ];
    for (i, &(w, h)) in sizes.iter().enumerate() {
        check_all_variants(&gpu, &random_image(w, h, 0x9E37_79B9 + i as u64), "random");
    }
}

#[test]
fn gpu_variants_match_scalar_on_the_report_images() {
    let Some(gpu) = gpu_or_skip("gpu_variants_match_scalar_on_the_report_images") else { return };
    for name in ["512x512", "1024x512", "1024x1024", "2048x1024"] {
        let rgb = image_io::decode_rgb(format!("imgs_in/{name}.png").as_ref()).expect("imgs_in image decodes");
        check_all_variants(&gpu, &rgb, name);
    }
}

#[test]
fn banded_gpu_runs_equal_one_pass() {
    let Some(gpu) = gpu_or_skip("banded_gpu_runs_equal_one_pass") else { return };
    // Bands far smaller than the GPU needs, so that band edges land everywhere (rows 1, 2, 3, 7).
    for (w, h, seed) in [(97, 61, 1), (64, 33, 2), (33, 5, 3)] {
        let rgb = random_image(w, h, seed);
        for border in Border::ALL {
            let reference = cpu::scalar::sobel(&rgb, border);
            for variant in Variant::ALL.iter().copied().filter(|v| v.is_gpu()) {
                for band_rows in [1, 2, 3, 7] {
                    let out = variants::run_banded(&gpu, variant, &rgb, border, 3, false, 1, band_rows).unwrap().output;
                    assert!(
                        out == reference.as_raw().as_slice(),
                        "{w}×{h} {border:?} {} in bands of {band_rows}",
                        variant.name()
                    );
                }
            }
        }
    }
}

#[test]
fn two_hundred_random_sizes_every_variant_every_border() {
    let Some(gpu) = gpu_or_skip("two_hundred_random_sizes_every_variant_every_border") else { return };
    // Sizes log-uniform in 1..=3000 per side (so most are small and odd, some large), deterministic.
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for i in 0..200 {
        let side = |r: u64| (3000f64.powf((r % 10_000) as f64 / 10_000.0)).round().max(1.0) as u32;
        let (w, h) = (side(next()), side(next()));
        let rgb = random_image(w, h, 1000 + i);
        for border in Border::ALL {
            let reference = cpu::scalar::sobel(&rgb, border);
            for variant in Variant::ALL.iter().copied().filter(|v| v.is_gpu()) {
                let n = 1 + (i as u32 % 64);
                let out = variants::run(&gpu, variant, &rgb, border, n, false, 1).unwrap().output;
                assert!(out == reference.as_raw().as_slice(), "#{i}: {w}×{h} {border:?} {} n={n}", variant.name());
            }
        }
    }
}

#[test]
fn dp4a_grey_is_exact_for_every_rgb_triple() {
    let Some(gpu) = gpu_or_skip("dp4a_grey_is_exact_for_every_rgb_triple") else { return };
    let out = gpu.selftest_grey().unwrap();
    for (i, &g) in out.iter().enumerate() {
        let (r, gr, b) = ((i >> 16) as u8, (i >> 8) as u8, i as u8);
        assert_eq!(g, cuda_sobel::sobel::grey(r, gr, b), "RGB ({r}, {gr}, {b})");
    }
}

#[test]
fn approximate_sqrt_magnitude_is_exact_for_every_square() {
    let Some(gpu) = gpu_or_skip("approximate_sqrt_magnitude_is_exact_for_every_square") else { return };
    // Every Gx² + Gy² that can occur is at most 2·1020² = 2 080 800.
    let n = 2 * 1020 * 1020 + 1;
    let out = gpu.selftest_magnitude(n).unwrap();
    for (s, &m) in out.iter().enumerate() {
        assert_eq!(m, cuda_sobel::sobel::magnitude_from_squared(s as u32), "s = {s}");
    }
}

#[test]
fn gpu_variants_saturate_on_extreme_edges() {
    let Some(gpu) = gpu_or_skip("gpu_variants_saturate_on_extreme_edges") else { return };
    // Black/white stripes and checks give |G| up to 1020: the magnitude must clamp at 255, not wrap.
    let rgb = RgbImage::from_fn(67, 45, |x, y| {
        let v = if (x / 2 + y) % 2 == 0 || x % 7 == 0 { 255 } else { 0 };
        image::Rgb([v, v, v])
    });
    check_all_variants(&gpu, &rgb, "stripes");
    let out = variants::run(&gpu, Variant::GpuFused, &rgb, Border::Zero, 1, false, 1).unwrap().output;
    assert!(out.contains(&255));
}
