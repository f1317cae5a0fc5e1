//! The kernel table: every `.cu` file in `cuda/` ([`super::patterns::SOURCES`]), compiled by NVRTC at run
//! time to machine code for the device's exact architecture ([`super::compile`]), cached on disk
//! ([`super::cache`]), and loaded into a typed [`KernelSet`] — one per [`Build`] (operator × arithmetic),
//! each file loaded once per run, when first needed, the files a run needs compiled side by side — so
//! that no kernel-name string appears outside the pattern files. If the driver refuses cached code, it
//! is compiled afresh.

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use super::cache::CodeCache;
use super::compile::{cache_key, compile_with, options, Code};
use super::patterns::{
    const_taps, fused, fused_map::FusedMap, map::Map, n_per_thread::NPerThread, selftest::SelfTest,
    separable::Separable, strip::Strip, tiled, timing::Timing, unfilter::Unfilter, vec16::Vec16, KernelSource, Pattern,
    RgbKernel, SOURCES,
};
use super::GpuError;
use crate::sobel::{Compat, Filter, Operator};
use crate::variant::Variant;

/// What is compiled into the kernels: the operator's taps and the arithmetic (`-D` options). The border
/// is a kernel argument, so one build serves every border.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Build {
    /// Sobel or Scharr taps.
    pub operator: Operator,
    /// Exact or the report's arithmetic.
    pub compat: Compat,
}

impl Build {
    /// The build `filter` needs (its border is a kernel argument).
    pub fn of(filter: Filter) -> Build {
        Build { operator: filter.operator, compat: filter.compat }
    }

    /// The NVRTC `-D` options that select this build (none for the default).
    pub fn defines(self) -> Vec<String> {
        let mut d = Vec::new();
        if self.operator == Operator::Scharr {
            d.push("-DSCHARR=1".to_owned());
        }
        if self.compat == Compat::Report {
            d.push("-DCOMPAT_REPORT=1".to_owned());
        }
        d
    }
}

/// How the kernels were obtained this time, for the report.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct LoadStats {
    /// Files compiled by NVRTC this time.
    pub compiled: usize,
    /// Files read from the kernel cache.
    pub from_cache: usize,
    /// Files loaded from the machine code embedded in the binary ([`super::prebuilt`]).
    pub prebuilt: usize,
}

impl std::ops::AddAssign for LoadStats {
    fn add_assign(&mut self, o: LoadStats) {
        self.compiled += o.compiled;
        self.from_cache += o.from_cache;
        self.prebuilt += o.prebuilt;
    }
}

/// Every pattern's kernels of one build, each kernel file compiled (or read from the cache) and loaded the
/// first time something needs it — so a run of one variant compiles one file, not eleven
/// (`docs/performance.md` v0.12).
pub struct KernelSet {
    ctx: Arc<CudaContext>,
    options: Vec<String>,
    /// What loading has cost so far.
    stats: Mutex<LoadStats>,
    modules: [OnceLock<Arc<CudaModule>>; SOURCES.len()],
    map: OnceLock<Map>,
    fused_map: OnceLock<FusedMap>,
    fused: OnceLock<RgbKernel>,
    n_per_thread: OnceLock<NPerThread>,
    const_taps: OnceLock<RgbKernel>,
    separable: OnceLock<Separable>,
    tiled: OnceLock<RgbKernel>,
    vec16: OnceLock<Vec16>,
    strip: OnceLock<Strip>,
    selftest: OnceLock<SelfTest>,
    timing: OnceLock<Timing>,
    unfilter: OnceLock<Unfilter>,
}

/// A pattern's loaded kernels, loading them (and their files) on first use; `?` returns a load's error from
/// the enclosing function.
macro_rules! lazily {
    ($set:expr, $cell:ident, $load:expr) => {
        match $set.$cell.get() {
            Some(k) => k,
            None => {
                let k = $load.map_err(GpuError::from)?;
                $set.$cell.get_or_init(|| k)
            }
        }
    };
}

