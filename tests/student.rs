//! `--kernel-file`: students' kernels checked and timed as ours are, and the exercises in cuda/exercises.
//! Compiling needs NVRTC only (CI); running needs a GPU (skipped elsewhere, saying why).

mod common;

use std::io::Write;
use std::path::Path;

use common::bin;
use predicates::prelude::*;

const EXERCISES: [&str; 6] =
    ["01_map", "02_coalesced", "03_tile_halo", "04_rolling_window", "05_tile_any_radius", "06_hysteresis"];

fn nvrtc_or_skip(test: &str) -> bool {
    if cuda_sobel::gpu::nvrtc_present() {
        return true;
    }
    assert!(std::env::var_os("CUDA_SOBEL_REQUIRE_NVRTC").is_none(), "{test}: NVRTC required");
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no NVRTC");
    false
}

fn gpu_or_skip(test: &str) -> bool {
    if cuda_sobel::engine::Engine::device_count() > 0 && cuda_sobel::gpu::nvrtc_present() {
        return true;
    }
    assert!(std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_none(), "{test}: GPU required");
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no CUDA device (or no NVRTC)");
    false
}

#[test]
fn every_exercise_compiles_without_a_gpu() {
    if !nvrtc_or_skip("every_exercise_compiles_without_a_gpu") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in EXERCISES {
        let file = format!("cuda/exercises/{name}.cu");
        for ksize in ksizes_of(name) {
            bin()
                .args(["--ksize", ksize, "--kernel-file", &file, "--emit-ptx"])
                .arg(dir.path())
                .assert()
                .success()
                .stdout(predicate::str::contains(format!("{name}.ptx")));
            let ptx = std::fs::read_to_string(dir.path().join(format!("{name}.ptx"))).unwrap();
            assert!(ptx.contains(".entry "), "{name}: one entry point");
        }
    }
}

