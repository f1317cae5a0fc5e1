//! The command line as a user meets it when things go right: every variant runs, the edge image is
//! written where asked, JSON and intermediates. (Bad input: tests/bad_input.rs.)

mod common;

use common::bin;
use predicates::prelude::*;

#[test]
fn runs_every_variant_and_writes_the_edge_image() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("edges.png");
    bin()
        .args(["imgs_in/1024x512.png", "4", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("cpu-scalar").and(predicate::str::contains("cpu-rayon")))
        .stdout(predicate::str::contains("identical"))
        .stdout(predicate::str::contains("gpu-fused"));
    let img = image::open(&out).expect("output decodes").into_luma8();
    assert_eq!(img.dimensions(), (1024, 512));
    assert!(img.as_raw().iter().any(|&v| v > 200), "an edge image of a scene with edges has bright pixels");
}

#[test]
fn json_and_intermediate_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("e.png");
    let assert = bin()
        .args([
            "imgs_in/512x512.png",
            "--variant",
            "cpu-rayon",
            "--border",
            "zero",
            "--json",
            "--intermediate",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).expect("stdout is JSON");
    assert_eq!(json["width"], 512);
    assert_eq!(json["filter"]["border"], "zero");
    assert_eq!(json["filter"]["operator"], "sobel");
    assert_eq!(json["filter"]["compat"], "exact");
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "only the selected variant is reported");
    assert_eq!(rows[0]["variant"], "cpu-rayon");
    assert_eq!(rows[0]["mismatched_pixels"], 0);
    assert!(rows[0]["compute_ms"].as_f64().unwrap() > 0.0);
    for suffix in ["grey", "gx", "gy"] {
        let p = dir.path().join(format!("e_{suffix}.png"));
        assert_eq!(image::open(&p).expect("intermediate decodes").into_luma8().dimensions(), (512, 512));
    }
}

#[test]
fn default_output_goes_to_imgs_out() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("imgs_in/512x512.png", dir.path().join("in.png")).unwrap();
    bin().current_dir(dir.path()).args(["in.png", "--variant", "cpu-rayon", "--quiet"]).assert().success().stdout("");
    assert!(dir.path().join("imgs_out/in_sobel.png").is_file());
}

#[test]
fn generate_draws_the_scene() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.png");
    bin().args(["generate", "100x60", "--out"]).arg(&out).assert().success();
    let img = image::open(&out).unwrap().into_rgb8();
    assert_eq!(img.dimensions(), (100, 60));
    // The committed 512×512 input is this same scene.
    let committed = image::open("imgs_in/512x512.png").unwrap().into_rgb8();
    assert_eq!(img.get_pixel(37, 41), committed.get_pixel(37, 41));
}

/// No driver library on the loader path (what CI has, and what an empty LD_LIBRARY_PATH simulates on a
/// machine whose libcuda is not in the system loader's cache): the CPU variants run, one line says why
/// the GPU ones did not, exit 0 — and exit 3 with --gpu-required.
#[test]
fn no_cuda_driver_runs_the_cpu_variants() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        bin()
            .env("LD_LIBRARY_PATH", dir.path())
            .args(["imgs_in/512x512.png", "--out"])
            .arg(dir.path().join("e.png"))
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !stdout.contains("no CUDA driver") {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED no_cuda_driver_runs_the_cpu_variants: libcuda found by the system loader"
        );
        return;
    }
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout.matches("GPU variants skipped: no CUDA driver").count(), 1, "{stdout}");
    assert!(stdout.contains("cpu-rayon") && stdout.contains("identical"), "{stdout}");
    assert_eq!(run(&["--gpu-required"]).status.code(), Some(3));
}

/// `--emit-ptx` needs NVRTC only; without it on the loader path, one line says so and the exit code is 2
/// (skipped where NVRTC is in the system loader's cache, as on the GPU machine).
#[test]
fn emit_ptx_without_nvrtc_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().env("LD_LIBRARY_PATH", dir.path()).arg("--emit-ptx").arg(dir.path().join("ptx")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED emit_ptx_without_nvrtc_says_so: NVRTC found by the system loader");
        return;
    }
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no NVRTC (libnvrtc.so.13 not found"), "{stderr}");
}

