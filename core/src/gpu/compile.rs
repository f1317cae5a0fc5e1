//! Compiling a kernel file with NVRTC: its `#include`s expanded from the headers embedded in the binary,
//! and the options the equivalence contract in `cuda/sobel.cuh` depends on:
//! - `--gpu-architecture=sm_XY`, the device's exact architecture, so NVRTC hands back machine code (CUBIN)
//!   that the driver loads as is, with no JIT step at run time; `--emit-ptx`
//!   and the CI's compile test ask for `compute_XY` and get PTX, the portable text students read;
//! - `--prec-sqrt=true` (NVRTC's default, stated explicitly): `sqrtf` correctly rounded, which makes the
//!   magnitude exact;
//! - `--fmad=false`: no fused multiply-add contraction; our arithmetic is integer apart from one `sqrtf`
//!   (and the report-compatible doubles, which use explicit `__dmul_rn`/`__dadd_rn` as well), but this
//!   keeps any float expression evaluated as written, as on the CPU;
//! - `-DSCHARR=1` and/or `-DCOMPAT_REPORT=1` for a [`Build`] other than the default one.

use super::kernels::Build;
use super::patterns::KernelSource;
use super::GpuError;

/// The shared header every kernel file includes: the exact arithmetic of `core/src/sobel.rs`.
pub const HEADER: &str = include_str!("../../../cuda/sobel.cuh");

/// Every header a kernel file may include, by the name it is included by.
pub const HEADERS: [(&str, &str); 3] = [
    ("sobel.cuh", HEADER),
    ("row16.cuh", include_str!("../../../cuda/row16.cuh")),
    ("conv.cuh", include_str!("../../../cuda/conv.cuh")),
];

/// What NVRTC is asked to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// PTX text for a virtual architecture (`compute_XY`): portable; the driver JIT-compiles it when loaded
    /// (3.0–3.5 s for two files on the H100 with its JIT cache off).
    Ptx,
    /// Machine code for one real architecture (`sm_XY`): the driver loads it without compiling.
    Cubin,
}

impl Code {
    /// The cache file extension of this kind of code.
    pub fn extension(self) -> &'static str {
        match self {
            Code::Ptx => "ptx",
            Code::Cubin => "cubin",
        }
    }
}

/// The `--gpu-architecture` value for a compute capability: `compute_XY` for PTX, `sm_XY` for CUBIN.
pub fn arch_option(major: i32, minor: i32, code: Code) -> String {
    match code {
        Code::Ptx => format!("--gpu-architecture=compute_{major}{minor}"),
        Code::Cubin => format!("--gpu-architecture=sm_{major}{minor}"),
    }
}

/// The source as NVRTC sees it: each `#include "x.cuh"` line replaced by that header's (expanded) text.
/// The headers carry include guards, so a header included twice expands to nothing the second time.
pub fn expanded_source(src: &KernelSource) -> String {
    expand(src.source)
}

/// Every `#include` line must name one of [`HEADERS`] (a trailing comment is allowed): one left
/// unexpanded would be found by NVRTC next to the source's name — on a machine with the repository, not
/// on a user's — so it panics instead (the sources are ours; a test expands every one).
fn expand(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 4);
    for line in text.lines() {
        let Some(directive) = line.trim().strip_prefix("#include") else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let name = directive.trim().strip_prefix('"').and_then(|rest| rest.split_once('"')).map(|(name, _)| name);
        match name.and_then(|name| HEADERS.iter().find(|(h, _)| *h == name)) {
            Some((_, header)) => out.push_str(&expand(header)),
            None => panic!("unknown header in {line}"),
        }
    }
    out
}

/// The full option list for `build` on the architecture `arch`.
///
/// `CUDA_SOBEL_DEFINES` (for measuring, as `bench/probe` does with nvcc): more `-D` options, separated by spaces,
/// that change a kernel's tuning constants — `-DSTRIP_PREFETCH=2`, `-DSTRIP_MIN_BLOCKS=3` — without a rebuild;
/// the kernel cache keys by the options, so such builds are cached apart, and the machine code built into the
/// binary is not used for them. Anything but `-D…` words is ignored.
pub fn options(arch: &str, build: Build) -> Vec<String> {
    let mut o = base_options(arch);
    o.extend(build.defines());
    o.extend(extra_defines());
    o
}

