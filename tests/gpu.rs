//! GPU execution: every GPU variant, every filter (stencil — Sobel 1, 3, 5, 7 and Scharr — × border, and the
//! report's arithmetic), every output (the edges in both norms and both greys, Gx and Gy as int16/int32/float32,
//! the direction and Canny's directions) and n ∈ {1, 2, 3, 4, 8, 64} in both gpu-n1 mappings produce exactly
//! `cpu-scalar`'s bytes, on the `imgs_in` images, on the literal images of tests/literal.rs and on random
//! images of awkward sizes (narrower and shorter than the stencil included), whole and in bands. Without a GPU
//! each test prints why it skipped and passes; on the GPU machine they run for real (scripts/gpu-check.sh),
//! where `CUDA_SOBEL_REQUIRE_GPU=1` turns a skip into a failure.

mod common;

use common::gpu_or_skip;
use cuda_sobel::canny::Canny;
use cuda_sobel::gpu::{variants, Gpu};
use cuda_sobel::pipeline::{Mapping, Variant, N1};
use cuda_sobel::sobel::{Border, Compat, Filter, Grey, Ksize, Norm, Number, Operator, Output};
use cuda_sobel::{cpu, image_io};
use image::RgbImage;

/// Deterministic pseudo-random images (xorshift), so a failure can be reproduced.
use cuda_sobel::generate::noise as random_image;

const NS: [u32; 6] = [1, 2, 3, 4, 8, 64];

/// Every GPU variant, gpu-n1 for every n in both mappings.
fn all_gpu_variants() -> Vec<Variant> {
    let mut runs: Vec<Variant> = Variant::EDGES.iter().copied().filter(|v| v.is_gpu() && v.n1().is_none()).collect();
    for mapping in [Mapping::Coalesced, Mapping::Report] {
        runs.extend(NS.iter().map(|&n| Variant::GpuN1(N1 { n, mapping })));
    }
    runs
}

/// Every (filter, output) pair the tests hold every variant to: each stencil and border writing the edges, each
/// stencil writing every other output (replicate border), OpenCV's grey and the L1 norm, the report's arithmetic.
fn cases() -> Vec<(Filter, Output)> {
    let mut cases: Vec<(Filter, Output)> = Filter::all().map(|f| (f, Output::Edges)).collect();
    for f in Filter::all().filter(|f| f.border == Border::Reflect101) {
        let int = Number::integer_for(&f.stencil());
        for output in [Output::Gradients(int), Output::Gradients(Number::F32), Output::Direction, Output::Direction4] {
            cases.push((f, output));
        }
        cases.push((Filter { grey: Grey::Bt601, norm: Norm::L1, ..f }, Output::Edges));
        // Canny's words (what its kernels read), in both norms.
        if f.operator == Operator::Sobel && matches!(f.ksize, Ksize::K3 | Ksize::K5 | Ksize::K7) {
            for norm in [Norm::L1, Norm::L2] {
                cases.push(Canny::new(0.0, 0.0, norm, f.ksize).unwrap().gradients(f));
            }
        }
    }
    cases
}

/// Runs every GPU variant on every case and compares each output's bytes with the reference's.
fn check_all_variants(gpu: &Gpu, rgb: &RgbImage, label: &str) {
    for (filter, output) in cases() {
        check_variants(gpu, rgb, filter, output, &all_gpu_variants(), label);
    }
}

