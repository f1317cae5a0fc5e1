//! GPU execution: every GPU variant, every filter (operator × border × arithmetic) and n ∈ {1, 2, 3, 4,
//! 8, 64} in both gpu-n1 mappings produce exactly `cpu-scalar`'s bytes, on the `imgs_in` images, on the
//! literal images of tests/literal.rs and on random images of awkward sizes. Without a GPU
//! each test prints why it skipped and passes; on the GPU machine they run for real (scripts/gpu-check.sh),
//! where `CUDA_SOBEL_REQUIRE_GPU=1` turns a skip into a failure.

mod common;

use std::io::Write;

use cuda_sobel::gpu::{variants, Gpu};
use cuda_sobel::pipeline::{Mapping, Variant, N1};
use cuda_sobel::sobel::{Border, Compat, Filter, Operator};
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

/// Deterministic pseudo-random images (xorshift), so a failure can be reproduced.
use cuda_sobel::generate::noise as random_image;

const NS: [u32; 6] = [1, 2, 3, 4, 8, 64];

/// Runs every GPU variant (gpu-n1 for every n, both mappings) with every filter and compares each with
/// the reference.
fn check_all_variants(gpu: &Gpu, rgb: &RgbImage, label: &str) {
    for filter in Filter::all() {
        check_variants(gpu, rgb, filter, label);
    }
}

fn check_variants(gpu: &Gpu, rgb: &RgbImage, filter: Filter, label: &str) {
    let reference = cpu::scalar::sobel(rgb, filter);
    let mut runs: Vec<Variant> = Variant::ALL.iter().copied().filter(|v| v.is_gpu() && v.n1().is_none()).collect();
    for mapping in [Mapping::Coalesced, Mapping::Report] {
        runs.extend(NS.iter().map(|&n| Variant::GpuN1(N1 { n, mapping })));
    }
    for variant in runs {
        let run = variants::run(gpu, variant, rgb, filter, false, 1)
            .unwrap_or_else(|e| panic!("{label} {filter:?} {variant:?}: {e}"));
        let differing = run.output.iter().zip(reference.as_raw()).filter(|(a, b)| a != b).count();
        assert_eq!(
            (run.output.len(), differing),
            (reference.as_raw().len(), 0),
            "{label} {}×{} {filter:?} {variant:?}: pixels differ",
            rgb.width(),
            rgb.height(),
        );
    }
}