/// The kernel files whose code takes nothing from a build — the timing kernels, batch mode's PNG unfiltering and
/// deflating: they include `sobel.cuh` for its types alone. Each is compiled once, with the default build's options,
/// whichever build asks for it (so the prebuilt code serves every build, and a context loads one module of each);
/// `tests/kernels.rs` checks that two far-apart builds give each the same PTX.
pub const BUILD_FREE: [&str; 3] = ["timing", "unfilter", "deflate"];

/// The options kernel file `src` is compiled with for `build`: [`options`], and for a filter file the build's stencil
/// as a filter kernel ([`Build::conv_defines`]); a file that takes nothing from a build ([`BUILD_FREE`]) the default
/// build's, whatever `build` is.
pub fn options_for(arch: &str, build: Build, src: &KernelSource) -> Vec<String> {
    if BUILD_FREE.contains(&src.name) {
        return options(arch, Build::default());
    }
    let mut o = options(arch, build);
    if super::patterns::is_filter_file(src) {
        o.extend(build.conv_defines());
    }
    o
}

/// The architecture and the arithmetic options every kernel file is compiled with (the edge builds' `-D` constants
/// follow in [`options`]; the filter's own in `conv::build_of`).
pub fn base_options(arch: &str) -> Vec<String> {
    vec![arch.to_owned(), "--prec-sqrt=true".into(), "--fmad=false".into()]
}

/// The `-D` options of `CUDA_SOBEL_DEFINES` ([`options`]); the filter's builds take them too (`conv::build_of`).
pub fn extra_defines() -> Vec<String> {
    let extra = std::env::var("CUDA_SOBEL_DEFINES").unwrap_or_default();
    extra.split_whitespace().filter(|w| w.starts_with("-D")).map(str::to_owned).collect()
}

/// Compiles one kernel file to PTX text, for the (virtual) architecture `arch` and `build`.
pub fn compile(src: &KernelSource, arch: &str, build: Build) -> Result<String, GpuError> {
    let ptx = compile_with(src, &options_for(arch, build, src), Code::Ptx)?;
    Ok(String::from_utf8_lossy(&ptx).into_owned())
}

/// Compiles one kernel file with exactly these NVRTC options to `code` (PTX without its trailing NUL, or
/// CUBIN). NVRTC is loaded here, on the first compile, not before: a run whose kernels all come from the
/// cache never loads it (a cold load took 126 ms on the H200 machine; in warm runs the saving was within
/// noise).
pub fn compile_with(src: &KernelSource, options: &[String], code: Code) -> Result<Vec<u8>, GpuError> {
    compile_text(&format!("cuda/{}.cu", src.name), &expanded_source(src), options, code)
}

