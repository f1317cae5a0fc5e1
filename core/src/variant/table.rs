//! **The one table of strategies**: every way the project computes a stencil, a row each — its name, what it
//! accepts (the edge command's RGB Sobel family, the filter command's kernels, or both), the `.cu` files it runs and
//! how it loads and launches them. Every layer reads it: the command lines list its names, the GPU loads a row's
//! files through its loader or launcher, the tests run every row against cpu-scalar. Adding a strategy is its case
//! of [`Variant`] and one row here (with its `.cu` file and its Rust twin in `core/src/gpu/patterns/`).
//!
//! One row may name two files, one per input: the edge command's RGB Sobel has its own `strip.cu` and `separable.cu`,
//! which read RGB and measured faster than `conv_strip.cu` and `conv_separable.cu` on the same stencil at every size
//! (`bench/results/rooms.md`), while the filter's files take any kernel.

use std::sync::Arc;

use cudarc::driver::{CudaModule, DriverError};

use super::{Variant, N1};
use crate::gpu::conv::launch::{self, Launch};
use crate::gpu::kernels::Build;
use crate::gpu::patterns::{
    conv_constant, fused, fused_map::FusedMap, map::Map, n_per_thread::NPerThread, separable::Separable, strip::Strip,
    tiled, vec16::Vec16, Pattern,
};

/// An edge pattern's kernels, loaded.
pub(crate) type Loaded = Box<dyn Pattern + Send + Sync>;

/// How an edge pattern's kernels are loaded from its files' modules (in the row's order), for a build.
pub(crate) type Loader = fn(&[&Arc<CudaModule>], Build) -> Result<Loaded, DriverError>;

fn boxed<P: Pattern + Send + Sync + 'static>(p: Result<P, DriverError>) -> Result<Loaded, DriverError> {
    p.map(|p| Box::new(p) as Loaded)
}

/// Where a strategy reads a filter kernel's taps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taps {
    /// On the CPU, from the kernel itself.
    Host,
    /// A device buffer, the kernel's last argument (`const int* taps`).
    Global,
    /// `__constant__ int c_taps[]`, copied there once the file is loaded.
    Constant,
    /// Compiled in (`-DCONV_TAPS`): zero taps skipped, ×1 an add.
    Compiled,
    /// A rank-one kernel's factors in `__constant__ c_column` and `c_row`.
    ConstantFactors,
    /// A rank-one kernel's factors compiled in (`-DCONV_COLUMN`, `-DCONV_ROW`).
    CompiledFactors,
}

/// How a strategy runs the edge command (packed RGB in, any edge build: stencil, grey, norm, output out).
pub struct Edges {
    /// The kernel files it loads (`cuda/<name>.cu`), built for the edge build; none on the CPU.
    pub files: &'static [&'static str],
    /// How its kernels are loaded from those files' modules; `None` on the CPU.
    pub(crate) load: Option<Loader>,
}

/// How a strategy runs the filter command (planes of bytes in, any kernel it accepts).
pub struct Kernels {
    /// The kernel file (`cuda/<file>.cu`), compiled per kernel; `None` on the CPU.
    pub file: Option<&'static str>,
    /// Where it reads the taps.
    pub taps: Taps,
    /// Whether it needs a rank-one kernel (`column ⊗ row`).
    pub rank_one: bool,
    /// A gradient in two map passes through a Gx plane: `Some(default)` where a tuning may choose
    /// ([`crate::gpu::conv::Tuning::two_pass`]), `None` where both gradients always come from one launch.
    pub two_pass: Option<bool>,
    /// The kernels it loads from its file, its block and its launcher; `None` on the CPU.
    pub(crate) launch: Option<Launch>,
}

/// One strategy as every layer sees it.
pub struct Row {
    /// The strategy this row describes (gpu-n1 with one pixel a thread).
    pub variant: Variant,
    /// The name both command lines and the Python package use.
    pub name: &'static str,
    /// An older name the command lines still accept.
    pub alias: Option<&'static str>,
    /// One line: the pattern it shows.
    pub pattern: &'static str,
    /// The edge command runs it.
    pub edges: Option<Edges>,
    /// The filter command runs it.
    pub kernels: Option<Kernels>,
}

const fn row(variant: Variant, name: &'static str, pattern: &'static str) -> Row {
    Row { variant, name, alias: None, pattern, edges: None, kernels: None }
}

const fn edges(files: &'static [&'static str], load: Loader) -> Option<Edges> {
    Some(Edges { files, load: Some(load) })
}

const fn kernels(file: &'static str, taps: Taps, launch: Launch) -> Kernels {
    Kernels { file: Some(file), taps, rank_one: false, two_pass: None, launch: Some(launch) }
}

