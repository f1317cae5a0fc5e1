//! The filter command (`cuda_sobel filter --kernel SPEC`): the kernels' definitions worked by hand on literal
//! images, every CPU and GPU strategy held to the scalar reference on random images of awkward sizes (narrower and
//! shorter than the filter included) for every border and every kind of kernel, and the command's files and
//! refusals. GPU tests skip without a GPU, saying why (`CUDA_SOBEL_REQUIRE_GPU=1` makes that a failure).

mod common;

use common::gpu_or_skip;
use cuda_sobel::conv::{self, ConvKernel, Kind, Planes};
use cuda_sobel::gpu::conv::{ConvGpu, Tuning};
use cuda_sobel::sobel::Border;
use cuda_sobel::variant::Variant;

fn plane(width: usize, height: usize, data: &[u8]) -> Planes {
    Planes { width, height, planes: 1, data: data.to_vec() }
}

fn scalar(img: &Planes, spec: &str, border: Border) -> Vec<u8> {
    conv::filter_scalar(img, &ConvKernel::parse(spec).unwrap(), border).data
}

#[test]
fn the_named_kernels_are_the_documented_matrices() {
    let b = ConvKernel::parse("box:3").unwrap();
    assert_eq!((b.radius, b.taps.clone(), b.kind), (1, vec![1; 9], Kind::Smooth { divisor: 9 }));
    let g = ConvKernel::parse("gaussian:5").unwrap();
    assert_eq!(&g.taps[..5], &[1, 4, 6, 4, 1]);
    assert_eq!(g.taps[12], 36);
    assert_eq!(g.kind, Kind::Smooth { divisor: 256 });
    assert!(!g.wide() && ConvKernel::parse("gaussian:15").unwrap().wide(), "2^28·255 needs 64 bits");
    let s = ConvKernel::parse("scharr:5").unwrap();
    #[rustfmt::skip]
    let want = vec![
        -3, 0, 0, 0, 3,
         0, 0, 0, 0, 0,
        -10, 0, 0, 0, 10,
         0, 0, 0, 0, 0,
        -3, 0, 0, 0, 3,
    ];
    assert_eq!((s.taps.clone(), s.kind, s.nonzero_taps()), (want, Kind::Gradient, 6));
    let (column, row) = s.factors().expect("rank one");
    let product: Vec<i32> = column.iter().flat_map(|c| row.iter().map(move |r| c * r)).collect();
    assert_eq!(product, s.taps, "column ⊗ row is the kernel");
    let sobel = ConvKernel::parse("sobel:3").unwrap();
    assert_eq!(sobel.taps, vec![-1, 0, 1, -2, 0, 2, -1, 0, 1]);
    let laplacian = ConvKernel::from_text("l", "0 1 0\n1 -4 1\n0 1 0\ndivisor 1").unwrap();
    assert_eq!(laplacian.factors(), None, "rank two");
    // The rows gpu-strip's ring keeps (CONV_STRIDE): the dilated Scharr's −r, 0, +r; every row where a tap sits next
    // to the centre row, or where the kernel has no factors.
    for (d, stride) in [(3, 1), (5, 2), (7, 3), (9, 4), (15, 7)] {
        assert_eq!(ConvKernel::parse(&format!("scharr:{d}")).unwrap().ring_stride(), stride, "scharr:{d}");
    }
    for k in ["box:3", "box:15", "gaussian:7", "sobel:1", "sobel:5", "sobel:7"] {
        assert_eq!(ConvKernel::parse(k).unwrap().ring_stride(), 1, "{k}");
    }
    let even_rows = ConvKernel::from_text("m", "1 0 2 0 1\n0 0 0 0 0\n2 0 4 0 2\n0 0 0 0 0\n1 0 2 0 1").unwrap();
    assert_eq!(even_rows.ring_stride(), 2, "a smoothing kernel on rows −2, 0, +2");
    assert_eq!(laplacian.ring_stride(), 1, "rank two: no ring");
}

