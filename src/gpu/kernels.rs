//! The kernel table: every `.cu` file in `cuda/`, compiled to PTX by NVRTC at run time, cached on disk,
//! and loaded once per process into a typed [`Kernels`] struct — no kernel-name strings elsewhere.
//!
//! Compile options, and why (the equivalence contract in `cuda/sobel.cuh` depends on them):
//! - `--gpu-architecture=compute_XY` of the device, so the driver JIT-compiles PTX for the exact chip;
//! - `--prec-sqrt=true` (NVRTC's default, stated explicitly): `sqrtf` correctly rounded, which makes the
//!   magnitude exact;
//! - `--fmad=false`: no fused multiply-add contraction; our arithmetic is integer apart from one `sqrtf`
//!   (and the report-compatible doubles, which use explicit `__dmul_rn`/`__dadd_rn` as well), but this
//!   keeps any float expression evaluated as written, as on the CPU;
//! - `-DSCHARR=1` and/or `-DCOMPAT_REPORT=1` for a [`Filter`] other than the default one: each
//!   (operator, arithmetic) pair is its own set of modules ([`Kernels::load`] with [`defines`]).
//!
//! The PTX cache lives in `$CUDA_SOBEL_CACHE`, else `$XDG_CACHE_HOME/cuda_sobel`, else
//! `~/.cache/cuda_sobel`. An entry is keyed by the source text, the options and the NVRTC version, and
//! carries a checksum of its own body: a truncated or corrupt entry is detected, deleted and rebuilt,
//! never trusted. If the driver still refuses cached PTX, it is compiled afresh.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{CompileOptions, Ptx};

use super::GpuError;
use crate::sobel::{Compat, Filter, Operator};

/// One `.cu` file: its name (also the PTX file's stem) and source text, embedded in the binary.
pub struct KernelSource {
    pub name: &'static str,
    pub source: &'static str,
}

/// The shared header every kernel file includes: the exact arithmetic of `src/sobel.rs`.
pub const HEADER: &str = include_str!("../../cuda/sobel.cuh");

/// Every header a kernel file may include, by the name it is included by.
pub const HEADERS: [(&str, &str); 2] = [("sobel.cuh", HEADER), ("row16.cuh", include_str!("../../cuda/row16.cuh"))];

/// Every kernel file, one parallel pattern each (plus the tests' selftest kernels).
pub const SOURCES: [KernelSource; 11] = [
    KernelSource { name: "map", source: include_str!("../../cuda/map.cu") },
    KernelSource { name: "fused_map", source: include_str!("../../cuda/fused_map.cu") },
    KernelSource { name: "fused", source: include_str!("../../cuda/fused.cu") },
    KernelSource { name: "n_per_thread", source: include_str!("../../cuda/n_per_thread.cu") },
    KernelSource { name: "const_taps", source: include_str!("../../cuda/const_taps.cu") },
    KernelSource { name: "separable", source: include_str!("../../cuda/separable.cu") },
    KernelSource { name: "tiled", source: include_str!("../../cuda/tiled.cu") },
    KernelSource { name: "vec16", source: include_str!("../../cuda/vec16.cu") },
    KernelSource { name: "strip", source: include_str!("../../cuda/strip.cu") },
    KernelSource { name: "selftest", source: include_str!("../../cuda/selftest.cu") },
    KernelSource { name: "timing", source: include_str!("../../cuda/timing.cu") },
];