/// The CPU's rows run both commands.
const fn cpu(variant: Variant, name: &'static str, pattern: &'static str) -> Row {
    Row {
        edges: Some(Edges { files: &[], load: None }),
        kernels: Some(Kernels { file: None, taps: Taps::Host, rank_one: false, two_pass: None, launch: None }),
        ..row(variant, name, pattern)
    }
}

/// Every strategy, in the order the help and the tables list them.
pub const TABLE: [Row; 18] = [
    cpu(Variant::CpuScalar, "cpu-scalar", "the reference: the definition, one thread (the edges in four passes)"),
    cpu(Variant::CpuRayon, "cpu-rayon", "fused and parallel over row bands on every core"),
    Row {
        edges: edges(&["map"], |m, b| boxed(Map::load(m[0], b))),
        ..row(Variant::GpuMap, "gpu-map", "map: the report's 1:1 version, four kernels, one thread a pixel")
    },
    Row {
        edges: edges(&["map", "fused_map"], |m, b| boxed(FusedMap::load(m[0], m[1], b))),
        ..row(Variant::GpuFusedMap, "gpu-fused-map", "map fusion: a grey kernel, then Gx, Gy and magnitude in one")
    },
    Row {
        edges: edges(&["n_per_thread"], |m, _| boxed(NPerThread::load(m[0]))),
        ..row(Variant::GpuN1(N1::ONE), "gpu-n1", "n:1, n pixels a thread, coalesced or the report's mapping")
    },
    Row {
        edges: edges(&["fused"], |m, _| boxed(fused::load(m[0]))),
        ..row(Variant::GpuFused, "gpu-fused", "stencil: RGB bytes to output bytes in one kernel, one thread a pixel")
    },
    Row {
        kernels: Some(Kernels { two_pass: Some(true), ..kernels("conv_single", Taps::Global, launch::SINGLE) }),
        ..row(Variant::GpuSingle, "gpu-single", "stencil, taps in global memory")
    },
    Row {
        alias: Some("gpu-const-taps"),
        edges: edges(&["conv_constant"], |m, b| boxed(conv_constant::load(m[0], b))),
        kernels: Some(Kernels { two_pass: Some(true), ..kernels("conv_constant", Taps::Constant, launch::CONSTANT) }),
        ..row(Variant::GpuConstant, "gpu-constant", "stencil, taps in constant memory")
    },
    Row {
        kernels: Some(Kernels { two_pass: Some(false), ..kernels("conv_local", Taps::Constant, launch::LOCAL) }),
        ..row(Variant::GpuLocal, "gpu-local", "tiling: a shared-memory tile with its halo")
    },
    Row {
        edges: edges(&["separable"], |m, _| boxed(Separable::load(m[0]))),
        kernels: Some(Kernels {
            rank_one: true,
            ..kernels("conv_separable", Taps::ConstantFactors, launch::SEPARABLE)
        }),
        ..row(Variant::GpuSeparable, "gpu-separable", "separable: a row pass, then a column pass")
    },
    Row {
        kernels: Some(Kernels {
            rank_one: true,
            ..kernels("conv_separable", Taps::ConstantFactors, launch::SEPARABLE_FUSED)
        }),
        ..row(Variant::GpuSeparableFused, "gpu-separable-fused", "separable: both passes in one launch")
    },
    Row {
        kernels: Some(kernels("conv_double", Taps::Constant, launch::DOUBLE)),
        ..row(Variant::GpuDouble, "gpu-double", "stencil: Gx and Gy from one read of each window")
    },
    Row {
        kernels: Some(Kernels {
            two_pass: Some(false),
            ..kernels("conv_predefined", Taps::Compiled, launch::PREDEFINED)
        }),
        ..row(Variant::GpuPredefined, "gpu-predefined", "stencil, taps compiled in, zero taps skipped")
    },
    Row {
        edges: edges(&["tiled"], |m, _| boxed(tiled::load(m[0]))),
        ..row(Variant::GpuTiled, "gpu-tiled", "tiling: a shared-memory tile with a one-pixel halo")
    },
    Row {
        edges: edges(&["vec16"], |m, _| boxed(Vec16::load(m[0]))),
        ..row(Variant::GpuVec16, "gpu-vec16", "work per thread: 16 pixels a thread, 16-byte loads")
    },
    Row {
        kernels: Some(kernels("conv_block", Taps::Compiled, launch::BLOCK)),
        ..row(Variant::GpuBlock, "gpu-block", "work per thread: 16 pixels a thread, any kernel")
    },
    Row {
        kernels: Some(kernels("conv_rolling", Taps::Compiled, launch::ROLLING)),
        ..row(Variant::GpuRolling, "gpu-rolling", "a rolling window of row sums down each column")
    },
    Row {
        edges: edges(&["strip"], |m, _| boxed(Strip::load(m[0]))),
        kernels: Some(Kernels { rank_one: true, ..kernels("conv_strip", Taps::CompiledFactors, launch::STRIP) }),
        ..row(Variant::GpuStrip, "gpu-strip", "column strips, a rolling window of rows in registers: the fastest")
    },
];

