//! `--output canny`: the command line writes the bytes of the library's definition (`cuda_sobel::canny`, which
//! python/tests/test_opencv.py holds to cv2.Canny), from every variant, for every aperture and norm; every GPU
//! variant's Canny (its gradients, then `cuda/canny.cu`) gives those bytes on awkward sizes and adversarial images;
//! bad thresholds and apertures are refused with exit 2 and nothing written.

mod common;

use common::{bin, gpu_or_skip};
use cuda_sobel::canny::Canny;
use cuda_sobel::sobel::{Filter, Grey, Ksize, Norm};

#[test]
fn the_command_line_writes_the_definitions_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("scene.png");
    let rgb = cuda_sobel::generate::scene(97, 61);
    rgb.save(&input).unwrap();
    for ksize in [Ksize::K3, Ksize::K5, Ksize::K7] {
        for (norm, name) in [(Norm::L1, "l1"), (Norm::L2, "l2")] {
            let (low, high) = if ksize == Ksize::K7 { (400.0, 1200.0) } else { (30.0, 90.0) };
            let out = dir.path().join(format!("k{}{name}.png", ksize.name()));
            bin()
                .arg(&input)
                .args(["--output", "canny", "--grey", "bt601", "--norm", name, "--ksize", ksize.name()])
                .args(["--low", &low.to_string(), "--high", &high.to_string(), "--variant", "cpu-scalar,cpu-rayon"])
                .arg("--out")
                .arg(&out)
                .assert()
                .success();
            let filter = Filter { grey: Grey::Bt601, ksize, ..Filter::default() };
            let stages = cuda_sobel::cpu::scalar::sobel_stages(&rgb, filter);
            let want = Canny::new(low, high, norm, ksize).unwrap().edges(&stages.gx, &stages.gy, 97, 61);
            let got = image::open(&out).unwrap().into_luma8().into_raw();
            assert_eq!(got, want, "ksize {} {name}", ksize.name());
            assert!(got.contains(&255) && got.iter().all(|&v| v == 0 || v == 255));
        }
    }
}

#[test]
fn bad_thresholds_and_apertures_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("scene.png");
    cuda_sobel::generate::scene(16, 12).save(&input).unwrap();
    let out = dir.path().join("out.png");
    let cases: [(&[&str], &str); 7] = [
        (&["--output", "canny", "--low", "5"], "needs both --low and --high"),
        (&["--output", "canny", "--low", "nan", "--high", "9"], "the low threshold must be a finite number, not NaN"),
        (&["--output", "canny", "--low", "1", "--high", "inf"], "the high threshold must be a finite number"),
        (&["--output", "canny", "--low", "1", "--high", "9", "--ksize", "1"], "must be 3, 5 or 7"),
        (&["--output", "canny", "--low", "1", "--high", "9", "--operator", "scharr"], "the exact Sobel"),
        (&["--low", "1", "--high", "9"], "go with --output canny"),
        (&["--output", "canny", "--low", "abc", "--high", "9"], "invalid value 'abc'"),
    ];
    for (args, words) in cases {
        let assert = bin().arg(&input).args(args).arg("--out").arg(&out).assert().code(2);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(stderr.contains(words), "{args:?}: expected '{words}' in: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?}: nothing written");
    }
}