#[test]
fn literal_images_worked_by_hand() {
    // One pixel of 100: replicate and reflect101 see 100 everywhere; the zero border sees it once:
    // box:3 → (100 + 4) / 9 = 11.
    let one = plane(1, 1, &[100]);
    assert_eq!(scalar(&one, "box:3", Border::Replicate), [100]);
    assert_eq!(scalar(&one, "box:3", Border::Reflect101), [100]);
    assert_eq!(scalar(&one, "box:3", Border::Zero), [11]);
    // A row 0 90 180, box:3, replicate: every column sum is three times one row's.
    // x=0: 3·(0 + 0 + 90) = 270 → (270 + 4) / 9 = 30; x=1: 3·270·… = 810 → 90; x=2: 3·(90 + 180 + 180) = 1350 → 150.
    assert_eq!(scalar(&plane(3, 1, &[0, 90, 180]), "box:3", Border::Replicate), [30, 90, 150]);
    // Reflect101: x=0 sees 90 0 90 → 3·180 = 540 → 60; x=2 sees 90 180 90 → 1080 → 120.
    assert_eq!(scalar(&plane(3, 1, &[0, 90, 180]), "box:3", Border::Reflect101), [60, 90, 120]);
    // Gaussian:3 taps 1 2 1 ⊗ 1 2 1 / 16, one row 0 160 0 (zero border): centre 2·160·2 = 640 → 40; the sides 320
    // → 20.
    assert_eq!(scalar(&plane(3, 1, &[0, 160, 0]), "gaussian:3", Border::Zero), [20, 40, 20]);
    // scharr:5 on a 5×5 image whose last two columns are 10: at the centre Gx = 3·10 + 10·10 + 3·10 = 160 (column +2),
    // Gy = 0 (every row alike): 160. At (0, 0), replicate: Gx reads columns −2 → 0 and +2 → 0: 0.
    let step: Vec<u8> = (0..25).map(|i| if i % 5 >= 3 { 10 } else { 0 }).collect();
    let out = scalar(&plane(5, 5, &step), "scharr:5", Border::Replicate);
    assert_eq!((out[12], out[0], out[2 * 5 + 1]), (160, 0, 160));
    // A file kernel: the identity shifted one to the right, divisor 1: each pixel takes its right neighbour.
    let shift = ConvKernel::from_text("shift", "0 0 1").unwrap();
    assert_eq!(conv::filter_scalar(&plane(3, 1, &[1, 2, 3]), &shift, Border::Replicate).data, [2, 3, 3]);
}

#[test]
fn bad_kernels_are_refused_in_one_line() {
    for (spec, words) in [
        ("box:4", "odd"),
        ("box:17", "to 15"),
        ("gaussian:0", "odd"),
        ("scharr:1", "from 3"),
        ("sobel:9", "1, 3, 5 or 7"),
        ("nonsense", "no such file"),
    ] {
        let e = ConvKernel::parse(spec).unwrap_err().to_string();
        assert!(e.contains(words) && !e.contains('\n'), "{spec}: {e}");
    }
    for (text, words) in [
        ("1 2", "odd"),
        ("1 2 3\n1 2", "2 taps"),
        ("1 -1 0", "sum to 0"),
        ("1 x 1", "not a row"),
        ("gradient\n1 0 -1\ndivisor 2", "no divisor"),
        ("", "no rows"),
    ] {
        let e = ConvKernel::from_text("k.txt", text).unwrap_err().to_string();
        assert!(e.contains("k.txt") && e.contains(words), "{text:?}: {e}");
    }
}