#[test]
fn a_syntax_error_names_its_file_and_line() {
    if !nvrtc_or_skip("a_syntax_error_names_its_file_and_line") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    bin()
        .args(["--kernel-file", "tests/data/student/syntax.cu", "--emit-ptx"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("tests/data/student/syntax.cu(6): error"));
}

#[test]
fn the_bench_refuses_a_canny_link_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bench");
    bin()
        .args(["bench", "--canny", "50,150", "--kernel-file", "cuda/exercises/06_hysteresis.cu", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--output canny --low L --high H"));
    assert!(!out.exists(), "nothing written");
}

#[test]
fn files_and_entries_are_checked_before_compiling() {
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.cu");
    std::fs::write(&two, "extern \"C\" __global__ void a(int x) {}\nextern \"C\" __global__ void b(int x) {}\n")
        .unwrap();
    bin()
        .arg("--kernel-file")
        .arg(&two)
        .args(["--emit-ptx", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--kernel-name"));
    let header = dir.path().join("header.cu");
    std::fs::write(&header, "#include \"mine.cuh\"\nextern \"C\" __global__ void a(int x) {}\n").unwrap();
    if nvrtc_or_skip("files_and_entries_are_checked_before_compiling") {
        bin()
            .arg("--kernel-file")
            .arg(&header)
            .arg("--emit-ptx")
            .arg(dir.path())
            .assert()
            .code(2)
            .stderr(predicate::str::contains("header.cu:1: cannot include \"mine.cuh\""));
    }
    bin()
        .args(["--kernel-file", "no/such.cu", "imgs_in/512x512.png"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such.cu: cannot read"));
}

/// The Sobel sizes an exercise is written for: the first four are 3×3 kernels, the fifth any radius.
fn ksizes_of(name: &str) -> &'static [&'static str] {
    if name == "05_tile_any_radius" {
        &["3", "5", "7"]
    } else {
        &["3"]
    }
}

/// Runs a student file on the 1024×512 image with the sweep; returns the assert for more checks.
fn run(file: &Path, border: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
    bin()
        .args(["imgs_in/1024x512.png", "--kernel-file"])
        .arg(file)
        .args(["--border", border, "--sweep"])
        .args(extra)
        .assert()
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn a_correct_kernel_passes_and_is_timed() {
    if !gpu_or_skip("a_correct_kernel_passes_and_is_timed") {
        return;
    }
    run(Path::new("tests/data/student/good.cu"), "reflect101", &[])
        .success()
        .stdout(predicate::str::contains("student:good.cu").and(predicate::str::contains("identical")))
        .stdout(predicate::str::contains("gpu-fused"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn wrong_borders_and_wrapped_magnitudes_fail_with_their_first_pixel_and_hint() {
    if !gpu_or_skip("wrong_borders_and_wrapped_magnitudes_fail_with_their_first_pixel_and_hint") {
        return;
    }
    run(Path::new("tests/data/student/bad_reflect.cu"), "reflect101", &[])
        .code(1)
        .stdout(predicate::str::contains("pixel (x ").and(predicate::str::contains("hint: on the image's border")));
    run(Path::new("tests/data/student/wraps.cu"), "replicate", &[])
        .code(1)
        .stdout(predicate::str::contains("hint: wrapped: got = "));
}

/// The exercises with their TODOs done, as a student would.
fn solved(name: &str) -> String {
    let text = std::fs::read_to_string(format!("cuda/exercises/{name}.cu")).unwrap();
    let (from, to) = match name {
        "01_map" => (
            "out[(size_t)y * width + x] = (u8)grey_at(rgb, x, y, width, height, border);",
            "int g[3][3];\n for (int dy = 0; dy < 3; ++dy) for (int dx = 0; dx < 3; ++dx) g[dy][dx] = grey_at(rgb, x + dx - 1, y + dy - 1, width, height, border);\n out[(size_t)y * width + x] = magnitude_of(sobel_x(g), sobel_y(g));",
        ),
        "02_coalesced" => (
            "int y = blockIdx.x * blockDim.x + threadIdx.x;\n    int x = blockIdx.y * blockDim.y + threadIdx.y;",
            "int x = blockIdx.x * blockDim.x + threadIdx.x;\n    int y = blockIdx.y * blockDim.y + threadIdx.y;",
        ),
        "03_tile_halo" => (
            "tile[ty + 1][tx + 1] = (u8)grey_at(rgb, bx + tx, by + ty, width, height, border);",
            "__syncthreads();\n for (int i = ty * TILE_W + tx; i < (TILE_W + 2) * (TILE_H + 2); i += TILE_W * TILE_H) { int cx = i % (TILE_W + 2), cy = i / (TILE_W + 2); tile[cy][cx] = (u8)grey_at(rgb, bx + cx - 1, by + cy - 1, width, height, border); }",
        ),
        "05_tile_any_radius" => (
            "#define HALO 1  // TODO: the stencil reaches RADIUS pixels out, not 1.",
            "#define HALO RADIUS",
        ),
        "06_hysteresis" => (
            "// TODO: join the two sets (see the top of the file).",
            "while (true) { a = find_root(parent, a); b = find_root(parent, b); if (a == b) return;\n \
             if (a > b) { int t = a; a = b; b = t; }\n int old = atomicMin(&parent[b], a); if (old == b) return; b = old; }",
        ),
        _ => (
            "// TODO: roll the window down one row.",
            "for (int dx = 0; dx < 3; ++dx) { g[0][dx] = g[1][dx]; g[1][dx] = g[2][dx]; }\n load_row(rgb, x, y + 2, width, height, border, g[2]);",
        ),
    };
    assert!(text.contains(from), "{name}: the TODO line is where the test expects it");
    text.replace(from, to)
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn the_exercises_fail_until_completed_and_pass_when_completed() {
    if !gpu_or_skip("the_exercises_fail_until_completed_and_pass_when_completed") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in EXERCISES {
        let block: &[&str] = match name {
            "03_tile_halo" | "05_tile_any_radius" => &["--block", "32x8"],
            "04_rolling_window" => &["--block", "128x1"],
            "06_hysteresis" => &["--output", "canny", "--low", "50", "--high", "150"],
            _ => &[],
        };
        let skeleton = format!("cuda/exercises/{name}.cu");
        let done = dir.path().join(format!("{name}.cu"));
        std::fs::write(&done, solved(name)).unwrap();
        for &ksize in ksizes_of(name) {
            let args = [block, &["--ksize", ksize]].concat();
            // The tile exercise's one-pixel halo is right at ksize 3 only; every other skeleton fails.
            if !(name == "05_tile_any_radius" && ksize == "3") {
                let reference =
                    if name == "06_hysteresis" { "but the definition gives" } else { "but cpu-scalar gives" };
                run(Path::new(&skeleton), "replicate", &args).code(1).stdout(predicate::str::contains(reference));
            }
            for border in ["replicate", "zero", "reflect101"] {
                run(&done, border, &args).success().stdout(predicate::str::contains("identical"));
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn bench_times_a_students_kernel_beside_ours() {
    if !gpu_or_skip("bench_times_a_students_kernel_beside_ours") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bench = |file: &str| {
        bin()
            .args(["bench", "--quick", "--wait-runs", "0", "--variant", "gpu-fused", "--kernel-file", file, "--out"])
            .arg(dir.path())
            .arg("--images")
            .arg(dir.path().join("images"))
            .assert()
    };
    bench("tests/data/student/good.cu").success().stdout(predicate::str::contains("student:good.cu: identical"));
    let md = std::fs::read_to_string(dir.path().join("results.md")).unwrap();
    assert!(md.contains("## Your kernel") && md.contains("student:good.cu"));
    // A wrong kernel stops the bench with its first differing pixel, exit 1.
    bench("tests/data/student/wraps.cu").code(1).stderr(predicate::str::contains("student:wraps.cu differs"));
}