#[test]
fn compat_report_and_scharr_write_their_bytes() {
    use cuda_sobel::sobel::{Filter, Operator};
    let dir = tempfile::tempdir().unwrap();
    let rgb = cuda_sobel::image_io::decode_rgb("imgs_in/512x512.png".as_ref()).unwrap();
    let cases: [(&[&str], Filter); 2] = [
        (&["--compat", "report"], Filter::report()),
        (
            &["--operator", "scharr", "--border", "reflect101"],
            Filter { operator: Operator::Scharr, border: cuda_sobel::sobel::Border::Reflect101, ..Filter::default() },
        ),
    ];
    for (args, filter) in cases {
        let out = dir.path().join("e.png");
        let assert = bin()
            .args(["imgs_in/512x512.png", "--variant", "cpu-scalar,cpu-rayon", "--json", "--out"])
            .arg(&out)
            .args(args)
            .assert()
            .success();
        let json: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
        assert_eq!(json["filter"], serde_json::to_value(filter).unwrap(), "{args:?}");
        let written = image::open(&out).unwrap().into_luma8().into_raw();
        assert_eq!(written, cuda_sobel::cpu::scalar::sobel(&rgb, filter).into_raw(), "{args:?}");
    }
}

#[test]
fn compat_report_refuses_another_border() {
    let assert = bin()
        .args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "--compat", "report", "--border", "replicate"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--compat report uses the report's zero border"), "{stderr}");
}

#[test]
fn png_compression_changes_the_file_not_the_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let mut decoded = Vec::new();
    for level in ["fast", "default"] {
        let out = dir.path().join(format!("{level}.png"));
        bin()
            .args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "--quiet", "--png-compression", level, "--out"])
            .arg(&out)
            .assert()
            .success();
        decoded.push((std::fs::metadata(&out).unwrap().len(), image::open(&out).unwrap().into_luma8().into_raw()));
    }
    assert_eq!(decoded[0].1, decoded[1].1, "same pixels");
    assert!(decoded[0].0 > decoded[1].0, "fast writes a larger file: {} vs {}", decoded[0].0, decoded[1].0);
}

#[test]
fn one_variant_runs_alone_unless_asked_to_check() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("e.png");
    let run = |extra: &[&str]| -> serde_json::Value {
        let assert = bin()
            .args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "--json", "--out"])
            .arg(&out)
            .args(extra)
            .assert()
            .success();
        serde_json::from_slice(&assert.get_output().stdout).unwrap()
    };
    let alone = run(&[]);
    assert!(alone["rows"][0]["mismatched_pixels"].is_null(), "no reference ran: {alone}");
    // The file is the variant's output, still the reference's bytes.
    let golden = image::open("tests/data/512x512_sobel.png").unwrap().into_luma8();
    assert_eq!(image::open(&out).unwrap().into_luma8(), golden);
    let checked = run(&["--check"]);
    assert_eq!(checked["rows"][0]["mismatched_pixels"], 0);
    let table = bin().args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "--out"]).arg(&out).output().unwrap();
    assert!(String::from_utf8_lossy(&table.stdout).contains("not checked"));
}

