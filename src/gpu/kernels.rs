//! The kernel table: every `.cu` file in `cuda/` ([`super::patterns::SOURCES`]), compiled to PTX by NVRTC at run
//! time ([`super::compile`]), cached on disk ([`super::cache`]), and loaded into a typed [`KernelSet`] —
//! one per [`Build`] (operator × arithmetic), each file loaded once per run, when first needed — so that
//! no kernel-name string appears outside the pattern files. If the driver refuses cached PTX, it is
//! compiled afresh.

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use super::cache::PtxCache;
use super::compile::{cache_key, compile_with, options};
use super::patterns::{
    const_taps, fused, fused_map::FusedMap, map::Map, n_per_thread::NPerThread, selftest::SelfTest,
    separable::Separable, strip::Strip, tiled, timing::Timing, vec16::Vec16, KernelSource, Pattern, RgbKernel, SOURCES,
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
    /// Files read from the PTX cache.
    pub from_cache: usize,
}

impl std::ops::AddAssign for LoadStats {
    fn add_assign(&mut self, o: LoadStats) {
        self.compiled += o.compiled;
        self.from_cache += o.from_cache;
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
    /// A set for `build` on `arch`; nothing is compiled or loaded yet.
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
        }
    }

    /// What loading has cost so far (files compiled, files read from the cache).
    pub fn stats(&self) -> LoadStats {
        *self.stats.lock().expect("no panic while holding the stats")
    }

    /// The module of kernel file `name`, loaded on first use.
    fn module(&self, name: &str) -> Result<&Arc<CudaModule>, GpuError> {
        let i = SOURCES.iter().position(|s| s.name == name).expect("a kernel file of SOURCES");
        if let Some(m) = self.modules[i].get() {
            return Ok(m);
        }
        // One load at a time; a thread that waited here finds the module another just loaded.
        let mut stats = self.stats.lock().expect("no panic while holding the stats");
        if let Some(m) = self.modules[i].get() {
            return Ok(m);
        }
        let m = load_module(&self.ctx, &SOURCES[i], &self.options, &PtxCache::in_default_folder(), &mut stats)?;
        Ok(self.modules[i].get_or_init(|| m))
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

    /// cuda/timing.cu's kernels (every timed run needs them).
    pub fn timing(&self) -> Result<&Timing, GpuError> {
        Ok(lazily!(self, timing, Timing::load(self.module("timing")?)))
    }

    /// cuda/selftest.cu's kernels (tests only).
    pub fn selftest(&self) -> Result<&SelfTest, GpuError> {
        Ok(lazily!(self, selftest, SelfTest::load(self.module("selftest")?)))
    }
}

/// One kernel file as a loaded module: from the cache when an intact entry is there and the driver takes
/// it, else compiled (and cached).
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