/// `batch --output canny` over a folder with a broken file: each image's file holds the definition's bytes (the image
/// command's pixels; on a GPU batch deflates its PNGs there, so the files' bytes may differ), `--check` passes, the broken file fails with its reason; the refusals of the
/// image command hold for batch, before anything is written.
#[test]
fn batch_writes_each_images_canny_and_refuses_what_the_image_command_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let sizes = [(97, 61), (1, 1), (2, 9), (300, 4)];
    for (k, &(w, h)) in sizes.iter().enumerate() {
        cuda_sobel::generate::scene(w, h).save(input.join(format!("s{k}.png"))).unwrap();
    }
    std::fs::write(input.join("cut.png"), &std::fs::read(input.join("s0.png")).unwrap()[..40]).unwrap();
    let out = dir.path().join("out");
    let args = ["--output", "canny", "--low", "20", "--high", "60", "--grey", "bt601", "--norm", "l2", "--ksize", "5"];
    let assert = bin().arg("batch").arg(&input).args(args).arg("--check").arg("--out").arg(&out).assert().code(2);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("batch: 4 of 5 images") && stdout.contains("Canny (aperture 5, norm l2"), "{stdout}");
    assert!(stdout.contains("cut.png: not a decodable image"), "{stdout}");
    let canny = Canny::new(20.0, 60.0, Norm::L2, Ksize::K5).unwrap();
    let filter = Filter { grey: Grey::Bt601, ksize: Ksize::K5, ..Filter::default() };
    for (k, &(w, h)) in sizes.iter().enumerate() {
        let written = out.join(format!("s{k}_canny.png"));
        let rgb = image::open(input.join(format!("s{k}.png"))).unwrap().into_rgb8();
        let stages = cuda_sobel::cpu::scalar::sobel_stages(&rgb, filter);
        let want = canny.edges(&stages.gx, &stages.gy, w as usize, h as usize);
        assert_eq!(image::open(&written).unwrap().into_luma8().into_raw(), want, "s{k}");
        let single = dir.path().join(format!("s{k}.png"));
        bin().arg(input.join(format!("s{k}.png"))).args(args).arg("--out").arg(&single).assert().success();
        let pixels = |p: &std::path::Path| image::open(p).unwrap().into_luma8().into_raw();
        assert_eq!(pixels(&single), pixels(&written), "s{k}: the image command's pixels");
    }
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), sizes.len(), "nothing else written");

    let refused: [(&[&str], &str); 4] = [
        (&["--output", "canny", "--low", "5"], "needs both --low and --high"),
        (&["--output", "canny", "--low", "1", "--high", "nan"], "must be a finite number"),
        (&["--low", "1", "--high", "9"], "go with --output canny"),
        (&["--output", "canny", "--low", "1", "--high", "9", "--baseline"], "takes no --output canny"),
    ];
    let none = dir.path().join("none");
    for (args, words) in refused {
        let assert = bin().arg("batch").arg(&input).args(args).arg("--out").arg(&none).assert().code(2);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(stderr.contains(words) && !stderr.contains("panicked"), "{args:?}: expected '{words}' in: {stderr}");
        assert!(!none.exists(), "{args:?}: nothing written");
    }
}

/// The spiral (`generate::spiral`) is the hysteresis's hard case: with the seed, the definition makes edges of a
/// quarter of the image's pixels (the inner side of the line, every turn to the centre), all hanging on the
/// 3-pixel seed through one chain of weak pixels; without the seed, none; cut once, only the first run's. So a
/// hysteresis that stops short of the chain's end fails here.
#[test]
fn the_spiral_hangs_on_its_seed() {
    let filter = Filter::default();
    for norm in [Norm::L1, Norm::L2] {
        let canny = Canny::new(60.0, 500.0, norm, Ksize::K3).unwrap();
        for (w, h) in [(64, 48), (257, 255)] {
            let count = |rgb: &image::RgbImage| {
                let want = definition(rgb, filter, &canny);
                let src = cuda_sobel::cpu::rayon::PackedRgb::new(rgb.as_raw(), w as usize, h as usize);
                assert_eq!(canny.edges_of(&src, filter), want, "cpu-rayon");
                want.iter().filter(|&&b| b == 255).count()
            };
            let edges = count(&cuda_sobel::generate::spiral(w, h, 40, 255));
            assert!(edges > (w * h) as usize / 5, "{w}×{h} {norm:?}: {edges} edge pixels");
            assert_eq!(count(&cuda_sobel::generate::spiral(w, h, 40, 40)), 0, "{w}×{h}: no strong pixel, no edge");
            // Cut the line halfway along its first run: the rest of the chain loses the seed, and only the edges beside
            // the run's first half stay.
            let mut cut = cuda_sobel::generate::spiral(w, h, 40, 255);
            for x in w / 2..w / 2 + 6 {
                cut.put_pixel(x, 1, image::Rgb([0; 3]));
            }
            let kept = count(&cut);
            assert!(kept <= w as usize + 8, "{w}×{h}: the cut spiral keeps only the edges by its seed, not {kept}");
        }
    }
}

/// Threshold pairs for an aperture: its gradients are larger (aperture 7's are divided by 16 first).
fn threshold_pairs(ksize: Ksize) -> [(f64, f64); 4] {
    let k = match ksize {
        Ksize::K3 => 1.0,
        Ksize::K5 => 4.0,
        _ => 16.0,
    };
    [(20.0 * k, 60.0 * k), (150.0 * k, 50.0 * k), (0.0, 0.0), (-5.0, 400.0 * k)]
}

/// What every GPU variant's Canny must equal: the definition on cpu-scalar's gradients.
fn definition(rgb: &image::RgbImage, filter: Filter, canny: &Canny) -> Vec<u8> {
    let stages = cuda_sobel::cpu::scalar::sobel_stages(rgb, filter);
    canny.edges(&stages.gx, &stages.gy, rgb.width() as usize, rgb.height() as usize)
}

