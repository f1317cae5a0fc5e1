//! Compiling a kernel file with NVRTC: its `#include`s expanded from the headers embedded in the binary,
//! and the options the equivalence contract in `cuda/sobel.cuh` depends on:
//! - `--gpu-architecture=compute_XY` of the device, so the driver JIT-compiles PTX for the exact chip;
//! - `--prec-sqrt=true` (NVRTC's default, stated explicitly): `sqrtf` correctly rounded, which makes the
//!   magnitude exact;
//! - `--fmad=false`: no fused multiply-add contraction; our arithmetic is integer apart from one `sqrtf`
//!   (and the report-compatible doubles, which use explicit `__dmul_rn`/`__dadd_rn` as well), but this
//!   keeps any float expression evaluated as written, as on the CPU;
//! - `-DSCHARR=1` and/or `-DCOMPAT_REPORT=1` for a [`Build`] other than the default one.

use std::hash::{DefaultHasher, Hash, Hasher};

use cudarc::nvrtc::CompileOptions;

use super::kernels::Build;
use super::patterns::KernelSource;
use super::GpuError;

/// The shared header every kernel file includes: the exact arithmetic of `src/sobel.rs`.
pub const HEADER: &str = include_str!("../../cuda/sobel.cuh");

/// Every header a kernel file may include, by the name it is included by.
pub const HEADERS: [(&str, &str); 2] = [("sobel.cuh", HEADER), ("row16.cuh", include_str!("../../cuda/row16.cuh"))];

/// The `--gpu-architecture` value for a compute capability.
pub fn arch_option(major: i32, minor: i32) -> String {
    format!("--gpu-architecture=compute_{major}{minor}")
}

/// The source as NVRTC sees it: each `#include "x.cuh"` line replaced by that header's (expanded) text.
/// The headers carry include guards, so a header included twice expands to nothing the second time.
pub fn expanded_source(src: &KernelSource) -> String {
    expand(src.source)
}

fn expand(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 4);
    for line in text.lines() {
        let included = line.trim().strip_prefix("#include \"").and_then(|rest| rest.strip_suffix('"'));
        match included.and_then(|name| HEADERS.iter().find(|(h, _)| *h == name)) {
            Some((_, header)) => out.push_str(&expand(header)),
            None => {
                assert!(included.is_none(), "unknown header in {line}");
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// The full option list for `build` on the architecture `arch`.
pub fn options(arch: &str, build: Build) -> Vec<String> {
    let mut o = vec![arch.to_owned(), "--prec-sqrt=true".into(), "--fmad=false".into()];
    o.extend(build.defines());
    o
}

/// Compiles one kernel file to PTX text, for the architecture `arch` with the `-D` options `defines`.
pub fn compile(src: &KernelSource, arch: &str, build: Build) -> Result<String, GpuError> {
    compile_with(src, &options(arch, build))
}

/// Compiles one kernel file with exactly these NVRTC options. NVRTC is loaded here, on the first compile,
/// not before: a run whose kernels all come from the cache never loads it (a cold load took 126 ms on the
/// H200 machine; in warm runs the saving was within noise, `docs/performance.md` v0.13).
pub fn compile_with(src: &KernelSource, options: &[String]) -> Result<String, GpuError> {
    if !super::nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    let opts =
        CompileOptions { options: options.to_vec(), name: Some(format!("{}.cu", src.name)), ..Default::default() };
    match cudarc::nvrtc::compile_ptx_with_opts(expanded_source(src), opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(cudarc::nvrtc::CompileError::CompileError { log, .. }) => {
            Err(GpuError::Compile { module: src.name, log: log.to_string_lossy().trim().to_owned() })
        }
        Err(e) => Err(GpuError::Compile { module: src.name, log: format!("{e:?}") }),
    }
}

/// What a cached entry of `src` compiled with `options` is keyed by: the expanded source, the options
/// (architecture and build included) and this tool's version. Not the NVRTC version: asking for it loads
/// NVRTC, which a run whose kernels are all cached need not do. PTX from an older NVRTC stays valid PTX; PTX
/// the driver refuses (from a newer one) is compiled afresh ([`super::kernels`]).
pub fn cache_key(src: &KernelSource, options: &[String]) -> u64 {
    let mut h = DefaultHasher::new();
    (expanded_source(src), options, env!("CARGO_PKG_VERSION")).hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::patterns::SOURCES;
    use crate::sobel::Operator;

    #[test]
    fn header_border_constants_match_the_rust_enum() {
        use crate::sobel::Border;
        for b in Border::ALL {
            let line = format!("#define BORDER_{} {}", b.name().to_uppercase(), b as i32);
            assert!(HEADER.contains(&line), "sobel.cuh must contain `{line}`");
        }
        let sat = format!("#define SATURATED_SQUARE {}u", crate::sobel::SATURATED_SQUARE);
        assert!(HEADER.contains(&sat), "sobel.cuh must contain `{sat}`");
        // The operators' weights: Sobel's in the default branch, Scharr's under `#if SCHARR`.
        let branches = HEADER.split("#if SCHARR").nth(1).expect("sobel.cuh has an `#if SCHARR` block");
        let (scharr, sobel) = branches.split_once("#else").expect("and an #else");
        for (op, text) in [(Operator::Scharr, scharr), (Operator::Sobel, sobel)] {
            let (e, c) = op.weights();
            for line in [format!("#define TAP_EDGE {e}"), format!("#define TAP_CENTRE {c}")] {
                assert!(text.contains(&line), "sobel.cuh's {} branch must contain `{line}`", op.name());
            }
        }
    }

    #[test]
    fn every_file_includes_the_header_and_starts_with_its_pattern() {
        for src in &SOURCES {
            let expanded = expanded_source(src);
            assert!(expanded.contains("BORDER_REFLECT101"));
            assert!(
                !expanded.lines().any(|l| l.trim().starts_with("#include")),
                "{}: every include expanded",
                src.name
            );
            let first = src.source.lines().next().unwrap();
            let pattern = if matches!(src.name, "selftest" | "timing") { "not a variant" } else { "pattern: " };
            assert!(first.starts_with(&format!("// {}.cu — {pattern}", src.name)), "{first}");
        }
    }
}
