//! Every `.cu` file compiles to PTX through NVRTC and exports the kernels the host loads. Needs NVRTC
//! only, not a GPU: CI installs it from the `nvidia-cuda-nvrtc` wheel and sets `CUDA_SOBEL_REQUIRE_NVRTC=1`,
//! so there a missing NVRTC fails. Elsewhere the tests skip, saying why.

use std::io::Write;

use cuda_sobel::canny::Canny;
use cuda_sobel::gpu::compile::BUILD_FREE;
use cuda_sobel::gpu::kernels::Build;
use cuda_sobel::gpu::patterns::{edge_sources, KernelSource, SOURCES};
use cuda_sobel::gpu::{self, compile};
use cuda_sobel::sobel::{Border, Compat, Filter, Grey, Ksize, Norm, Number, Operator, Output};

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

/// The builds the host can ask for, enough to compile every line of every kernel file: each stencil writing
/// each output, OpenCV's grey and the L1 norm on the smallest and largest stencils, and the report's arithmetic.
fn builds() -> Vec<Build> {
    let mut builds = Vec::new();
    for f in Filter::all().filter(|f| f.border == Border::Replicate) {
        let int = Number::integer_for(&f.stencil());
        for output in [
            Output::Edges,
            Output::Gradients(int),
            Output::Gradients(Number::F32),
            Output::Direction,
            Output::Direction4,
        ] {
            builds.push(Build::with_output(f, output));
        }
        if matches!(f.ksize, Ksize::K3 | Ksize::K7) && f.operator == Operator::Sobel {
            builds.push(Build::of(Filter { grey: Grey::Bt601, norm: Norm::L1, ..f }));
        }
        // Canny's words, in both norms (16-bit ones at aperture 3 with L1).
        if matches!(f.ksize, Ksize::K3 | Ksize::K5 | Ksize::K7) && f.operator == Operator::Sobel {
            for norm in [Norm::L1, Norm::L2] {
                let (words, output) = Canny::new(0.0, 0.0, norm, f.ksize).unwrap().gradients(f);
                builds.push(Build::with_output(words, output));
            }
        }
    }
    builds.extend(Filter::all().filter(|f| f.compat == Compat::Report).map(Build::of));
    builds
}

