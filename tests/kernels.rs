//! Every `.cu` file compiles to PTX through NVRTC and exports the kernels the host loads. Needs NVRTC
//! only, not a GPU: CI installs it from the `nvidia-cuda-nvrtc` wheel and sets `CUDA_SOBEL_REQUIRE_NVRTC=1`,
//! so there a missing NVRTC fails. Elsewhere the tests skip, saying why.

use std::io::Write;

use cuda_sobel::gpu::kernels::Build;
use cuda_sobel::gpu::patterns::{KernelSource, SOURCES};
use cuda_sobel::gpu::{self, compile};
use cuda_sobel::sobel::{Border, Filter};

/// False (after printing why) when NVRTC is absent and not required.
fn nvrtc_or_skip(test: &str) -> bool {
    if gpu::nvrtc_present() {
        return true;
    }
    assert!(
        std::env::var_os("CUDA_SOBEL_REQUIRE_NVRTC").is_none(),
        "{test}: NVRTC required: {}",
        gpu::GpuError::NoNvrtc
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {}", gpu::GpuError::NoNvrtc);
    false
}

#[test]
fn every_kernel_file_compiles_with_nvrtc() {
    if !nvrtc_or_skip("every_kernel_file_compiles_with_nvrtc") {
        return;
    }
    let expected: [(&str, &[&str]); 12] = [
        ("map", &["grey_kernel", "sobel_x_kernel", "sobel_y_kernel", "magnitude_kernel"]),
        ("fused_map", &["gradient_magnitude_kernel"]),
        ("fused", &["sobel_fused"]),
        ("n_per_thread", &["sobel_n_per_thread", "sobel_n_report_mapping"]),
        ("const_taps", &["sobel_const_taps"]),
        ("separable", &["sobel_rows_pass", "sobel_columns_pass"]),
        ("tiled", &["sobel_tiled"]),
        ("vec16", &["sobel_vec16_general", "sobel_vec16_aligned"]),
        ("strip", &["sobel_strip_general", "sobel_strip_aligned"]),
        ("selftest", &["selftest_grey", "selftest_magnitude"]),
        ("timing", &["spin", "noop"]),
        ("unfilter", &["unfilter_rgb", "unfilter_rgba"]),
    ];
    // Every (operator, arithmetic) build the host can ask for: Sobel/Scharr × exact/report.
    let filters = Filter::all().filter(|f| f.border == Border::Zero);
    for build in filters.map(Build::of) {
        for (src, (name, entries)) in SOURCES.iter().zip(expected) {
            assert_eq!(src.name, name);
            let ptx = compile::compile(src, &compile::arch_option(9, 0, compile::Code::Ptx), build)
                .unwrap_or_else(|e| panic!("{e}"));
            for entry in entries {
                assert!(ptx.contains(&format!(".entry {entry}(")), "{name}.cu {build:?} exports {entry}");
            }
            // No arrays in local memory (`.local` in PTX: per-thread arrays the compiler could not keep in
            // registers). Register spills appear only in SASS, after ptxas: scripts/sass-report.sh shows those.
            assert!(!ptx.contains(".local"), "{name}.cu {build:?} declares local memory");
        }
    }
}

#[test]
fn a_broken_kernel_reports_the_compiler_log() {
    if !nvrtc_or_skip("a_broken_kernel_reports_the_compiler_log") {
        return;
    }
    let broken =
        KernelSource { name: "broken", source: "#include \"sobel.cuh\"\n__global__ void k() { undeclared(); }" };
    let err = compile::compile(&broken, &compile::arch_option(9, 0, compile::Code::Ptx), Build::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("cuda/broken.cu") && err.contains("undeclared"), "{err}");
}

#[test]
fn the_machine_code_built_into_the_binary_matches_the_sources() {
    use cuda_sobel::gpu::prebuilt;
    if !nvrtc_or_skip("the_machine_code_built_into_the_binary_matches_the_sources") {
        return;
    }
    // kernels/sm_90/ is loaded on H100/H200 instead of compiling. A key that is not the one this binary
    // computes means a kernel file (or an option) changed since: the file is then ignored at run time (a
    // compile instead), and this test says to regenerate it.
    let options = compile::options(
        &compile::arch_option(prebuilt::MAJOR, prebuilt::MINOR, compile::Code::Cubin),
        Build::default(),
    );
    for src in &SOURCES {
        let key = compile::cache_key(src, &options, compile::Code::Cubin);
        assert_eq!(
            prebuilt::manifest_key(src.name),
            Some(key),
            "kernels/sm_90/{}.cubin is stale: run scripts/prebuild-kernels.sh",
            src.name
        );
        let embedded = prebuilt::get(src.name, key, compile::Code::Cubin).expect("intact");
        // NVRTC is deterministic: the same source and options give the same bytes (so CI can tell).
        let fresh = compile::compile_with(src, &options, compile::Code::Cubin).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&fresh[..4], b"\x7fELF", "{}.cu: CUBIN is an ELF image", src.name);
        assert!(embedded == fresh.as_slice(), "kernels/sm_90/{}.cubin differs from NVRTC's output now", src.name);
    }
}