/// Kernels of every kind: smoothing and gradient, radius 0 to 7, 64-bit sums, rank one and not.
fn kernels() -> Vec<ConvKernel> {
    let mut k: Vec<ConvKernel> =
        ["box:1", "box:3", "box:15", "gaussian:7", "gaussian:15", "scharr:3", "scharr:9", "sobel:7"]
            .iter()
            .map(|s| ConvKernel::parse(s).unwrap())
            .collect();
    k.push(ConvKernel::from_text("laplacian", "0 1 0\n1 -4 1\n0 1 0\ndivisor 1").unwrap());
    k.push(ConvKernel::from_text("skew", "1 2 3 0 -1\n").unwrap()); // 1×5 padded to 5×5, sum 5
    k.push(ConvKernel::from_text("emboss", "gradient\n-2 -1 0\n-1 1 1\n0 1 2").unwrap());
    // Rank one with taps so large (15 × 15 of 2^20) that even the column sums need 64 bits.
    let row = vec!["1048576"; 15].join(" ");
    k.push(ConvKernel::from_text("huge", &vec![row; 15].join("\n")).unwrap());
    k
}

/// Random images: tiny ones (smaller than every filter), odd ones and one wider than a block of gpu-block.
/// (256, 70): gpu-strip's aligned rows inside and its shifted form at the top and bottom bands in one launch.
const SIZES: [(usize, usize); 9] = [(1, 1), (2, 3), (7, 1), (1, 9), (13, 11), (33, 17), (64, 5), (256, 70), (1100, 40)];

fn random(w: usize, h: usize, planes: usize, seed: u64) -> Planes {
    let img = cuda_sobel::generate::noise(w as u32, (h * planes) as u32, seed);
    Planes { width: w, height: h, planes, data: img.as_raw().iter().step_by(3).copied().collect() }
}

#[test]
fn cpu_rayon_equals_the_reference_everywhere() {
    for (n, k) in kernels().iter().enumerate() {
        for (m, &(w, h)) in SIZES.iter().enumerate() {
            for border in Border::ALL {
                let img = random(w, h, 1 + (m % 2) * 2, (n * 31 + m) as u64);
                assert_eq!(
                    cuda_sobel::cpu::rayon::filter(&img, k, border),
                    conv::filter_scalar(&img, k, border),
                    "{} {w}×{h} {border:?}",
                    k.name
                );
            }
        }
    }
}

