//! The kernel table: every `.cu` file in `cuda/` ([`super::patterns::SOURCES`]), compiled to PTX by NVRTC at run
//! time ([`super::compile`]), cached on disk ([`super::cache`]), and loaded into a typed [`KernelSet`] —
//! one per [`Build`] (operator × arithmetic), loaded once per run — so that no kernel-name string appears
//! outside the pattern files. If the driver refuses cached PTX, it is compiled afresh.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use super::cache::PtxCache;
use super::compile::{cache_key, compile_with, options};
use super::patterns::{
    const_taps::ConstTaps, fused::Fused, fused_map::FusedMap, map::Map, n_per_thread::NPerThread, selftest::SelfTest,
    separable::Separable, strip::Strip, tiled::Tiled, timing::Timing, vec16::Vec16, KernelSource, Pattern, SOURCES,
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

/// Every pattern's kernels of one build, loaded.
pub struct KernelSet {
    /// cuda/map.cu
    pub map: Map,
    /// cuda/fused_map.cu
    pub fused_map: FusedMap,
    /// cuda/fused.cu
    pub fused: Fused,
    /// cuda/n_per_thread.cu
    pub n_per_thread: NPerThread,
    /// cuda/const_taps.cu
    pub const_taps: ConstTaps,
    /// cuda/separable.cu
    pub separable: Separable,
    /// cuda/tiled.cu
    pub tiled: Tiled,
    /// cuda/vec16.cu
    pub vec16: Vec16,
    /// cuda/strip.cu
    pub strip: Strip,
    /// cuda/selftest.cu
    pub selftest: SelfTest,
    /// cuda/timing.cu
    pub timing: Timing,
}

impl KernelSet {
    /// Compiles (or reads from the cache) and loads every kernel file of `build` for `arch`.
    pub fn load(ctx: &Arc<CudaContext>, arch: &str, build: Build) -> Result<(KernelSet, LoadStats), GpuError> {
        let cache = PtxCache::in_default_folder();
        let mut stats = LoadStats::default();
        let opts = options(arch, build);
        let mut modules = Vec::with_capacity(SOURCES.len());
        for src in &SOURCES {
            modules.push(load_module(ctx, src, &opts, &cache, &mut stats)?);
        }
        let [map, fused_map, fused, n_per_thread, const_taps, separable, tiled, vec16, strip, selftest, timing] =
            <[Arc<CudaModule>; SOURCES.len()]>::try_from(modules).expect("one module per source");
        let set = KernelSet {
            map: Map::load(&map)?,
            fused_map: FusedMap::load(&map, &fused_map)?,
            fused: Fused::load(&fused)?,
            n_per_thread: NPerThread::load(&n_per_thread)?,
            const_taps: ConstTaps::load(&const_taps)?,
            separable: Separable::load(&separable)?,
            tiled: Tiled::load(&tiled)?,
            vec16: Vec16::load(&vec16)?,
            strip: Strip::load(&strip)?,
            selftest: SelfTest::load(&selftest)?,
            timing: Timing::load(&timing)?,
        };
        Ok((set, stats))
    }

    /// The pattern a GPU variant runs.
    pub fn pattern(&self, variant: Variant) -> &dyn Pattern {
        match variant {
            Variant::GpuMap => &self.map,
            Variant::GpuFusedMap => &self.fused_map,
            Variant::GpuN1(_) => &self.n_per_thread,
            Variant::GpuFused => &self.fused,
            Variant::GpuConstTaps => &self.const_taps,
            Variant::GpuSeparable => &self.separable,
            Variant::GpuTiled => &self.tiled,
            Variant::GpuVec16 => &self.vec16,
            Variant::GpuStrip => &self.strip,
            Variant::CpuScalar | Variant::CpuRayon => panic!("{} is not a GPU variant", variant.name()),
        }
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
