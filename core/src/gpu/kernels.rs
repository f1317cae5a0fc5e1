//! The kernel table: every `.cu` file in `cuda/` ([`super::patterns::SOURCES`], listed once in
//! `patterns::kernel_files!`), compiled by NVRTC at run time to machine code for the device's exact architecture
//! ([`super::compile`]), cached on disk ([`super::cache`]), and loaded into a [`KernelSet`] — one per [`Build`]
//! (stencil × arithmetic × grey × norm × output), each file loaded once per run, when first needed, the files a
//! run needs compiled side by side — so that no kernel-name string appears outside the pattern files. If the
//! driver refuses cached code, it is compiled afresh. Which files each GPU variant loads, and how, is one
//! table ([`crate::variant::TABLE`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

pub use super::build::Build;
use super::cache::CodeCache;
use super::compile::{cache_key, compile_with, options_for, Code};
use super::patterns::{
    canny::Canny, deflate::Deflate, selftest::SelfTest, strip::Strip, timing::Timing, unfilter::Unfilter, KernelSource,
    Pattern, SOURCES,
};
use super::GpuError;
use crate::variant::{Loaded, Loader, Variant};

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

/// The GPU variants of the edge command, in table order: each has a cell of [`KernelSet`]'s patterns.
fn gpu_variants() -> impl Iterator<Item = Variant> {
    Variant::EDGES.into_iter().filter(|v| v.is_gpu())
}

/// How many GPU variants the edge command runs (their pattern cells).
const GPU_VARIANTS: usize = Variant::EDGES.len() - 2;

/// A GPU variant's edge files and loader: its row of the one table ([`crate::variant::TABLE`]).
fn edges_of(variant: Variant) -> (&'static [&'static str], Loader) {
    let e = variant.edges().unwrap_or_else(|| panic!("{} does not run the edge command", variant.name()));
    (e.files, e.load.unwrap_or_else(|| panic!("{} is not a GPU variant", variant.name())))
}