/// A student's kernel file (`--kernel-file`) as NVRTC sees it: each `#include "sobel.cuh"` / `"row16.cuh"`
/// replaced by the header's text, then a `#line` directive, so that NVRTC's messages name the student's
/// own line numbers. Any other `#include "…"` is an error naming it.
pub fn student_source(file: &str, text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len() + HEADER.len());
    for (i, line) in text.lines().enumerate() {
        let included = line.trim().strip_prefix("#include \"").and_then(|rest| rest.strip_suffix('"'));
        match (included, included.and_then(|name| HEADERS.iter().find(|(h, _)| *h == name))) {
            (Some(_), Some((_, header))) => {
                out.push_str(&expand(header));
                out.push_str(&format!("#line {} \"{file}\"\n", i + 2));
            }
            (Some(name), None) => {
                let known: Vec<_> = HEADERS.iter().map(|(h, _)| *h).collect();
                return Err(format!(
                    "{file}:{}: cannot include \"{name}\" (the headers at hand: {})",
                    i + 1,
                    known.join(", ")
                ));
            }
            (None, _) => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    Ok(out)
}

/// Compiles `text` (already expanded), named `file` in NVRTC's messages, with these options to `code`.
pub fn compile_text(file: &str, text: &str, options: &[String], code: Code) -> Result<Vec<u8>, GpuError> {
    compile_text_with_log(file, text, options, code).map(|(out, _log)| out)
}

/// [`compile_text`], with NVRTC's log of a successful compile (with `--ptxas-options=-v` among the options,
/// ptxas's report of each kernel's registers and spills: `examples/kernel_resources.rs`).
pub fn compile_text_with_log(
    file: &str,
    text: &str,
    options: &[String],
    code: Code,
) -> Result<(Vec<u8>, String), GpuError> {
    use cudarc::nvrtc::{result, sys};
    if !super::nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    let fail = |log: String| GpuError::Compile { file: file.to_owned(), log };
    let text = std::ffi::CString::new(text).map_err(|_| fail("the source contains a NUL byte".into()))?;
    let name = std::ffi::CString::new(file).map_err(|_| fail("the file name contains a NUL byte".into()))?;
    let program = Program(result::create_program(&text, Some(&name)).map_err(|e| fail(format!("{e:?}")))?);
    // SAFETY: `program.0` was created above and is destroyed only by `Program`'s drop, after these calls;
    // `text` and `name`, which it may point into, outlive it. Every buffer handed to NVRTC is sized by the
    // matching *Size call first.
    unsafe {
        if result::compile_program(program.0, options).is_err() {
            let log = result::get_program_log(program.0).unwrap_or_default();
            let log = std::ffi::CStr::from_ptr(log.as_ptr()).to_string_lossy();
            return Err(fail(log.trim().to_owned()));
        }
        let mut size = 0usize;
        let sized = match code {
            Code::Ptx => sys::nvrtcGetPTXSize(program.0, &mut size),
            Code::Cubin => sys::nvrtcGetCUBINSize(program.0, &mut size),
        };
        sized.result().map_err(|e| fail(format!("{e:?}")))?;
        let mut out = vec![0u8; size];
        let got = match code {
            Code::Ptx => sys::nvrtcGetPTX(program.0, out.as_mut_ptr().cast()),
            Code::Cubin => sys::nvrtcGetCUBIN(program.0, out.as_mut_ptr().cast()),
        };
        got.result().map_err(|e| fail(format!("{e:?}")))?;
        if code == Code::Ptx {
            while out.last() == Some(&0) {
                out.pop();
            }
        }
        let log = result::get_program_log(program.0).unwrap_or_default();
        let log = std::ffi::CStr::from_ptr(log.as_ptr()).to_string_lossy().trim().to_owned();
        Ok((out, log))
    }
}

/// An NVRTC program, destroyed when dropped.
struct Program(cudarc::nvrtc::sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program` and destroyed only here.
        let _ = unsafe { cudarc::nvrtc::result::destroy_program(self.0) };
    }
}

/// What a cached entry of `src` compiled with `options` to `code` is keyed by: the expanded source, the
/// options (architecture and build included), the kind of code and this tool's version, hashed with
/// SHA-256 (stable across Rust releases, unlike `DefaultHasher`: the keys of the code embedded by
/// [`super::prebuilt`] must not change with the compiler). Not the NVRTC version: asking for it loads NVRTC,
/// which a run whose kernels are all cached need not do. Code from an older NVRTC stays loadable; code the
/// driver refuses is compiled afresh ([`super::kernels`]).
pub fn cache_key(src: &KernelSource, options: &[String], code: Code) -> u64 {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for part in [expanded_source(src).as_str(), code.extension(), env!("CARGO_PKG_VERSION")]
        .into_iter()
        .chain(options.iter().map(String::as_str))
    {
        h.update(part.as_bytes());
        h.update([0]);
    }
    u64::from_be_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::patterns::SOURCES;

    #[test]
    fn header_border_constants_match_the_rust_enum() {
        use crate::sobel::Border;
        for b in Border::ALL {
            let line = format!("#define BORDER_{} {}", b.name().to_uppercase(), b as i32);
            assert!(HEADER.contains(&line), "sobel.cuh must contain `{line}`");
        }
        let sat = format!("#define SATURATED_SQUARE {}u", crate::sobel::SATURATED_SQUARE);
        assert!(HEADER.contains(&sat), "sobel.cuh must contain `{sat}`");
        // The stencil's defaults (a file compiled with no -D) are the default build's: 3×3 Sobel.
        let squeezed: String = HEADER.chars().filter(|c| *c != ' ').collect();
        for d in crate::gpu::kernels::Build::default().defines() {
            let (name, value) = d.trim_start_matches("-D").split_once('=').expect("-DNAME=VALUE");
            let line = format!("#define{name}{value}");
            assert!(squeezed.contains(&line), "sobel.cuh's default must be `#define {name} {value}`");
        }
    }

    #[test]
    fn an_include_with_a_comment_is_expanded_and_an_unknown_one_refused() {
        assert!(super::expand("#include \"sobel.cuh\"  // u8\n").contains("BORDER_REFLECT101"));
        let unknown = std::panic::catch_unwind(|| super::expand("#include \"other.cuh\"\n"));
        assert!(unknown.is_err(), "an unknown header panics");
        let system = std::panic::catch_unwind(|| super::expand("#include <cstdio>\n"));
        assert!(system.is_err(), "so does a system header (NVRTC has none)");
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