/// Every kernel function, loaded. Field comments name the file and the variant that uses it.
#[derive(Clone)]
pub struct Kernels {
    /// map.cu — gpu-map, gpu-fused-map
    pub grey: CudaFunction,
    /// map.cu — gpu-map
    pub sobel_x: CudaFunction,
    /// map.cu — gpu-map
    pub sobel_y: CudaFunction,
    /// map.cu — gpu-map
    pub magnitude: CudaFunction,
    /// fused_map.cu — gpu-fused-map
    pub gradient_magnitude: CudaFunction,
    /// fused.cu — gpu-fused
    pub fused: CudaFunction,
    /// n_per_thread.cu — gpu-n1
    pub n_per_thread: CudaFunction,
    /// n_per_thread.cu — gpu-n1 with `--mapping report`
    pub n_report_mapping: CudaFunction,
    /// const_taps.cu — gpu-const-taps
    pub const_taps: CudaFunction,
    /// separable.cu — gpu-separable, first pass
    pub rows_pass: CudaFunction,
    /// separable.cu — gpu-separable, second pass
    pub columns_pass: CudaFunction,
    /// tiled.cu — gpu-tiled
    pub tiled: CudaFunction,
    /// vec16.cu — gpu-vec16, [general, aligned (width % 16 == 0)]
    pub vec16: [CudaFunction; 2],
    /// strip.cu — gpu-strip, [general, aligned (width % 16 == 0)]
    pub strip: [CudaFunction; 2],
    /// selftest.cu — tests only
    pub selftest_grey: CudaFunction,
    /// selftest.cu — tests only
    pub selftest_magnitude: CudaFunction,
    /// timing.cu — keeps the GPU busy while timed work is queued
    pub spin: CudaFunction,
    /// timing.cu — the launch-overhead measurement
    pub noop: CudaFunction,
}

/// How the kernels were obtained this time, for the report.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct LoadStats {
    pub compiled: usize,
    pub from_cache: usize,
}

/// The NVRTC `-D` options that select `filter`'s operator and arithmetic (none for the default).
pub fn defines(filter: Filter) -> Vec<String> {
    let mut d = Vec::new();
    if filter.operator == Operator::Scharr {
        d.push("-DSCHARR=1".to_owned());
    }
    if filter.compat == Compat::Report {
        d.push("-DCOMPAT_REPORT=1".to_owned());
    }
    d
}

impl Kernels {
    /// Compiles (or reads from the cache) and loads every kernel file with the `-D` options `defines`.
    pub fn load(ctx: &Arc<CudaContext>, arch: &str, defines: &[String]) -> Result<(Kernels, LoadStats), GpuError> {
        let cache = PtxCache::new();
        let mut stats = LoadStats { compiled: 0, from_cache: 0 };
        let opts = options(arch, defines);
        let mut modules = Vec::with_capacity(SOURCES.len());
        for src in &SOURCES {
            modules.push(load_module(ctx, src, &opts, &cache, &mut stats)?);
        }
        let [map, fused_map, fused, n_per_thread, const_taps, separable, tiled, vec16, strip, selftest, timing] =
            <[Arc<CudaModule>; SOURCES.len()]>::try_from(modules).expect("one module per source");
        let f = |m: &Arc<CudaModule>, name: &str| m.load_function(name).map_err(GpuError::Driver);
        let kernels = Kernels {
            grey: f(&map, "grey_kernel")?,
            sobel_x: f(&map, "sobel_x_kernel")?,
            sobel_y: f(&map, "sobel_y_kernel")?,
            magnitude: f(&map, "magnitude_kernel")?,
            gradient_magnitude: f(&fused_map, "gradient_magnitude_kernel")?,
            fused: f(&fused, "sobel_fused")?,
            n_per_thread: f(&n_per_thread, "sobel_n_per_thread")?,
            n_report_mapping: f(&n_per_thread, "sobel_n_report_mapping")?,
            const_taps: f(&const_taps, "sobel_const_taps")?,
            rows_pass: f(&separable, "sobel_rows_pass")?,
            columns_pass: f(&separable, "sobel_columns_pass")?,
            tiled: f(&tiled, "sobel_tiled")?,
            vec16: [f(&vec16, "sobel_vec16_general")?, f(&vec16, "sobel_vec16_aligned")?],
            strip: [f(&strip, "sobel_strip_general")?, f(&strip, "sobel_strip_aligned")?],
            selftest_grey: f(&selftest, "selftest_grey")?,
            selftest_magnitude: f(&selftest, "selftest_magnitude")?,
            spin: f(&timing, "spin")?,
            noop: f(&timing, "noop")?,
        };
        Ok((kernels, stats))
    }
}

/// The `--gpu-architecture` value for a compute capability.
pub fn arch_option(major: i32, minor: i32) -> String {
    format!("--gpu-architecture=compute_{major}{minor}")
}