/// `CUDA_SOBEL_TEST_STRATEGIES=gpu-strip,gpu-block` limits the every-strategy test to those (on the GPU machine, to
/// recheck one kernel file in seconds; unset, every strategy runs).
fn chosen(s: Variant) -> bool {
    std::env::var("CUDA_SOBEL_TEST_STRATEGIES").map_or(true, |v| v.split(',').any(|n| n == s.name()))
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn every_gpu_strategy_equals_the_reference_for_every_kernel_size_and_border() {
    let Some(gpu) = gpu_or_skip("every_gpu_strategy_equals_the_reference_for_every_kernel_size_and_border") else {
        return;
    };
    let conv = ConvGpu::new(gpu);
    let mut failures = Vec::new();
    for (n, k) in kernels().iter().enumerate() {
        for s in Variant::KERNELS.into_iter().filter(|s| s.is_gpu() && chosen(*s)) {
            if s.needs_rank_one() && k.factors().is_none() {
                let e = conv.prepare(k, s, Tuning::default()).err().expect("refused").to_string();
                assert!(e.contains("column ⊗ row"), "{e}");
                continue;
            }
            for (m, &(w, h)) in SIZES.iter().enumerate() {
                for border in Border::ALL {
                    let img = random(w, h, 1 + (m % 2) * 2, (n * 31 + m) as u64);
                    let want = conv::filter_scalar(&img, k, border);
                    match conv.run(&img, k, s, border) {
                        Ok(got) if got == want => {}
                        Ok(_) => failures.push(format!("{} {} {w}×{h} {border:?}: bytes differ", s.name(), k.name)),
                        Err(e) => failures.push(format!("{} {} {w}×{h}: {e}", s.name(), k.name)),
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn the_studies_tunings_compute_the_same_bytes() {
    let Some(gpu) = gpu_or_skip("the_studies_tunings_compute_the_same_bytes") else { return };
    let conv = ConvGpu::new(gpu);
    let tunings = [
        (Variant::GpuLocal, Tuning { block: Some((8, 4)), tile_loaders: Some(1), ..Tuning::default() }),
        (Variant::GpuLocal, Tuning { block: Some((8, 4)), tile_loaders: Some(30), ..Tuning::default() }),
        (Variant::GpuLocal, Tuning { local_predefined: true, two_pass: Some(true), ..Tuning::default() }),
        (Variant::GpuConstant, Tuning { block: Some((8, 4)), two_pass: Some(false), ..Tuning::default() }),
        (Variant::GpuPredefined, Tuning { two_pass: Some(true), ..Tuning::default() }),
        (Variant::GpuStrip, Tuning { strip_columns: Some(8), ..Tuning::default() }),
        // A box takes 8 columns on images this small by itself (conv_strip::build_for); 16 is its large images'.
        (Variant::GpuStrip, Tuning { strip_columns: Some(16), strip_rows: Some(5), ..Tuning::default() }),
        // Images this small get bands of one row (conv_strip::rows_for): marches of several rows, the ring turned
        // more than once, bands ending inside a turn.
        (Variant::GpuStrip, Tuning { strip_rows: Some(2), ..Tuning::default() }),
        (Variant::GpuStrip, Tuning { strip_rows: Some(17), ..Tuning::default() }),
    ];
    // 1104 wide: a box's bands of several warps of strips, which share their halo (conv_strip.cu, 30 strips a warp).
    for k in ["gaussian:3", "scharr:7", "box:9"].map(|s| ConvKernel::parse(s).unwrap()) {
        for (s, t) in tunings {
            for (w, h) in [(1, 1), (9, 5), (131, 67), (264, 40), (1104, 40)] {
                for border in Border::ALL {
                    let img = random(w, h, 1, 7);
                    let p = conv.prepare(&k, s, t).unwrap();
                    let d = cuda_sobel::gpu::patterns::Dims::new(w as u32, h as u32).unwrap();
                    let stream = &conv.gpu().stream;
                    let input = stream.clone_htod(&img.data).unwrap();
                    let mut out = stream.alloc_zeros::<u8>(w * h).unwrap();
                    let mut scratch = stream.alloc_zeros::<u8>(p.scratch_bytes(w * h).max(1)).unwrap();
                    p.enqueue(stream, (d, 1, border), &input, &mut out, &mut scratch).unwrap();
                    let got = stream.clone_dtoh(&out).unwrap();
                    assert_eq!(got, conv::filter_scalar(&img, &k, border).data, "{} {s:?} {t:?} {w}×{h}", k.name);
                }
            }
        }
    }
}

/// `Tuning::overlap`: images launched one after another on one stream, each launch free to start while the one before
/// finishes (the filter-size study's overlapped pyramid): a large image then small ones, so that the small ones run
/// beside its tail, every strategy, every image exact — with one scratch buffer for all, as the study has, which a
/// two-pass strategy's second launch reads (so those keep ordinary launches: `conv::launches_an_image`).
#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn overlapped_launches_compute_the_same_bytes() {
    let Some(gpu) = gpu_or_skip("overlapped_launches_compute_the_same_bytes") else { return };
    // As the study runs them: on a created stream (on the legacy one they would not overlap), without cudarc's
    // per-buffer events (which would sit between the launches).
    // SAFETY: every buffer of this test is allocated, used and freed on that one stream.
    unsafe { gpu.ctx.disable_event_tracking() };
    let conv = ConvGpu::new(gpu.on_stream(gpu.ctx.new_stream().unwrap()));
    let stream = &conv.gpu().stream;
    let sizes = [(1933, 1080), (7, 3), (483, 270), (1, 1), (966, 540), (40, 9)];
    let border = Border::Reflect101;
    let one = Tuning { overlap: true, two_pass: Some(false), ..Tuning::default() };
    let two = Tuning { two_pass: Some(true), ..one };
    let mut failures = Vec::new();
    for k in ["scharr:7", "box:5"].map(|s| ConvKernel::parse(s).unwrap()) {
        for s in Variant::KERNELS.into_iter().filter(|s| s.is_gpu() && chosen(*s)) {
            for t in [one, two] {
                let p = conv.prepare(&k, s, t).unwrap();
                let imgs: Vec<Planes> =
                    sizes.iter().enumerate().map(|(i, &(w, h))| random(w, h, 1, i as u64)).collect();
                let inputs: Vec<_> = imgs.iter().map(|img| stream.clone_htod(&img.data).unwrap()).collect();
                let mut outs: Vec<_> =
                    imgs.iter().map(|img| stream.alloc_zeros::<u8>(img.data.len()).unwrap()).collect();
                let largest = imgs.iter().map(|img| img.data.len()).max().unwrap();
                let mut scratch = stream.alloc_zeros::<u8>(p.scratch_bytes(largest).max(1)).unwrap();
                for ((img, input), out) in imgs.iter().zip(&inputs).zip(&mut outs) {
                    let d = cuda_sobel::gpu::patterns::Dims::new(img.width as u32, img.height as u32).unwrap();
                    p.enqueue(stream, (d, 1, border), input, out, &mut scratch).unwrap();
                }
                for (img, out) in imgs.iter().zip(&outs) {
                    if stream.clone_dtoh(out).unwrap() != conv::filter_scalar(img, &k, border).data {
                        failures.push(format!("{} {} {t:?} {}×{}", s.name(), k.name, img.width, img.height));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_filter_command_writes_the_reference_bytes_and_refuses_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let rgb = cuda_sobel::generate::noise(37, 23, 5);
    let input = dir.path().join("in.png");
    rgb.save(&input).unwrap();
    for (spec, rgb_flag, variant) in
        [("box:5", false, "cpu-rayon"), ("scharr:9", true, "cpu-scalar"), ("gaussian:15", false, "cpu-rayon")]
    {
        let out = dir.path().join(format!("{}.png", spec.replace(':', "")));
        let mut cmd = common::bin();
        cmd.args(["filter", input.to_str().unwrap(), "--kernel", spec, "--variant", variant, "--border", "reflect101"]);
        cmd.arg("--out").arg(&out);
        if rgb_flag {
            cmd.arg("--rgb");
        }
        cmd.assert().success();
        let k = ConvKernel::parse(spec).unwrap();
        let planes = if rgb_flag { Planes::channels(&rgb) } else { Planes::grey(&rgb) };
        let want = conv::filter_scalar(&planes, &k, Border::Reflect101).interleaved();
        let got = image::open(&out).unwrap();
        let got = if rgb_flag { got.to_rgb8().into_raw() } else { got.to_luma8().into_raw() };
        assert_eq!(got, want, "{spec}");
    }
    // The default output name, beside the input; sobel:5 is the edge command's --ksize 5.
    common::bin().args(["filter", input.to_str().unwrap(), "--kernel", "sobel:5"]).assert().success();
    let filtered = image::open(dir.path().join("in_sobel5.png")).unwrap().to_luma8();
    let edges = dir.path().join("edges.png");
    let edge_args =
        [input.to_str().unwrap(), "--ksize", "5", "--variant", "cpu-scalar", "--out", edges.to_str().unwrap()];
    common::bin().args(edge_args).assert().success();
    assert_eq!(filtered, image::open(&edges).unwrap().to_luma8());
    // Refusals: one line, non-zero, nothing written.
    let laplacian = dir.path().join("laplacian.txt");
    std::fs::write(&laplacian, "0 1 0\n1 -4 1\n0 1 0\ndivisor 1\n").unwrap();
    for args in [
        vec!["--kernel", "box:4"],
        vec!["--kernel", "nothing-here"],
        vec!["--kernel", laplacian.to_str().unwrap(), "--variant", "gpu-separable"],
    ] {
        let separable = args.contains(&"gpu-separable");
        let out = dir.path().join("refused.png");
        let a = common::bin()
            .args(["filter", input.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .args(&args)
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?}");
        assert!(!separable || stderr.contains("column ⊗ row"), "refused before any GPU is needed: {stderr}");
    }
}

/// gpu-strip's kernel file run on the CPU (`scripts/emulate`: g++, each thread in turn) equals the scalar reference
/// on awkward sizes, every border and several rows a thread, with the file's columns a thread and with 8: its indexing
/// and arithmetic checked where no GPU is at hand, CI included. Skipped, saying why, without g++ or a Python with
/// numpy and Pillow.
#[test]
fn the_strip_kernel_file_run_on_the_cpu_equals_the_reference() {
    let args = ["scripts/emulate/conv_strip_check.py", "box:3,box:7,box:15,gaussian:5,scharr:9,sobel:7", "0,8"];
    common::emulation_check(
        "the_strip_kernel_file_run_on_the_cpu_equals_the_reference",
        &args.map(std::ffi::OsStr::new),
    );
}

/// 1/d as a float rounded up (the smallest f32 ≥ 1/d: CUDA's `__frcp_ru`), or rounded down.
fn reciprocal(d: u32, up: bool) -> f32 {
    // The next float above or below a positive one (its bits are ordered like it; `f32::next_up` needs Rust 1.86).
    let step = |r: f32, by: i32| f32::from_bits(r.to_bits().wrapping_add_signed(by));
    let mut r = (1.0 / d as f64) as f32;
    // f32 × u32 is exact in f64 (24 + 32 bits), so each comparison is exact.
    let at_least = |r: f32| r as f64 * d as f64 >= 1.0;
    while !at_least(r) {
        r = step(r, 1);
    }
    while at_least(step(r, -1)) {
        r = step(r, -1);
    }
    if up || r as f64 * d as f64 == 1.0 {
        r
    } else {
        step(r, -1)
    }
}

/// What `box_byte` in cuda/conv_strip.cu computes before its clamp: the fma n·inv + 2^23 rounded towards −∞, less
/// 2^23. n·inv (n < 2^23, 24-bit inv) is exact in f64, and below 2^23 the rounding to the floats in [2^23, 2^24),
/// one apart, is its floor.
fn box_quotient(n: u32, inv: f32) -> u32 {
    assert!(n < 1 << 23);
    (n as f64 * inv as f64).floor() as u32
}

/// gpu-strip's box divides in floats (conv_strip.cu): ⌊n / d⌋ = ⌊n · (1/d rounded up)⌋ for every n < 2^23.
/// Checked for every n each named box (box:1 … box:15) can give, and for divisors up to the limit `is_box` allows
/// at the n where a quotient steps (k·d − 1 and k·d); with 1/d rounded down instead it fails.
#[test]
fn the_box_division_in_floats_is_exact() {
    for side in (1..=15).step_by(2) {
        let d = side * side;
        let (up, down) = (reciprocal(d, true), reciprocal(d, false));
        for n in 0..=255 * d + d / 2 {
            assert_eq!(box_quotient(n, up), n / d, "box:{side}, n = {n}");
        }
        // Unless 1/d is a float (then both roundings are it), rounding it down fails somewhere.
        let wrong = (0..=255 * d).filter(|n| box_quotient(*n, down) != n / d).count();
        assert!(up == down || wrong > 0, "box:{side}: 1/d rounded down should fail somewhere");
    }
    // Divisors from matrix files: any d with the sums below 2^23 (`is_box`), n up to 2^23 − 1.
    let divisors = (2..64).chain([225, 1000, 4097, 65_535, 65_537, 999_983, 1 << 22, (1 << 23) - 1, (1 << 23) + 1]);
    for d in divisors.chain((0..40).map(|i| (1u32 << 23) + 97 * i * i + 13)) {
        let inv = reciprocal(d, true);
        for k in 0..=((1u32 << 23) - 1) / d {
            for n in [k * d, (k * d).wrapping_sub(1), k * d + d / 2] {
                if n < 1 << 23 {
                    assert_eq!(box_quotient(n, inv), n / d, "d = {d}, n = {n}");
                }
            }
        }
    }
}