/// Every GPU variant's Canny — its exact gradients, then `cuda/canny.cu`'s suppression and union-find hysteresis —
/// equals the definition's bytes on random images of awkward sizes (1×1, 2×N, narrower and shorter than the
/// aperture) and the scene, for every aperture × norm × border × several threshold pairs (swapped, zero, negative).
#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn every_gpu_variant_gives_the_definitions_bytes() {
    use cuda_sobel::pipeline::Variant;
    use cuda_sobel::sobel::Border;
    let Some(gpu) = gpu_or_skip("every_gpu_variant_gives_the_definitions_bytes") else { return };
    let gpu_variants: Vec<Variant> = Variant::EDGES.into_iter().filter(|v| v.is_gpu()).collect();
    let mut images = vec![cuda_sobel::generate::scene(97, 61)];
    for (k, (w, h)) in [(1, 1), (2, 9), (9, 2), (3, 3), (6, 5), (33, 17), (130, 7)].into_iter().enumerate() {
        images.push(cuda_sobel::generate::noise(w, h, 7 + k as u64));
    }
    let mut checked = 0;
    for rgb in &images {
        for ksize in [Ksize::K3, Ksize::K5, Ksize::K7] {
            for border in Border::ALL {
                let filter = Filter { grey: Grey::Bt601, ksize, border, ..Filter::default() };
                for norm in [Norm::L1, Norm::L2] {
                    for (low, high) in threshold_pairs(ksize) {
                        let canny = Canny::new(low, high, norm, ksize).unwrap();
                        let want = definition(rgb, filter, &canny);
                        for &v in &gpu_variants {
                            let got = cuda_sobel::gpu::variants::run_canny(&gpu, v, rgb, filter, &canny, false, 1)
                                .unwrap_or_else(|e| panic!("{v:?} {filter:?} {canny:?}: {e}"));
                            assert!(
                                got.output == want,
                                "{} {}×{} {filter:?} {canny:?}: bytes differ",
                                v.name(),
                                rgb.width(),
                                rgb.height()
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "{checked} runs");
}

/// The adversarial images, on gpu-strip (the engine's path) and gpu-map: the spiral of
/// [`the_spiral_hangs_on_its_seed`] with and without its seed, and a checkerboard of one-pixel squares (every
/// magnitude tied with its neighbours'), at sizes up to 1024×1024.
#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn long_chains_and_ties_give_the_definitions_bytes() {
    use cuda_sobel::pipeline::Variant;
    let Some(gpu) = gpu_or_skip("long_chains_and_ties_give_the_definitions_bytes") else { return };
    let filter = Filter::default();
    for norm in [Norm::L1, Norm::L2] {
        let canny = Canny::new(60.0, 500.0, norm, Ksize::K3).unwrap();
        for (w, h) in [(64, 48), (257, 255), (1024, 1024)] {
            let seeded = cuda_sobel::generate::spiral(w, h, 40, 255);
            let unseeded = cuda_sobel::generate::spiral(w, h, 40, 40);
            let checker =
                image::RgbImage::from_fn(w, h, |x, y| image::Rgb([if (x + y) % 2 == 0 { 200 } else { 10 }; 3]));
            for (name, rgb) in [("spiral", &seeded), ("spiral without its seed", &unseeded), ("checkerboard", &checker)]
            {
                let want = definition(rgb, filter, &canny);
                for v in [Variant::GpuStrip, Variant::GpuMap] {
                    let got = cuda_sobel::gpu::variants::run_canny(&gpu, v, rgb, filter, &canny, false, 1).unwrap();
                    assert!(got.output == want, "{name} {w}×{h} {norm:?} {}: bytes differ", v.name());
                }
            }
        }
    }
}

/// The command line's `--output canny` from a GPU variant beside cpu-scalar: every variant identical (exit 0 with
/// `--gpu-required`) and the definition's bytes written.
#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn the_command_line_runs_canny_on_the_gpu() {
    if gpu_or_skip("the_command_line_runs_canny_on_the_gpu").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("scene.png");
    let rgb = cuda_sobel::generate::scene(301, 199);
    rgb.save(&input).unwrap();
    let out = dir.path().join("canny.png");
    bin()
        .arg(&input)
        .args(["--output", "canny", "--low", "30", "--high", "90", "--grey", "bt601", "--norm", "l2"])
        .args(["--variant", "cpu-scalar,cpu-rayon,gpu-strip,gpu-tiled", "--gpu-required", "--out"])
        .arg(&out)
        .assert()
        .success();
    let filter = Filter { grey: Grey::Bt601, ..Filter::default() };
    let want = definition(&rgb, filter, &Canny::new(30.0, 90.0, Norm::L2, Ksize::K3).unwrap());
    assert_eq!(image::open(&out).unwrap().into_luma8().into_raw(), want);
}

/// `batch --output canny` on the GPU: the slots compute Canny where they compute the edges (PNGs unfiltered on the
/// GPU, or inflated there too with `--png-inflate gpu`; JPEGs decoded by nvJPEG; the PNG data deflated on the GPU),
/// so every file holds the definition's bytes for the RGB its decoder produced (`--check` passes: nvJPEG's RGB for
/// the JPEG, the PNGs' own), for awkward sizes, the spiral, each aperture and norm.
#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn batch_runs_canny_in_the_gpu_slots() {
    if gpu_or_skip("batch_runs_canny_in_the_gpu_slots").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let mut pngs = vec![("spiral", cuda_sobel::generate::spiral(640, 480, 40, 255))];
    for (k, (w, h)) in [(97, 61), (1, 1), (2, 9), (300, 4), (1000, 750)].into_iter().enumerate() {
        pngs.push((["s0", "s1", "s2", "s3", "s4"][k], cuda_sobel::generate::scene(w, h)));
    }
    for (name, rgb) in &pngs {
        rgb.save(input.join(format!("{name}.png"))).unwrap();
    }
    let mut jpeg = Vec::new();
    let photo = cuda_sobel::generate::noise(333, 211, 5);
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90).encode_image(&photo).unwrap();
    std::fs::write(input.join("photo.jpg"), &jpeg).unwrap();
    let cases = [("3", "l1", "cpu"), ("3", "l2", "cpu"), ("5", "l2", "cpu"), ("7", "l1", "cpu"), ("5", "l1", "gpu")];
    for (ksize, norm, inflate) in cases {
        let out = dir.path().join(format!("out{ksize}{norm}{inflate}"));
        let args = ["--output", "canny", "--low", "60", "--high", "500", "--ksize", ksize, "--norm", norm];
        let o = bin()
            .arg("batch")
            .arg(&input)
            .args(args)
            .args(["--check", "--png-inflate", inflate, "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        if inflate == "gpu" && stderr.contains("--png-inflate gpu:") {
            assert!(std::env::var_os("CUDA_SOBEL_REQUIRE_NVCOMP").is_none(), "nvCOMP required: {stderr}");
            eprintln!("skipping batch_runs_canny_in_the_gpu_slots's --png-inflate gpu case: {stderr}");
            continue;
        }
        assert!(o.status.success(), "{stdout}{stderr}");
        assert!(stdout.contains("batch: 7 of 7 images"), "{stdout}");
        assert!(stdout.contains(") after gpu-strip") && stdout.contains("JPEGs decoded by nvJPEG"), "{stdout}");
        let ksize = match ksize {
            "3" => Ksize::K3,
            "5" => Ksize::K5,
            _ => Ksize::K7,
        };
        let norm = if norm == "l1" { Norm::L1 } else { Norm::L2 };
        let canny = Canny::new(60.0, 500.0, norm, ksize).unwrap();
        let filter = Filter { ksize, ..Filter::default() };
        for (name, rgb) in &pngs {
            let written = image::open(out.join(format!("{name}_canny.png"))).unwrap().into_luma8().into_raw();
            assert!(written == definition(rgb, filter, &canny), "{name} {ksize:?} {norm:?} --png-inflate {inflate}");
        }
    }
}

/// `cuda/canny.cu` run on the CPU (`scripts/emulate/canny_check.py`: g++, a block's 32×8 threads as CPU threads that
/// meet at each barrier, shuffle and vote, AddressSanitizer, states and parents starting as garbage): its edges equal
/// cpu-scalar's at aperture 3 in both norms — awkward sizes, noise, a checkerboard, the scene and a one-pixel spiral
/// crossing every seam. The suppression's warp votes and the union-find checked where no GPU is at hand, CI included
/// (a lane that skips a vote its warp takes ends the run, as it would hang the GPU). Skipped, saying why, without g++
/// or a Python with numpy and Pillow.
#[test]
fn the_canny_kernel_file_run_on_the_cpu_gives_the_definitions_bytes() {
    common::emulation_check(
        "the_canny_kernel_file_run_on_the_cpu_gives_the_definitions_bytes",
        &[std::ffi::OsStr::new("scripts/emulate/canny_check.py")],
    );
}