#[test]
fn every_kernel_file_compiles_with_nvrtc_in_every_build() {
    if !nvrtc_or_skip("every_kernel_file_compiles_with_nvrtc_in_every_build") {
        return;
    }
    let expected: [(&str, &[&str]); SOURCES.len()] = [
        ("map", &["grey_kernel", "sobel_x_kernel", "sobel_y_kernel", "magnitude_kernel"]),
        ("fused_map", &["gradient_magnitude_kernel"]),
        ("fused", &["sobel_fused"]),
        ("n_per_thread", &["sobel_n_per_thread", "sobel_n_report_mapping"]),
        ("separable", &["sobel_rows_pass", "sobel_columns_pass"]),
        ("tiled", &["sobel_tiled"]),
        ("vec16", &["sobel_vec16_general", "sobel_vec16_aligned"]),
        ("strip", &["sobel_strip_general", "sobel_strip_aligned"]),
        ("canny", &["canny_suppress", "canny_link", "canny_edges"]),
        ("selftest", &["selftest_grey", "selftest_magnitude", "selftest_direction"]),
        ("timing", &["spin", "noop"]),
        ("unfilter", &["unfilter_rgb", "unfilter_rgba"]),
        ("deflate", &["deflate_filter", "deflate_hash", "deflate_chain", "deflate_parse", "deflate_write"]),
        ("conv_constant", &["conv_constant"]),
        ("conv_single", &["conv_single"]),
        ("conv_double", &["conv_double"]),
        ("conv_predefined", &["conv_predefined"]),
        ("conv_local", &["conv_local"]),
        ("conv_separable", &["conv_rows", "conv_columns", "conv_separable_fused"]),
        ("conv_block", &["conv_block"]),
        ("conv_rolling", &["conv_rolling"]),
        ("conv_strip", &["conv_strip"]),
    ];
    // `cuda/` holds exactly the files of the kernel table (patterns::kernel_files!), in no other order.
    let mut on_disk: Vec<String> = std::fs::read_dir("cuda")
        .unwrap()
        .filter_map(|e| e.ok()?.path().file_stem().map(|s| s.to_string_lossy().into_owned()).filter(|_| true))
        .filter(|n| std::path::Path::new("cuda").join(format!("{n}.cu")).is_file())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = SOURCES.iter().map(|s| s.name.to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every cuda/*.cu is in the kernel table, and only those");
    // Each distinct compile once (a build-free file's options are the same for every build), on every core.
    let arch = compile::arch_option(9, 0, compile::Code::Ptx);
    let mut jobs: Vec<(&KernelSource, &[&str], Build)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for build in builds() {
        for (src, (name, entries)) in SOURCES.iter().zip(&expected) {
            assert_eq!(src.name, *name);
            // The filter's own files take the filter's builds: the next test.
            if edge_sources().iter().any(|e| e.name == *name)
                && seen.insert((*name, compile::options_for(&arch, build, src)))
            {
                jobs.push((src, *entries, build));
            }
        }
    }
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(4))
            .map(|chunk| {
                let arch = &arch;
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for &(src, entries, build) in chunk {
                        let name = src.name;
                        let ptx = match compile::compile(src, arch, build) {
                            Ok(p) => p,
                            Err(e) => {
                                failures.push(format!("{name}.cu {build:?}: {e}"));
                                continue;
                            }
                        };
                        for entry in entries.iter() {
                            if !ptx.contains(&format!(".entry {entry}(")) {
                                failures.push(format!("{name}.cu {build:?} does not export {entry}"));
                            }
                        }
                        // No arrays in local memory (`.local` in PTX: per-thread arrays the compiler could not keep
                        // in registers). Register spills appear only in SASS, after ptxas: scripts/sass-report.sh
                        // shows those.
                        if ptx.contains(".local") {
                            failures.push(format!("{name}.cu {build:?} declares local memory"));
                        }
                    }
                    failures
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// The build-free files ([`BUILD_FREE`]), which every build takes in the default build's options, really take nothing
/// from a build: compiled with the default build's options and with those of a build far from it, the PTX is the same.
#[test]
fn the_build_free_files_take_nothing_from_a_build() {
    if !nvrtc_or_skip("the_build_free_files_take_nothing_from_a_build") {
        return;
    }
    let arch = compile::arch_option(9, 0, compile::Code::Ptx);
    let f = Filter { ksize: Ksize::K7, grey: Grey::Bt601, norm: Norm::L1, ..Filter::default() };
    let far = Build::with_output(f, Output::Gradients(Number::F32));
    assert_ne!(compile::options(&arch, far), compile::options(&arch, Build::default()));
    for name in BUILD_FREE {
        let src = SOURCES.iter().find(|s| s.name == name).expect("a kernel file");
        assert_eq!(compile::options_for(&arch, far, src), compile::options(&arch, Build::default()));
        let ptx = |build| compile::compile_with(src, &compile::options(&arch, build), compile::Code::Ptx).unwrap();
        assert!(ptx(far) == ptx(Build::default()), "{name}.cu: its PTX depends on the build; take it off BUILD_FREE");
    }
}

/// The filter's kernel files (`filter --variant gpu-*`) compile for every kind of kernel — smoothing and gradient,
/// radius 1 to 7, 32- and 64-bit sums, taps compiled in or not — and every tuning the studies use, export their
/// kernels and keep every array in registers or shared memory.
#[test]
fn every_filter_strategy_compiles_for_every_kind_of_kernel() {
    use cuda_sobel::conv::ConvKernel;
    use cuda_sobel::gpu::conv::{build_of, Tuning};
    use cuda_sobel::variant::Variant;
    if !nvrtc_or_skip("every_filter_strategy_compiles_for_every_kind_of_kernel") {
        return;
    }
    let laplacian = ConvKernel::from_text("laplacian", "0 1 0\n1 -4 1\n0 1 0\ndivisor 1\n").unwrap();
    let kernels = ["box:3", "box:15", "gaussian:15", "scharr:9", "sobel:7"].map(|s| ConvKernel::parse(s).unwrap());
    let tunings = [
        Tuning::default(),
        Tuning { block: Some((8, 4)), tile_loaders: Some(1), ..Tuning::default() },
        Tuning { local_predefined: true, ..Tuning::default() },
    ];
    let strip_tunings = [Tuning::default(), Tuning { strip_columns: Some(8), ..Tuning::default() }];
    let arch = compile::arch_option(9, 0, compile::Code::Ptx);
    let mut jobs = Vec::new();
    for k in kernels.iter().chain([&laplacian]) {
        for s in Variant::KERNELS.into_iter().filter(|s| s.is_gpu()) {
            if s.needs_rank_one() && k.factors().is_none() {
                continue;
            }
            let ts: &[Tuning] = match s {
                Variant::GpuLocal => &tunings,
                Variant::GpuStrip => &strip_tunings,
                _ => &tunings[..1],
            };
            jobs.extend(ts.iter().map(|&t| build_of(&arch, k, s, t)));
        }
    }
    jobs.dedup();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(4))
            .map(|chunk| {
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for (file, options) in chunk {
                        let src = SOURCES.iter().find(|s| s.name == *file).unwrap();
                        match compile::compile_with(src, options, compile::Code::Ptx) {
                            Ok(ptx) if String::from_utf8_lossy(&ptx).contains(".local") => {
                                failures.push(format!("{file}.cu {options:?} declares local memory"))
                            }
                            Ok(_) => {}
                            Err(e) => failures.push(format!("{options:?}: {e}")),
                        }
                    }
                    failures
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// `Tuning::overlap` (the filter-size study's overlapped pyramid): every kernel of every filter file, built with it
/// for sm_90, first tells the GPU the next launch may start (`next_launch_may_start` in cuda/conv.cuh): the
/// instruction in every entry's PTX; built without it, nowhere.
#[test]
fn every_filter_kernel_takes_the_overlap_only_when_asked() {
    use cuda_sobel::conv::ConvKernel;
    use cuda_sobel::gpu::conv::{build_of, Tuning};
    use cuda_sobel::variant::Variant;
    if !nvrtc_or_skip("every_filter_kernel_takes_the_overlap_only_when_asked") {
        return;
    }
    let arch = compile::arch_option(9, 0, compile::Code::Ptx);
    let k = ConvKernel::parse("scharr:5").unwrap();
    let mut failures = Vec::new();
    for s in Variant::KERNELS.into_iter().filter(|s| s.is_gpu()) {
        for overlap in [false, true] {
            let (file, options) = build_of(&arch, &k, s, Tuning { overlap, ..Tuning::default() });
            let src = SOURCES.iter().find(|src| src.name == file).unwrap();
            let ptx = String::from_utf8_lossy(&compile::compile_with(src, &options, compile::Code::Ptx).unwrap())
                .into_owned();
            let entries = ptx.matches(".entry").count();
            assert!(entries > 0, "{file}.cu: no kernel in its PTX");
            let found = ptx.matches("griddepcontrol.launch_dependents").count();
            if found != if overlap { entries } else { 0 } {
                failures
                    .push(format!("{file}.cu overlap={overlap}: the instruction {found} times in {entries} kernels"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `sobel.cuh`'s defaults (a file compiled with no `-D`, as `nvcc -ptx cuda/fused.cu` does) are the default
/// build's constants: the same PTX as with the host's options for it.
#[test]
fn the_header_defaults_are_the_default_build() {
    if !nvrtc_or_skip("the_header_defaults_are_the_default_build") {
        return;
    }
    let arch = compile::arch_option(9, 0, compile::Code::Ptx);
    let base = vec![arch.clone(), "--prec-sqrt=true".to_owned(), "--fmad=false".to_owned()];
    for src in &SOURCES {
        let plain = compile::compile_with(src, &base, compile::Code::Ptx).unwrap();
        let built = compile::compile_with(src, &compile::options(&arch, Build::default()), compile::Code::Ptx).unwrap();
        assert!(plain == built, "{}.cu: the defaults of sobel.cuh differ from Build::default()'s -D options", src.name);
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

/// `--emit-ptx` writes every kernel file's PTX, the filter's own files built as the filter builds them for the same
/// stencil (an edge build would leave `conv_strip.cu` a box with negative taps, which it refuses to compile).
#[test]
fn emit_ptx_writes_every_file() {
    if !nvrtc_or_skip("emit_ptx_writes_every_file") {
        return;
    }
    for ksize in [Ksize::K3, Ksize::K7] {
        let dir = tempfile::tempdir().unwrap();
        let filter = Filter { ksize, ..Filter::default() };
        let written = gpu::emit_ptx(dir.path(), filter).unwrap_or_else(|e| panic!("{ksize:?}: {e}"));
        assert_eq!(written.len(), SOURCES.len());
        for src in &SOURCES {
            let ptx = std::fs::read_to_string(dir.path().join(format!("{}.ptx", src.name))).unwrap();
            assert!(ptx.contains(".entry "), "{}: no kernel in its PTX", src.name);
        }
    }
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
    let arch = compile::arch_option(prebuilt::MAJOR, prebuilt::MINOR, compile::Code::Cubin);
    for src in edge_sources() {
        let options = compile::options_for(&arch, Build::default(), src);
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
    // The filter's own files are compiled for each filter kernel: no default build, nothing prebuilt.
    for src in &SOURCES[edge_sources().len()..] {
        assert_eq!(prebuilt::manifest_key(src.name), None, "{}: a filter file in the prebuilt set", src.name);
        assert!(!std::path::Path::new(&format!("{}/{}.cubin", prebuilt::DIR, src.name)).exists());
    }
}

/// gpu-strip's aligned march keeps every value in registers for each stencil and output (ptxas's report for sm_90,
/// through NVRTC): a spill there is a local-memory load in the loop that carries almost all of the kernel's work. One
/// once crept in unnoticed (an argument formed before a test instead of after it) and cost the 3×3 edges 3.6 % at
/// 16384² on the H100; the general kernel's edge groups are allowed theirs.
#[test]
fn the_aligned_strip_march_does_not_spill() {
    if !nvrtc_or_skip("the_aligned_strip_march_does_not_spill") {
        return;
    }
    let strip = SOURCES.iter().find(|s| s.name == "strip").expect("strip.cu");
    for ksize in [Ksize::K3, Ksize::K5, Ksize::K7] {
        let filter = Filter { ksize, ..Filter::default() };
        let int = Number::integer_for(&filter.stencil());
        let outputs = [Output::Edges, Output::Gradients(int), Output::Gradients(Number::F32), Output::Direction];
        // Canny's words, 16 and 32 bits (the suppression's input: OUTPUT_SECTORS).
        for output in outputs.into_iter().chain([Output::Sectors(Number::I16), Output::Sectors(Number::I32)]) {
            let mut options =
                compile::options(&compile::arch_option(9, 0, compile::Code::Cubin), Build::with_output(filter, output));
            options.push("--ptxas-options=-v".into());
            let (_, log) = compile::compile_text_with_log(
                "cuda/strip.cu",
                &compile::expanded_source(strip),
                &options,
                compile::Code::Cubin,
            )
            .unwrap_or_else(|e| panic!("{e}"));
            // "Compiling entry function 'sobel_strip_aligned' for 'sm_90'", then "… N bytes spill stores, M bytes
            // spill loads".
            let report = log
                .lines()
                .skip_while(|l| !l.contains("'sobel_strip_aligned'"))
                .find(|l| l.contains("spill stores"))
                .unwrap_or_else(|| panic!("no ptxas report of sobel_strip_aligned in:\n{log}"));
            assert!(
                report.contains(" 0 bytes spill stores, 0 bytes spill loads"),
                "strip.cu, ksize {}, {output:?}: the aligned march spills: {}",
                ksize as u32,
                report.trim()
            );
        }
    }
}