fn options(arch: &str, defines: &[String]) -> Vec<String> {
    let mut o = vec![arch.to_owned(), "--prec-sqrt=true".into(), "--fmad=false".into()];
    o.extend_from_slice(defines);
    o
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

/// Compiles one kernel file to PTX text, for the architecture `arch` with the `-D` options `defines`.
pub fn compile(src: &KernelSource, arch: &str, defines: &[String]) -> Result<String, GpuError> {
    compile_with(src, &options(arch, defines))
}

fn compile_with(src: &KernelSource, options: &[String]) -> Result<String, GpuError> {
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

fn load_module(
    ctx: &Arc<CudaContext>,
    src: &KernelSource,
    options: &[String],
    cache: &PtxCache,
    stats: &mut LoadStats,
) -> Result<Arc<CudaModule>, GpuError> {
    let key = cache_key(src, options);
    if let Some(ptx) = cache.get(src.name, key) {
        if let Ok(module) = ctx.load_module(Ptx::from_src(ptx)) {
            stats.from_cache += 1;
            return Ok(module);
        }
        // The driver refused PTX that passed its checksum (e.g. written by a newer NVRTC): rebuild.
    }
    let ptx = compile_with(src, options)?;
    cache.put(src.name, key, &ptx);
    stats.compiled += 1;
    ctx.load_module(Ptx::from_src(ptx)).map_err(GpuError::Driver)
}

fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: nvrtcVersion writes two ints through valid pointers; the caller checked libnvrtc is present.
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

fn cache_key(src: &KernelSource, options: &[String]) -> u64 {
    let mut h = DefaultHasher::new();
    (expanded_source(src), options, nvrtc_version(), env!("CARGO_PKG_VERSION")).hash(&mut h);
    h.finish()
}

/// SHA-256 of the entry's body, in hex (so that `sha256sum` can check an entry too).
fn checksum(body: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(body.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// PTX files on disk. Every failure to read or write it just means compiling again.
struct PtxCache {
    dir: Option<PathBuf>,
}

/// An entry's first line; then the PTX. The checksum is the SHA-256 of everything after the first line.
const CACHE_MAGIC: &str = "// cuda_sobel PTX cache entry, body sha256 ";

impl PtxCache {
    fn new() -> Self {
        let dir = std::env::var_os("CUDA_SOBEL_CACHE")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("cuda_sobel")))
            .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/cuda_sobel")));
        PtxCache { dir }
    }

    fn path(&self, name: &str, key: u64) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{name}-{key:016x}.ptx")))
    }

    /// The cached PTX, if present and intact; a damaged entry is removed.
    fn get(&self, name: &str, key: u64) -> Option<String> {
        let path = self.path(name, key)?;
        let text = std::fs::read(&path).ok()?;
        let intact = String::from_utf8(text).ok().and_then(|t| {
            let (first, body) = t.split_once('\n')?;
            (first.strip_prefix(CACHE_MAGIC)? == checksum(body) && !body.contains('\0')).then(|| body.to_owned())
        });
        if intact.is_none() {
            let _ = std::fs::remove_file(&path);
        }
        intact
    }

    fn put(&self, name: &str, key: u64, ptx: &str) {
        let Some(path) = self.path(name, key) else { return };
        let write = || -> std::io::Result<()> {
            let dir = path.parent().expect("cache entries live in a folder");
            std::fs::create_dir_all(dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            std::io::Write::write_all(&mut tmp, format!("{CACHE_MAGIC}{}\n{ptx}", checksum(ptx)).as_bytes())?;
            tmp.persist(&path)?;
            Ok(())
        };
        let _ = write(); // a read-only cache folder only costs a compile next time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_damaged_cache_entry_is_removed_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PtxCache { dir: Some(dir.path().to_owned()) };
        let ptx = ".version 9.0\n.target sm_90\n// a kernel\n";
        cache.put("k", 7, ptx);
        assert_eq!(cache.get("k", 7).as_deref(), Some(ptx));
        assert_eq!(cache.get("k", 8), None, "another key is another entry");

        let path = cache.path("k", 7).unwrap();
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 5]).unwrap(); // truncated
        assert_eq!(cache.get("k", 7), None);
        assert!(!path.exists(), "the damaged entry is deleted");

        cache.put("k", 7, ptx);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0x20; // one flipped bit in the body
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(cache.get("k", 7), None);
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