fn check_variants(gpu: &Gpu, rgb: &RgbImage, filter: Filter, output: Output, runs: &[Variant], label: &str) {
    let reference = cpu::scalar::output_bytes(&cpu::scalar::sobel_stages(rgb, filter), filter, output);
    for &variant in runs {
        let run = variants::run(gpu, variant, rgb, (filter, output), false, 1)
            .unwrap_or_else(|e| panic!("{label} {filter:?} {output:?} {variant:?}: {e}"));
        let differing = run.output.iter().zip(&reference).filter(|(a, b)| a != b).count();
        assert_eq!(
            (run.output.len(), differing),
            (reference.len(), 0),
            "{label} {}×{} {filter:?} {output:?} {variant:?}: bytes differ",
            rgb.width(),
            rgb.height(),
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn gpu_variants_match_the_literal_images() {
    let Some(gpu) = gpu_or_skip("gpu_variants_match_the_literal_images") else { return };
    // tests/literal.rs pins cpu-scalar's bytes on these by hand; here every GPU variant must equal it.
    check_all_variants(&gpu, &common::grey_rgb(4, 3, &common::SCHARR_GREY), "scharr-literal");
    check_all_variants(&gpu, &common::report_colours(), "report-colours");
    check_all_variants(&gpu, &common::grey_rgb(3, 3, &[0, 0, 0, 0, 0, 255, 0, 255, 255]), "wrap-literal");
    check_all_variants(&gpu, &common::grey_rgb(7, 5, &common::KSIZE_GREY), "ksize-literal");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn gpu_variants_match_scalar_on_awkward_sizes() {
    let Some(gpu) = gpu_or_skip("gpu_variants_match_scalar_on_awkward_sizes") else { return };
    // Widths around the 16-pixel groups of gpu-vec16 and gpu-strip (15, 16, 17, 32, 48) exercise both
    // their aligned and general forms and every border column case; images narrower and shorter than a 7×7
    // stencil (1×1, 2×9, 9×2, 3×3) its reflections beyond the image.
    let sizes = [
        (1, 1),
        (2, 9),
        (9, 2),
        (3, 3),
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
    // One large one, the edges only.
    let rgb = random_image(4097, 2049, 77);
    for filter in Filter::all() {
        check_variants(&gpu, &rgb, filter, Output::Edges, &all_gpu_variants(), "4097x2049");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn gpu_variants_match_scalar_on_the_report_images() {
    let Some(gpu) = gpu_or_skip("gpu_variants_match_scalar_on_the_report_images") else { return };
    for name in ["512x512", "1024x512", "1024x1024", "2048x1024"] {
        let rgb = image_io::decode_rgb(format!("imgs_in/{name}.png").as_ref()).expect("imgs_in image decodes");
        check_all_variants(&gpu, &rgb, name);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn streamed_gpu_strip_equals_the_reference() {
    use cuda_sobel::gpu::staged::{run_streamed_in_bands, STREAMED_FROM_BYTES};
    let Some(gpu) = gpu_or_skip("streamed_gpu_strip_equals_the_reference") else { return };
    // Staged through pinned buffers, overlapped bands on three streams: tiny bands, so that band edges
    // land everywhere (and bands shorter than a 7×7 stencil's halo).
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
    for ksize in Ksize::ALL {
        let filter = Filter { ksize, border: Border::Reflect101, ..Filter::default() };
        let run = variants::run(&gpu, Variant::GpuStrip, &rgb, (filter, Output::Edges), true, 10).unwrap();
        assert!(run.output == cpu::rayon::sobel(&rgb, filter).into_raw(), "{filter:?}: streamed 4801-wide image");
        assert!(run.compute_ms > 0.0 && run.memory_ms > 0.0);
    }
}

/// The streamed paths' pinned memory: buffers cut from one region start on a page, are zeroed, do not
/// overlap, and copy to the device and back intact.
#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
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
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn banded_gpu_runs_equal_one_pass() {
    let Some(gpu) = gpu_or_skip("banded_gpu_runs_equal_one_pass") else { return };
    // Bands far smaller than the GPU needs, so that band edges land everywhere (rows 1, 2, 3, 7: fewer than a
    // 7×7 stencil's halo of 3 too); every output, its planes stitched band by band.
    for (w, h, seed) in [(97, 61, 1), (64, 33, 2), (33, 5, 3)] {
        let rgb = random_image(w, h, seed);
        for (filter, output) in cases() {
            let reference = cpu::scalar::output_bytes(&cpu::scalar::sobel_stages(&rgb, filter), filter, output);
            for variant in Variant::EDGES.iter().map(|v| v.with_n1(N1::new(3))).filter(|v| v.is_gpu()) {
                for band_rows in [1, 2, 3, 7] {
                    let out = variants::run_banded(&gpu, variant, &rgb, (filter, output), false, 1, band_rows)
                        .unwrap()
                        .output;
                    assert!(
                        out == reference,
                        "{w}×{h} {filter:?} {output:?} {} in bands of {band_rows}",
                        variant.name()
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
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
    let stencils = [(Operator::Sobel, Ksize::K3), (Operator::Sobel, Ksize::K5), (Operator::Sobel, Ksize::K7)]
        .into_iter()
        .chain([(Operator::Sobel, Ksize::K1), (Operator::Scharr, Ksize::K3)])
        .collect::<Vec<_>>();
    for i in 0..200 {
        let side = |r: u64| (3000f64.powf((r % 10_000) as f64 / 10_000.0)).round().max(1.0) as u32;
        let (w, h) = (side(next()), side(next()));
        let rgb = random_image(w, h, 1000 + i);
        // Every border for every image; the stencil takes turns (40 images each), and every fifth image the
        // report's arithmetic (3×3 only) instead of the exact one.
        let (operator, ksize) = stencils[i as usize % stencils.len()];
        let compat = if i % 5 == 4 && ksize == Ksize::K3 { Compat::Report } else { Compat::Exact };
        let borders = if compat == Compat::Report { &[Border::Zero][..] } else { &Border::ALL[..] };
        for &border in borders {
            let filter = Filter { operator, ksize, border, compat, ..Filter::default() };
            let reference = cpu::scalar::sobel(&rgb, filter);
            let n1 = N1 { n: 1 + (i as u32 % 64), mapping: [Mapping::Coalesced, Mapping::Report][i as usize / 4 % 2] };
            for variant in Variant::EDGES.iter().map(|v| v.with_n1(n1)).filter(|v| v.is_gpu()) {
                let out = variants::run(&gpu, variant, &rgb, (filter, Output::Edges), false, 1).unwrap().output;
                assert!(out == reference.as_raw().as_slice(), "#{i}: {w}×{h} {filter:?} {} {n1:?}", variant.name());
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn dp4a_grey_is_exact_for_every_rgb_triple() {
    let Some(gpu) = gpu_or_skip("dp4a_grey_is_exact_for_every_rgb_triple") else { return };
    // The dp4a grey in both weights (BT.601's split into high and low bytes), and the report build's
    // double-precision grey, against the Rust definitions, on all 2^24 triples.
    for filter in [Filter::default(), Filter { grey: Grey::Bt601, ..Filter::default() }, Filter::report()] {
        let out = {
            let g = gpu.for_filter(filter).unwrap();
            g.kernels.selftest().unwrap().grey(&g.stream).unwrap()
        };
        for (i, &g) in out.iter().enumerate() {
            let (r, gr, b) = ((i >> 16) as u8, (i >> 8) as u8, i as u8);
            assert_eq!(g, filter.grey(r, gr, b), "{filter:?}: RGB ({r}, {gr}, {b})");
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn approximate_sqrt_magnitude_is_exact_for_every_square() {
    let Some(gpu) = gpu_or_skip("approximate_sqrt_magnitude_is_exact_for_every_square") else { return };
    // Every Gx² + Gy² that can occur after the gradients are clamped to 255 is at most 2·255², and below
    // 2·1020² without the clamp.
    let n = 2 * 1020 * 1020 + 1;
    let out = gpu.kernels.selftest().unwrap().magnitude(&gpu.stream, n).unwrap();
    for (s, &m) in out.iter().enumerate() {
        assert_eq!(m, cuda_sobel::sobel::magnitude_from_squared(s as u32), "s = {s}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn the_direction_is_the_cpus_to_the_bit_for_every_3x3_gradient() {
    let Some(gpu) = gpu_or_skip("the_direction_is_the_cpus_to_the_bit_for_every_3x3_gradient") else { return };
    let m = 1020;
    let out = gpu.kernels.selftest().unwrap().direction(&gpu.stream, m).unwrap();
    let side = 2 * m + 1;
    for (i, &d) in out.iter().enumerate() {
        let (gx, gy) = ((i as i32 % side) - m, (i as i32 / side) - m);
        let cpu = cuda_sobel::sobel::direction(gx, gy);
        assert_eq!(d.to_bits(), cpu.to_bits(), "({gx}, {gy}): GPU {d}, CPU {cpu}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn gpu_variants_saturate_on_extreme_edges() {
    let Some(gpu) = gpu_or_skip("gpu_variants_saturate_on_extreme_edges") else { return };
    // Black/white stripes and checks give the largest gradients each stencil has (163 200 at 7×7): the
    // magnitude must clamp at 255, not wrap, and the gradients must not overflow.
    let rgb = RgbImage::from_fn(67, 45, |x, y| {
        let v = if (x / 2 + y) % 2 == 0 || x % 7 == 0 { 255 } else { 0 };
        image::Rgb([v, v, v])
    });
    check_all_variants(&gpu, &rgb, "stripes");
    let out =
        variants::run(&gpu, Variant::GpuFused, &rgb, (Filter::with_border(Border::Zero), Output::Edges), false, 1)
            .unwrap()
            .output;
    assert!(out.contains(&255));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn strip_on_caller_memory_runs_a_batch_in_one_launch() {
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    let Some(gpu) = gpu_or_skip("strip_on_caller_memory_runs_a_batch_in_one_launch") else { return };
    // What the Python package does with a PyTorch or CuPy batch: raw pointers and the caller's stream; for
    // gradients, Gx's plane for the whole batch, then Gy's.
    let (w, h, n) = (37u32, 29u32, 3u32);
    let images: Vec<RgbImage> = (0..n).map(|i| random_image(w, h, 11 + i as u64)).collect();
    let packed: Vec<u8> = images.iter().flat_map(|im| im.as_raw().iter().copied()).collect();
    let caller = gpu.ctx.new_stream().unwrap(); // "another library's" stream
    let rgb = caller.clone_htod(&packed).unwrap();
    let px = (w * h) as usize;
    for (filter, output) in cases() {
        let mut out = caller.alloc_zeros::<u8>(px * n as usize * output.bytes_per_pixel()).unwrap();
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
            unsafe { variants::strip_on_device(&gpu, a, (filter, output)) }.unwrap();
        }
        let got = caller.clone_dtoh(&out).unwrap();
        let planes = if let Output::Gradients(_) = output { 2 } else { 1 };
        let plane = px * output.bytes_per_pixel() / planes; // one image's plane, bytes
        for (i, im) in images.iter().enumerate() {
            let expected = cpu::scalar::output_bytes(&cpu::scalar::sobel_stages(im, filter), filter, output);
            for p in 0..planes {
                let part = &got[p * n as usize * plane + i * plane..][..plane];
                assert!(part == &expected[p * plane..(p + 1) * plane], "image {i} plane {p}, {filter:?} {output:?}");
            }
        }
    }
}