impl KernelSet {
    /// A set for `build` on `arch` (an `sm_XY` option: CUBIN); nothing is compiled or loaded yet.
    pub fn new(ctx: &Arc<CudaContext>, arch: &str, build: Build) -> KernelSet {
        KernelSet {
            ctx: ctx.clone(),
            options: options(arch, build),
            stats: Mutex::new(LoadStats::default()),
            modules: Default::default(),
            map: OnceLock::new(),
            fused_map: OnceLock::new(),
            fused: OnceLock::new(),
            n_per_thread: OnceLock::new(),
            const_taps: OnceLock::new(),
            separable: OnceLock::new(),
            tiled: OnceLock::new(),
            vec16: OnceLock::new(),
            strip: OnceLock::new(),
            selftest: OnceLock::new(),
            timing: OnceLock::new(),
            unfilter: OnceLock::new(),
        }
    }

    /// What loading has cost so far (files compiled, files read from the cache).
    pub fn stats(&self) -> LoadStats {
        *self.stats.lock().expect("no panic while holding the stats")
    }

    /// The module of kernel file `name`, loaded on first use.
    fn module(&self, name: &str) -> Result<&Arc<CudaModule>, GpuError> {
        let i = index_of(name);
        if let Some(m) = self.modules[i].get() {
            return Ok(m);
        }
        // One load at a time; a thread that waited here finds the module another just loaded.
        let mut stats = self.stats.lock().expect("no panic while holding the stats");
        if let Some(m) = self.modules[i].get() {
            return Ok(m);
        }
        let cache = CodeCache::in_default_folder();
        let code = code_for(&SOURCES[i], &self.options, &cache, &mut stats)?;
        let m = load_module(&self.ctx, &SOURCES[i], &self.options, &cache, code, &mut stats)?;
        Ok(self.modules[i].get_or_init(|| m))
    }