#[test]
fn gpu_variants_match_the_literal_images() {
    let Some(gpu) = gpu_or_skip("gpu_variants_match_the_literal_images") else { return };
    // tests/literal.rs pins cpu-scalar's bytes on these by hand; here every GPU variant must equal it.
    check_all_variants(&gpu, &common::grey_rgb(4, 3, &common::SCHARR_GREY), "scharr-literal");
    check_all_variants(&gpu, &common::report_colours(), "report-colours");
    check_all_variants(&gpu, &common::grey_rgb(3, 3, &[0, 0, 0, 0, 0, 255, 0, 255, 255]), "wrap-literal");
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
        // gpu-strip's aligned form marches bands of at least 4 rows, odd bands upwards: last bands of
        // 1, 2 and 3 rows in either direction, and an 8192-wide image whose bands are 8 rows (last 3).
        (16, 9),
        (16, 10),
        (16, 13),
        (32, 14),
        (48, 15),
        (8192, 1003),
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
fn streamed_gpu_strip_equals_the_reference() {
    use cuda_sobel::gpu::staged::{run_streamed_in_bands, STREAMED_FROM_BYTES};
    let Some(gpu) = gpu_or_skip("streamed_gpu_strip_equals_the_reference") else { return };
    // Staged through pinned buffers, overlapped bands on three streams: tiny bands, so that band edges
    // land everywhere.
    for (w, h, seed) in [(97, 61, 4), (33, 5, 5), (1, 9, 6)] {
        let rgb = random_image(w, h, seed);
        for filter in Filter::all() {
            let reference = cpu::scalar::sobel(&rgb, filter);
            for band_rows in [1, 2, 3, 7] {
                let s = run_streamed_in_bands(&gpu, rgb.as_raw(), w as usize, h as usize, filter, band_rows).unwrap();
                assert!(s.output == reference.as_raw().as_slice(), "{w}×{h} {filter:?} in bands of {band_rows}");
            }
        }
    }
    // And an image large enough that the single-image command streams it, through the variant runner.
    let rgb = random_image(4801, (STREAMED_FROM_BYTES / (3 * 4801) + 7) as u32, 7);
    assert!(variants::streams(Variant::GpuStrip, &rgb));
    for filter in [Filter::default(), Filter { border: Border::Reflect101, ..Filter::default() }] {
        let run = variants::run(&gpu, Variant::GpuStrip, &rgb, filter, true, 10).unwrap();
        assert!(run.output == cpu::rayon::sobel(&rgb, filter).into_raw(), "{filter:?}: streamed 4801-wide image");
        assert!(run.compute_ms > 0.0 && run.memory_ms > 0.0);
    }
}

/// The streamed paths' pinned memory: buffers cut from one region start on a page, are zeroed, do not
/// overlap, and copy to the device and back intact.
#[test]
fn a_pinned_region_gives_zeroed_page_aligned_buffers_that_copy() {
    use cuda_sobel::gpu::pinned::PinnedRegion;
    let Some(gpu) = gpu_or_skip("a_pinned_region_gives_zeroed_page_aligned_buffers_that_copy") else { return };
    let sizes = [3 * 4097 + 1, 1, 4096, 5 << 20, 7];
    let mut region = PinnedRegion::new(&gpu.ctx, &sizes).unwrap();
    let mut buffers = region.buffers();
    for (i, (buffer, &size)) in buffers.iter_mut().zip(&sizes).enumerate() {
        assert_eq!(buffer.len(), size);
        assert_eq!(buffer.as_ptr() as usize % 4096, 0, "buffer {i} starts on a page");
        assert!(buffer.iter().all(|&b| b == 0), "buffer {i} is zeroed");
        buffer.iter_mut().enumerate().for_each(|(j, b)| *b = (i * 31 + j * 7) as u8);
    }
    for (i, buffer) in buffers.iter_mut().enumerate() {
        let on_device = gpu.stream.clone_htod(&buffer[..]).unwrap();
        // From page-locked memory the copy is asynchronous (see `PinnedRegion`'s doc): wait before reuse.
        gpu.stream.synchronize().unwrap();
        buffer.fill(0);
        gpu.stream.memcpy_dtoh(&on_device, &mut buffer[..]).unwrap();
        gpu.stream.synchronize().unwrap();
        assert!(buffer.iter().enumerate().all(|(j, &b)| b == (i * 31 + j * 7) as u8), "buffer {i} after a round trip");
    }
}

#[test]
fn banded_gpu_runs_equal_one_pass() {
    let Some(gpu) = gpu_or_skip("banded_gpu_runs_equal_one_pass") else { return };
    // Bands far smaller than the GPU needs, so that band edges land everywhere (rows 1, 2, 3, 7).
    for (w, h, seed) in [(97, 61, 1), (64, 33, 2), (33, 5, 3)] {
        let rgb = random_image(w, h, seed);
        for filter in Filter::all() {
            let reference = cpu::scalar::sobel(&rgb, filter);
            for variant in Variant::ALL.iter().map(|v| v.with_n1(N1::new(3))).filter(|v| v.is_gpu()) {
                for band_rows in [1, 2, 3, 7] {
                    let out = variants::run_banded(&gpu, variant, &rgb, filter, false, 1, band_rows).unwrap().output;
                    assert!(
                        out == reference.as_raw().as_slice(),
                        "{w}×{h} {filter:?} {} in bands of {band_rows}",
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
        // Every border for every image; operator and arithmetic take turns (50 images each).
        let operator = Operator::ALL[i as usize % 2];
        let compat = [Compat::Exact, Compat::Report][i as usize / 2 % 2];
        for border in Border::ALL {
            let filter = Filter { operator, border, compat, ..Filter::default() };
            let reference = cpu::scalar::sobel(&rgb, filter);
            let n1 = N1 { n: 1 + (i as u32 % 64), mapping: [Mapping::Coalesced, Mapping::Report][i as usize / 4 % 2] };
            for variant in Variant::ALL.iter().map(|v| v.with_n1(n1)).filter(|v| v.is_gpu()) {
                let out = variants::run(&gpu, variant, &rgb, filter, false, 1).unwrap().output;
                assert!(out == reference.as_raw().as_slice(), "#{i}: {w}×{h} {filter:?} {} {n1:?}", variant.name());
            }
        }
    }
}

#[test]
fn dp4a_grey_is_exact_for_every_rgb_triple() {
    let Some(gpu) = gpu_or_skip("dp4a_grey_is_exact_for_every_rgb_triple") else { return };
    // The exact build's dp4a grey, and the report build's double-precision grey (row16.cuh's grey4 in
    // both), against the Rust definitions, on all 2^24 triples.
    for filter in [Filter::default(), Filter::report()] {
        let out = {
            let g = gpu.for_filter(filter).unwrap();
            g.kernels.selftest().unwrap().grey(&g.stream).unwrap()
        };
        for (i, &g) in out.iter().enumerate() {
            let (r, gr, b) = ((i >> 16) as u8, (i >> 8) as u8, i as u8);
            assert_eq!(g, filter.grey(r, gr, b), "{:?}: RGB ({r}, {gr}, {b})", filter.compat);
        }
    }
}

#[test]
fn approximate_sqrt_magnitude_is_exact_for_every_square() {
    let Some(gpu) = gpu_or_skip("approximate_sqrt_magnitude_is_exact_for_every_square") else { return };
    // Every Gx² + Gy² that can occur is at most 2·1020² = 2 080 800.
    let n = 2 * 1020 * 1020 + 1;
    let out = gpu.kernels.selftest().unwrap().magnitude(&gpu.stream, n).unwrap();
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
    let out = variants::run(&gpu, Variant::GpuFused, &rgb, Filter::with_border(Border::Zero), false, 1).unwrap().output;
    assert!(out.contains(&255));
}

#[test]
fn strip_on_caller_memory_runs_a_batch_in_one_launch() {
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    let Some(gpu) = gpu_or_skip("strip_on_caller_memory_runs_a_batch_in_one_launch") else { return };
    // What the Python package does with a PyTorch or CuPy batch: raw pointers and the caller's stream.
    let (w, h, n) = (37u32, 29u32, 3u32);
    let images: Vec<RgbImage> = (0..n).map(|i| random_image(w, h, 11 + i as u64)).collect();
    let packed: Vec<u8> = images.iter().flat_map(|im| im.as_raw().iter().copied()).collect();
    let caller = gpu.ctx.new_stream().unwrap(); // "another library's" stream
    let rgb = caller.clone_htod(&packed).unwrap();
    let mut out = caller.alloc_zeros::<u8>((w * h * n) as usize).unwrap();
    for filter in Filter::all() {
        {
            let (rgb_ptr, _r) = rgb.device_ptr(&caller);
            let (out_ptr, _w) = out.device_ptr_mut(&caller);
            let a = variants::RawImages {
                rgb: rgb_ptr,
                out: out_ptr,
                width: w,
                height: h,
                images: n,
                stream: caller.cu_stream() as u64,
            };
            // SAFETY: both buffers are this context's and sized for the batch; the stream is live.
            unsafe { variants::strip_on_device(&gpu, a, filter) }.unwrap();
        }
        let got = caller.clone_dtoh(&out).unwrap();
        for (i, im) in images.iter().enumerate() {
            let expected = cpu::scalar::sobel(im, filter).into_raw();
            let part = &got[i * (w * h) as usize..(i + 1) * (w * h) as usize];
            assert!(part == expected.as_slice(), "image {i} of the batch, {filter:?}");
        }
    }
}
