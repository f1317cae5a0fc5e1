//! The command line as a user meets it: success writes a decodable PNG of the right size; bad input
//! gives one line naming the file and the problem, exit code 2, no panic, and no output file.

mod common;

use std::path::Path;

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
    assert_eq!(json["border"], "zero");
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

/// Asserts the failure contract for one bad input.
fn fails_cleanly(input: &Path, problem: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.png");
    let assert = bin().arg(input).arg("--out").arg(&out).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "exactly one line, got: {stderr}");
    assert!(stderr.contains(&*input.to_string_lossy()), "names the file: {stderr}");
    assert!(stderr.contains(problem), "says '{problem}': {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left in the output folder");
}

#[test]
fn missing_file() {
    fails_cleanly(Path::new("imgs_in/does-not-exist.png"), "cannot read");
}

#[test]
fn not_an_image() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.png");
    std::fs::write(&path, "this is text, not a picture\n").unwrap();
    fails_cleanly(&path, "not a decodable image");
}

#[test]
fn truncated_png() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.png");
    let bytes = std::fs::read("imgs_in/512x512.png").unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    fails_cleanly(&path, "not a decodable image");
}

#[test]
fn n_out_of_range_is_a_usage_error() {
    bin().args(["imgs_in/512x512.png", "65"]).assert().code(2).stderr(predicate::str::contains("65"));
    bin().args(["imgs_in/512x512.png", "0"]).assert().code(2);
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
