//! `--output canny`: the command line writes the bytes of the library's definition (`cuda_sobel::canny`, which
//! python/tests/test_opencv.py holds to cv2.Canny), from every variant's gradients, for every aperture and norm;
//! bad thresholds and apertures are refused with exit 2 and nothing written.

mod common;

use common::bin;
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

/// `batch --output canny` over a folder with a broken file: each image's file holds the definition's bytes (and is the
/// image command's file, byte for byte), `--check` passes, the broken file fails with its reason; the refusals of the
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
        assert_eq!(std::fs::read(&single).unwrap(), std::fs::read(&written).unwrap(), "s{k}: the image command's file");
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