const fn count(edges: bool) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < TABLE.len() {
        n += (if edges { TABLE[i].edges.is_some() } else { TABLE[i].kernels.is_some() }) as usize;
        i += 1;
    }
    n
}

const fn those<const N: usize>(edges: bool) -> [Variant; N] {
    let (mut out, mut n, mut i) = ([Variant::CpuScalar; N], 0, 0);
    while i < TABLE.len() {
        if (edges && TABLE[i].edges.is_some()) || (!edges && TABLE[i].kernels.is_some()) {
            out[n] = TABLE[i].variant;
            n += 1;
        }
        i += 1;
    }
    out
}

impl Variant {
    /// Every strategy, in [`TABLE`]'s order.
    pub const ALL: [Variant; TABLE.len()] = {
        let mut all = [Variant::CpuScalar; TABLE.len()];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].variant;
            i += 1;
        }
        all
    };

    /// The strategies the edge command runs, in table order (gpu-n1 with one pixel a thread).
    pub const EDGES: [Variant; count(true)] = those(true);

    /// The strategies the filter command runs, in table order.
    pub const KERNELS: [Variant; count(false)] = those(false);

    /// Its row of [`TABLE`].
    pub fn row(self) -> &'static Row {
        let one = self.with_n1(N1::ONE);
        TABLE.iter().find(|r| r.variant == one).expect("TABLE has a row for every variant")
    }

    /// The name the command lines use.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The variant named `name` (or its older alias) among `among`.
    pub fn named(name: &str, among: &[Variant]) -> Option<Variant> {
        among.iter().copied().find(|v| v.name() == name || v.row().alias == Some(name))
    }

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        !matches!(self, Variant::CpuScalar | Variant::CpuRayon)
    }

    /// The edge command's files and loader, for a variant that runs it.
    pub fn edges(self) -> Option<&'static Edges> {
        self.row().edges.as_ref()
    }

    /// The filter command's file, taps and launcher, for a variant that runs it.
    pub fn kernels(self) -> Option<&'static Kernels> {
        self.row().kernels.as_ref()
    }

    /// Whether the filter needs a rank-one kernel (`column ⊗ row`) for it.
    pub fn needs_rank_one(self) -> bool {
        self.kernels().is_some_and(|k| k.rank_one)
    }

    /// The filter's kernel file (`cuda/<file>.cu`), for a GPU strategy of the filter command.
    pub fn file(self) -> Option<&'static str> {
        self.kernels().and_then(|k| k.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_complete_and_named_once() {
        let names: std::collections::HashSet<_> =
            TABLE.iter().flat_map(|r| [Some(r.name), r.alias]).flatten().collect();
        assert_eq!(names.len(), TABLE.len() + TABLE.iter().filter(|r| r.alias.is_some()).count());
        for r in &TABLE {
            assert!(r.edges.is_some() || r.kernels.is_some(), "{} runs neither command", r.name);
            let gpu = r.variant.is_gpu();
            if let Some(e) = &r.edges {
                assert_eq!(gpu, e.load.is_some() && !e.files.is_empty(), "{}", r.name);
            }
            if let Some(k) = &r.kernels {
                assert_eq!(gpu, k.launch.is_some() && k.file.is_some(), "{}", r.name);
            }
            assert_eq!(r.variant.row().name, r.name);
        }
        assert_eq!(Variant::named("gpu-const-taps", &Variant::EDGES), Some(Variant::GpuConstant));
        assert_eq!(Variant::named("gpu-rolling", &Variant::EDGES), None, "the edge command does not run it");
    }

    /// Where a row runs both commands on the GPU, both run the same `.cu` file (the one code path), save the two
    /// rooms whose RGB Sobel files measured faster than the filter's on the same stencil (`bench/results/rooms.md`).
    #[test]
    fn a_row_of_both_commands_runs_one_file() {
        let mut both = Vec::new();
        for r in TABLE.iter().filter(|r| r.variant.is_gpu()) {
            let (Some(e), Some(k)) = (&r.edges, &r.kernels) else { continue };
            both.push(r.name);
            if !matches!(r.variant, Variant::GpuStrip | Variant::GpuSeparable) {
                assert_eq!(e.files, [k.file.unwrap()], "{}", r.name);
            }
        }
        assert_eq!(both, ["gpu-constant", "gpu-separable", "gpu-strip"]);
    }
}