#[test]
fn variant_auto_picks_one_variant_and_writes_the_reference_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("e.png");
    let assert = bin()
        .args(["imgs_in/512x512.png", "--variant", "auto", "--json", "--check", "--out"])
        .arg(&out)
        .assert()
        .success()
        // A 512×512 image is far below the crossover: the CPU finishes first, GPU or not (the prediction is
        // printed where a driver makes the GPU an option).
        .stderr(predicate::str::contains("--variant auto: cpu-rayon ("));
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one variant ran: {report}");
    assert_eq!(rows[0]["variant"], "cpu-rayon");
    assert_eq!(rows[0]["mismatched_pixels"], 0, "--check compares it");
    assert_eq!(report["gpu"]["status"], "notrequested", "no GPU opened for a small image");
    let golden = image::open("tests/data/512x512_sobel.png").unwrap().into_luma8();
    assert_eq!(image::open(&out).unwrap().into_luma8(), golden);

    bin()
        .args(["imgs_in/512x512.png", "--variant", "auto,gpu-strip", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--variant auto picks one variant itself"));
}

/// The output's extension chooses its format, as OpenCV's `imwrite` does; the lossless ones decode to the PNG's
/// edges, JPEG to something close; `--intermediate`'s siblings follow the extension; an extension no format has
/// is refused in one line before any work.
#[test]
fn the_output_extension_chooses_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let edges = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        bin()
            .args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "-q", "--out"])
            .arg(&out)
            .args(extra)
            .assert()
            .success();
        image::open(&out).unwrap_or_else(|e| panic!("{name}: {e}")).into_luma8()
    };
    let png = edges("e.png", &[]);
    for (name, format) in [
        ("e.bmp", image::ImageFormat::Bmp),
        ("e.tif", image::ImageFormat::Tiff),
        ("e.TIFF", image::ImageFormat::Tiff),
        ("e.webp", image::ImageFormat::WebP),
        ("e.pgm", image::ImageFormat::Pnm),
    ] {
        assert_eq!(edges(name, &[]), png, "{name}: lossless");
        assert_eq!(image::ImageFormat::from_path(dir.path().join(name)).unwrap(), format);
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(image::guess_format(&bytes).unwrap(), format, "{name}: the content is {format:?}");
    }
    for name in ["e.jpg", "e.jpeg"] {
        let jpeg = edges(name, &[]);
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(image::guess_format(&bytes).unwrap(), image::ImageFormat::Jpeg);
        let worst = jpeg.as_raw().iter().zip(png.as_raw()).map(|(&a, &b)| a.abs_diff(b)).max().unwrap();
        assert!(worst > 0 && worst < 32, "{name}: lossy at quality 95, max difference {worst}");
    }
    edges("i.tif", &["--intermediate"]);
    for sibling in ["i_grey.tif", "i_gx.tif", "i_gy.tif"] {
        let bytes = std::fs::read(dir.path().join(sibling)).unwrap();
        assert_eq!(image::guess_format(&bytes).unwrap(), image::ImageFormat::Tiff, "{sibling}");
    }

    let refused = bin().args(["imgs_in/512x512.png", "--out"]).arg(dir.path().join("e.gif")).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("e.gif: cannot write .gif images") && stderr.contains(".png, .jpg"), "{stderr}");
    assert!(!dir.path().join("e.gif").exists());
}

/// Several images on the image command (a shell glob): one line that names `batch`, exit 2, nothing written;
/// N out of range is still refused in clap's words.
#[test]
fn several_images_point_to_batch() {
    let dir = tempfile::tempdir().unwrap();
    for args in
        [&["imgs_in/512x512.png", "imgs_in/1024x512.png"][..], &["imgs_in/512x512.png", "4", "imgs_in/1024x512.png"]]
    {
        let run = bin().current_dir(".").args(args).arg("--out").arg(dir.path().join("e.png")).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("the image command takes one") && stderr.contains("cuda_sobel batch imgs_in/512x512.png"),
            "{stderr}"
        );
    }
    let run = bin().args(["imgs_in/512x512.png", "65"]).output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("invalid value '65' for '[N]': 65 is not in 1..=64"));
    assert!(!dir.path().join("e.png").exists());
}

/// A GPU variant asked for on a machine whose GPU cannot be used: one line says it could not run and that
/// the file holds cpu-rayon's edges; `auto` predicts no GPU time where there is no driver.
#[test]
fn a_gpu_variant_without_a_gpu_says_what_ran_instead() {
    let dir = tempfile::tempdir().unwrap();
    let run = |variant: &str| {
        bin()
            .env("LD_LIBRARY_PATH", dir.path())
            .args(["imgs_in/512x512.png", "--variant", variant, "--out"])
            .arg(dir.path().join("e.png"))
            .output()
            .unwrap()
    };
    let out = run("gpu-strip");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !stdout.contains("no CUDA driver") {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED a_gpu_variant_without_a_gpu_says_what_ran_instead: libcuda found");
        return;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr.contains("gpu-strip could not run (no CUDA driver") && stderr.contains("computed by cpu-rayon instead"),
        "{stderr}"
    );
    let rgb = image::open("imgs_in/512x512.png").unwrap().into_rgb8();
    let written = image::open(dir.path().join("e.png")).unwrap().into_luma8();
    assert_eq!(written, cuda_sobel::cpu::scalar::sobel(&rgb, Default::default()));
    let auto = run("auto");
    let stderr = String::from_utf8_lossy(&auto.stderr);
    assert!(stderr.contains("--variant auto: cpu-rayon (no CUDA driver") && !stderr.contains("gpu-strip"), "{stderr}");
}