    /// Loads the kernel files that `variants` and timing need. The files not yet cached are compiled at the
    /// same time, one thread each (NVRTC is thread-safe across programs), so a first run waits for its
    /// slowest file, not for the sum of them.
    pub fn preload(&self, variants: &[Variant]) -> Result<(), GpuError> {
        let mut names = vec!["timing"];
        for &name in variants.iter().flat_map(|&v| files_of(v)) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let mut stats = self.stats.lock().expect("no panic while holding the stats");
        let missing: Vec<usize> =
            names.iter().map(|n| index_of(n)).filter(|&i| self.modules[i].get().is_none()).collect();
        let cache = CodeCache::in_default_folder();
        let codes: Vec<Result<(Fetched, LoadStats), GpuError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = missing
                .iter()
                .map(|&i| {
                    let (cache, options) = (&cache, &self.options);
                    scope.spawn(move || {
                        let mut s = LoadStats::default();
                        code_for(&SOURCES[i], options, cache, &mut s).map(|code| (code, s))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a compile thread does not panic")).collect()
        });
        for (&i, code) in missing.iter().zip(codes) {
            let (code, s) = code?;
            *stats += s;
            let m = load_module(&self.ctx, &SOURCES[i], &self.options, &cache, code, &mut stats)?;
            let _ = self.modules[i].set(m);
        }
        drop(stats);
        self.timing()?;
        for &v in variants.iter().filter(|v| v.is_gpu()) {
            self.pattern(v)?;
        }
        Ok(())
    }

    /// The pattern a GPU variant runs, its kernel file loaded if it was not yet.
    pub fn pattern(&self, variant: Variant) -> Result<&dyn Pattern, GpuError> {
        Ok(match variant {
            Variant::GpuMap => lazily!(self, map, Map::load(self.module("map")?)) as &dyn Pattern,
            Variant::GpuFusedMap => {
                lazily!(self, fused_map, FusedMap::load(self.module("map")?, self.module("fused_map")?))
            }
            Variant::GpuN1(_) => lazily!(self, n_per_thread, NPerThread::load(self.module("n_per_thread")?)),
            Variant::GpuFused => lazily!(self, fused, fused::load(self.module("fused")?)),
            Variant::GpuConstTaps => lazily!(self, const_taps, const_taps::load(self.module("const_taps")?)),
            Variant::GpuSeparable => lazily!(self, separable, Separable::load(self.module("separable")?)),
            Variant::GpuTiled => lazily!(self, tiled, tiled::load(self.module("tiled")?)),
            Variant::GpuVec16 => lazily!(self, vec16, Vec16::load(self.module("vec16")?)),
            Variant::GpuStrip => lazily!(self, strip, Strip::load(self.module("strip")?)),
            Variant::CpuScalar | Variant::CpuRayon => panic!("{} is not a GPU variant", variant.name()),
        })
    }

    /// gpu-strip's kernels as their own type, for launches on raw device memory ([`Strip::launch_raw`]).
    pub fn strip(&self) -> Result<&Strip, GpuError> {
        Ok(lazily!(self, strip, Strip::load(self.module("strip")?)))
    }

    /// cuda/timing.cu's kernels (every timed run needs them).
    pub fn timing(&self) -> Result<&Timing, GpuError> {
        Ok(lazily!(self, timing, Timing::load(self.module("timing")?)))
    }

    /// cuda/unfilter.cu's kernels (batch mode's PNG decoding).
    pub fn unfilter(&self) -> Result<&Unfilter, GpuError> {
        Ok(lazily!(self, unfilter, Unfilter::load(self.module("unfilter")?)))
    }

    /// cuda/selftest.cu's kernels (tests only).
    pub fn selftest(&self) -> Result<&SelfTest, GpuError> {
        Ok(lazily!(self, selftest, SelfTest::load(self.module("selftest")?)))
    }
}

/// The kernel files a GPU variant's pattern loads its kernels from.
fn files_of(variant: Variant) -> &'static [&'static str] {
    match variant {
        Variant::GpuMap => &["map"],
        Variant::GpuFusedMap => &["map", "fused_map"],
        Variant::GpuN1(_) => &["n_per_thread"],
        Variant::GpuFused => &["fused"],
        Variant::GpuConstTaps => &["const_taps"],
        Variant::GpuSeparable => &["separable"],
        Variant::GpuTiled => &["tiled"],
        Variant::GpuVec16 => &["vec16"],
        Variant::GpuStrip => &["strip"],
        Variant::CpuScalar | Variant::CpuRayon => &[],
    }
}

fn index_of(name: &str) -> usize {
    SOURCES.iter().position(|s| s.name == name).expect("a kernel file of SOURCES")
}

/// One kernel file's machine code, and whether it came from the cache.
type Fetched = (Vec<u8>, bool);

/// One kernel file's machine code: built into the binary when made from this very source and options for
/// this architecture ([`super::prebuilt`]), else from the cache when an intact entry is there, else
/// compiled (and cached). Counts which in `stats`.
fn code_for(
    src: &KernelSource,
    options: &[String],
    cache: &CodeCache,
    stats: &mut LoadStats,
) -> Result<Fetched, GpuError> {
    let key = cache_key(src, options, Code::Cubin);
    if let Some(code) = super::prebuilt::get(src.name, key, Code::Cubin) {
        stats.prebuilt += 1;
        return Ok((code.to_vec(), true));
    }
    if let Some(code) = cache.get(src.name, key, Code::Cubin) {
        stats.from_cache += 1;
        return Ok((code, true));
    }
    let code = compile_with(src, options, Code::Cubin)?;
    cache.put(src.name, key, Code::Cubin, &code);
    stats.compiled += 1;
    Ok((code, false))
}

/// `code` (from [`code_for`]) loaded as a module. If the driver refuses code that came from the cache
/// (intact by its checksum, but e.g. written by an NVRTC this driver is too old for), the file is compiled
/// afresh once.
fn load_module(
    ctx: &Arc<CudaContext>,
    src: &KernelSource,
    options: &[String],
    cache: &CodeCache,
    (code, cached): Fetched,
    stats: &mut LoadStats,
) -> Result<Arc<CudaModule>, GpuError> {
    match ctx.load_module(Ptx::from_binary(code)) {
        Ok(module) => Ok(module),
        Err(refused) if cached => {
            let code = compile_with(src, options, Code::Cubin).map_err(|_| GpuError::Driver(refused))?;
            cache.put(src.name, cache_key(src, options, Code::Cubin), Code::Cubin, &code);
            stats.compiled += 1;
            ctx.load_module(Ptx::from_binary(code)).map_err(GpuError::Driver)
        }
        Err(refused) => Err(GpuError::Driver(refused)),
    }
}