/// A kernel file and the NVRTC options it is built with: the key of one module.
type BuildKey = (&'static str, Vec<String>);

/// **The one module cache** of a context: every (kernel file, options) build loaded on it — the edge command's
/// builds and the filter's strategies alike — compiled (or read from the disk cache, or taken prebuilt) and loaded
/// once, whoever asks first. A build being loaded holds its own slot only, so threads that want other modules, or
/// modules already loaded, do not wait for its compile.
#[derive(Default)]
pub struct Modules {
    slots: Mutex<HashMap<BuildKey, ModuleSlot>>,
}

/// One build's place in [`Modules`]: empty until loaded, locked while loading.
type ModuleSlot = Arc<Mutex<Option<Arc<CudaModule>>>>;

impl Modules {
    fn slot(&self, key: BuildKey) -> ModuleSlot {
        self.slots.lock().expect("no panic while holding the module slots").entry(key).or_default().clone()
    }

    /// Whether `(file, options)` is loaded already.
    fn has(&self, src: &KernelSource, options: &[String]) -> bool {
        self.slot((src.name, options.to_vec())).lock().expect("no panic while loading a module").is_some()
    }

    /// The module of `src` built with `options` on `ctx`, loaded on first use; what loading it cost goes to `stats`.
    pub fn get(
        &self,
        ctx: &Arc<CudaContext>,
        src: &'static KernelSource,
        options: &[String],
        stats: &mut LoadStats,
    ) -> Result<Arc<CudaModule>, GpuError> {
        let slot = self.slot((src.name, options.to_vec()));
        let mut module = slot.lock().expect("no panic while loading a module");
        if let Some(m) = module.as_ref() {
            return Ok(m.clone());
        }
        let cache = CodeCache::in_default_folder();
        let code = code_for(src, options, &cache, stats)?;
        let m = load_module(ctx, src, options, &cache, code, stats)?;
        *module = Some(m.clone());
        Ok(m)
    }

    /// Loads every build of `builds` not loaded yet, the missing files compiled side by side (`fetch_all`), so a
    /// first run waits for its slowest file, not for the sum of them.
    pub fn preload(
        &self,
        ctx: &Arc<CudaContext>,
        builds: &[(&'static KernelSource, Vec<String>)],
        stats: &mut LoadStats,
    ) -> Result<(), GpuError> {
        let mut missing: Vec<(&'static KernelSource, &[String])> = Vec::new();
        for (src, options) in builds {
            if !self.has(src, options) && !missing.iter().any(|(s, o)| s.name == src.name && *o == options.as_slice()) {
                missing.push((*src, options.as_slice()));
            }
        }
        let cache = CodeCache::in_default_folder();
        let fetch: Vec<(&KernelSource, &[String])> = missing.iter().map(|&(s, o)| (s, o)).collect();
        for ((src, options), code) in missing.iter().zip(fetch_all(&fetch, &cache)) {
            let (code, s) = code?;
            *stats += s;
            let slot = self.slot((src.name, options.to_vec()));
            let mut module = slot.lock().expect("no panic while loading a module");
            if module.is_none() {
                *module = Some(load_module(ctx, src, options, &cache, code, stats)?);
            }
        }
        Ok(())
    }
}

/// Every pattern's kernels of one build, each kernel file compiled (or read from the cache) and loaded the
/// first time something needs it — so a run of one variant compiles one file, not eleven
///.
pub struct KernelSet {
    ctx: Arc<CudaContext>,
    build: Build,
    /// The `sm_XY` option.
    arch: String,
    /// What loading has cost so far.
    stats: Mutex<LoadStats>,
    /// The context's module cache, shared with every other set and with the filter's strategies.
    modules: Arc<Modules>,
    patterns: [OnceLock<Loaded>; GPU_VARIANTS],
    strip: OnceLock<Strip>,
    canny: OnceLock<Canny>,
    selftest: OnceLock<SelfTest>,
    timing: OnceLock<Timing>,
    unfilter: OnceLock<Unfilter>,
    deflate: OnceLock<Deflate>,
}

/// A set's cell, loading it (and its files) on first use; `?` returns a load's error from the enclosing
/// function.
macro_rules! lazily {
    ($cell:expr, $load:expr) => {
        match $cell.get() {
            Some(k) => k,
            None => {
                let k = $load.map_err(GpuError::from)?;
                $cell.get_or_init(|| k)
            }
        }
    };
}

impl KernelSet {
    /// A set for `build` on `arch` (an `sm_XY` option: CUBIN), its modules in `modules`, the context's cache;
    /// nothing is compiled or loaded yet.
    pub fn new(ctx: &Arc<CudaContext>, arch: &str, build: Build, modules: Arc<Modules>) -> KernelSet {
        KernelSet {
            ctx: ctx.clone(),
            build,
            arch: arch.to_owned(),
            stats: Mutex::new(LoadStats::default()),
            modules,
            patterns: Default::default(),
            strip: OnceLock::new(),
            canny: OnceLock::new(),
            selftest: OnceLock::new(),
            timing: OnceLock::new(),
            unfilter: OnceLock::new(),
            deflate: OnceLock::new(),
        }
    }

    /// The build these kernels are compiled for.
    pub fn build(&self) -> Build {
        self.build
    }

    /// What loading has cost so far (files compiled, files read from the cache).
    pub fn stats(&self) -> LoadStats {
        *self.stats.lock().expect("no panic while holding the stats")
    }

    /// The module of kernel file `name` in this build, loaded on first use.
    fn module(&self, name: &str) -> Result<Arc<CudaModule>, GpuError> {
        let src = &SOURCES[index_of(name)];
        let mut stats = self.stats.lock().expect("no panic while holding the stats");
        self.modules.get(&self.ctx, src, &options_for(&self.arch, self.build, src), &mut stats)
    }

    /// Loads the kernel files that `variants` and timing need. The files not yet cached are compiled at the
    /// same time, one thread each (NVRTC is thread-safe across programs), so a first run waits for its
    /// slowest file, not for the sum of them.
    pub fn preload(&self, variants: &[Variant]) -> Result<(), GpuError> {
        let mut names = vec!["timing"];
        for &name in variants.iter().filter(|v| v.is_gpu()).flat_map(|&v| edges_of(v).0) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let builds: Vec<_> = names
            .iter()
            .map(|n| &SOURCES[index_of(n)])
            .map(|src| (src, options_for(&self.arch, self.build, src)))
            .collect();
        let mut stats = self.stats.lock().expect("no panic while holding the stats");
        self.modules.preload(&self.ctx, &builds, &mut stats)?;
        drop(stats);
        self.timing()?;
        for &v in variants.iter().filter(|v| v.is_gpu()) {
            self.pattern(v)?;
        }
        Ok(())
    }

    /// The pattern a GPU variant runs, its kernel files loaded if they were not yet.
    pub fn pattern(&self, variant: Variant) -> Result<&dyn Pattern, GpuError> {
        let cell = gpu_variants().position(|v| v.name() == variant.name()).expect("a GPU variant");
        let (files, load) = edges_of(variant);
        let loaded = lazily!(self.patterns[cell], {
            let modules = files.iter().map(|f| self.module(f)).collect::<Result<Vec<_>, _>>()?;
            load(&modules.iter().collect::<Vec<_>>(), self.build)
        });
        Ok(loaded.as_ref())
    }

    /// gpu-strip's kernels as their own type, for launches on raw device memory ([`Strip::launch_raw`]).
    pub fn strip(&self) -> Result<&Strip, GpuError> {
        Ok(lazily!(self.strip, Strip::load(&self.module("strip")?)))
    }

    /// cuda/canny.cu's kernels: Canny's suppression and hysteresis on this build's stencil's exact gradients.
    pub fn canny(&self) -> Result<&Canny, GpuError> {
        let overlap = self.ctx.compute_capability().is_ok_and(|(major, _)| major >= 9);
        Ok(lazily!(self.canny, Canny::load(&self.module("canny")?, overlap)))
    }

    /// map.cu's `grey_kernel` (the report's grey of this build), for the filter's grey planes of RGB on the device.
    pub fn grey(&self) -> Result<cudarc::driver::CudaFunction, GpuError> {
        Ok(self.module("map")?.load_function("grey_kernel")?)
    }

    /// cuda/timing.cu's kernels (every timed run needs them).
    pub fn timing(&self) -> Result<&Timing, GpuError> {
        Ok(lazily!(self.timing, Timing::load(&self.module("timing")?)))
    }

    /// cuda/unfilter.cu's kernels (batch mode's PNG decoding).
    pub fn unfilter(&self) -> Result<&Unfilter, GpuError> {
        Ok(lazily!(self.unfilter, Unfilter::load(&self.module("unfilter")?)))
    }

    /// cuda/deflate.cu's kernels (batch mode's PNG encoding).
    pub fn deflate(&self) -> Result<&Deflate, GpuError> {
        Ok(lazily!(self.deflate, Deflate::load(&self.module("deflate")?)))
    }

    /// cuda/selftest.cu's kernels (tests only).
    pub fn selftest(&self) -> Result<&SelfTest, GpuError> {
        Ok(lazily!(self.selftest, SelfTest::load(&self.module("selftest")?)))
    }
}

fn index_of(name: &str) -> usize {
    SOURCES.iter().position(|s| s.name == name).expect("a kernel file of SOURCES")
}

/// One kernel file's machine code, and whether it came from the cache.
pub(super) type Fetched = (Vec<u8>, bool);

/// [`code_for`] of every (file, options) build at the same time, one thread each (NVRTC is thread-safe across
/// programs), so that a first run waits for its slowest build, not for the sum of them. In `builds`' order, each
/// with what it counted.
pub(super) fn fetch_all(
    builds: &[(&KernelSource, &[String])],
    cache: &CodeCache,
) -> Vec<Result<(Fetched, LoadStats), GpuError>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = builds
            .iter()
            .map(|&(src, options)| {
                scope.spawn(move || {
                    let mut s = LoadStats::default();
                    code_for(src, options, cache, &mut s).map(|code| (code, s))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a compile thread does not panic")).collect()
    })
}

/// One kernel file's machine code: built into the binary when made from this very source and options for
/// this architecture ([`super::prebuilt`]), else from the cache when an intact entry is there, else
/// compiled (and cached). Counts which in `stats`.
pub(super) fn code_for(
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
pub(super) fn load_module(
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
