//! The shared vocabulary of a run — which variant (the one table of strategies, [`TABLE`]), its work granularity,
//! its timings, how outputs are compared — which every layer (the GPU side, the pipeline, the bench, batch, the CLI,
//! the filter) uses.

mod table;
pub use table::{Edges, Kernels, Row, Taps, TABLE};
pub(crate) use table::{Loaded, Loader};

use std::time::Instant;

/// How `gpu-n1` maps its threads to pixels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mapping {
    /// Each thread owns n distinct pixels, a warp's accesses coalesced: the same work for every n.
    #[default]
    Coalesced,
    /// The report's: thread t computes the n pixels from |t − n|, overlapping its neighbours' (n-fold
    /// redundant work; without the report's out-of-bounds writes).
    Report,
}

impl Mapping {
    /// Every value, in the order the help lists them.
    pub const ALL: [Mapping; 2] = [Mapping::Coalesced, Mapping::Report];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Mapping::Coalesced => "coalesced",
            Mapping::Report => "report",
        }
    }
}

/// The work granularity of `gpu-n1`: n pixels per thread, mapped one way or the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct N1 {
    /// 1..=64.
    pub n: u32,
    /// How threads map to pixels.
    pub mapping: Mapping,
}

impl N1 {
    /// One pixel per thread, coalesced: the default.
    pub const ONE: N1 = N1 { n: 1, mapping: Mapping::Coalesced };

    /// `n` pixels per thread, coalesced.
    pub fn new(n: u32) -> N1 {
        N1 { n, mapping: Mapping::Coalesced }
    }
}

impl Default for N1 {
    fn default() -> N1 {
        N1::ONE
    }
}

/// Every strategy the tool knows — the edge command's variants and the filter command's strategies are one list,
/// [`TABLE`], which says what each accepts. `gpu-n1` carries its granularity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// The reference: the definition, one thread (four passes like the report's C program for the edges).
    CpuScalar,
    /// Fused and parallel over row bands with rayon.
    CpuRayon,
    /// The report's 1:1 version: four kernels, one thread per pixel.
    GpuMap,
    /// The report's map fusion: a grey kernel, then one kernel for Gx, Gy and magnitude.
    GpuFusedMap,
    /// n pixels per thread, coalesced or with the report's mapping.
    GpuN1(N1),
    /// One kernel from RGB bytes to magnitude bytes, one thread per pixel.
    GpuFused,
    /// One thread per pixel, taps in global memory; gradients in two launches (cuda/conv_single.cu).
    GpuSingle,
    /// Taps in constant memory (cuda/conv_constant.cu): for the edges, the "before" of the predefined optimisation.
    GpuConstant,
    /// Shared-memory tile with halo (cuda/conv_local.cu).
    GpuLocal,
    /// Two passes (rows, then columns) of a rank-one kernel's factors (cuda/separable.cu for the edges,
    /// cuda/conv_separable.cu for the filter).
    GpuSeparable,
    /// Both passes in one launch through shared memory (cuda/conv_separable.cu; rank-one kernels).
    GpuSeparableFused,
    /// Gx and Gy from one read of the window (cuda/conv_double.cu).
    GpuDouble,
    /// Taps compiled in, zero taps skipped (cuda/conv_predefined.cu).
    GpuPredefined,
    /// Shared-memory tile with a one-pixel halo (cuda/tiled.cu).
    GpuTiled,
    /// 16 pixels per thread with 16-byte loads (register-blocked n:1; cuda/vec16.cu).
    GpuVec16,
    /// 16 pixels per thread with 16-byte vector loads, any kernel (cuda/conv_block.cu).
    GpuBlock,
    /// A rolling window of row sums down each column (cuda/conv_rolling.cu).
    GpuRolling,
    /// Column strips with a rolling window of rows in registers: the fastest (cuda/strip.cu for the edges,
    /// cuda/conv_strip.cu for rank-one filter kernels).
    GpuStrip,
}

impl Variant {
    /// Position in [`Variant::ALL`] (table order; every gpu-n1 granularity at gpu-n1's place).
    pub fn order(self) -> usize {
        Variant::ALL.iter().position(|&v| v == self.with_n1(N1::ONE)).expect("ALL lists every variant")
    }

    /// The granularity of gpu-n1; `None` for the others.
    pub fn n1(self) -> Option<N1> {
        match self {
            Variant::GpuN1(n1) => Some(n1),
            _ => None,
        }
    }

    /// This variant with `n1` as its granularity if it is gpu-n1; any other variant unchanged.
    pub fn with_n1(self, n1: N1) -> Variant {
        match self {
            Variant::GpuN1(_) => Variant::GpuN1(n1),
            other => other,
        }
    }
}

/// Serialised by name (`"gpu-n1"`); the granularity is reported in fields of its own.
impl serde::Serialize for Variant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One variant's times in milliseconds, in the report's categories.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Timings {
    /// Decode + encode. Every variant reads the same file and writes the same bytes, so both are
    /// measured once per image and attributed to every row.
    pub io_ms: f64,
    /// Allocations, host↔device copies and frees (GPU variants only).
    pub gpu_memory_ms: Option<f64>,
    /// The computation.
    pub compute_ms: f64,
    /// I/O + GPU memory + computation; for a streamed image, whose stages overlap, the pipeline's wall
    /// clock, which is less.
    pub total_ms: f64,
    /// GPU variants: the bytes that must move (3 read + 1 written per pixel) over the computation time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_gbps: Option<f64>,
}

/// Pixels whose byte differs between two outputs of the same size; anything but 0 is a failure.
pub fn count_mismatches(a: &[u8], b: &[u8]) -> u64 {
    assert_eq!(a.len(), b.len(), "outputs of different sizes");
    a.iter().zip(b).filter(|(x, y)| x != y).count() as u64
}

/// Measures `f` with the wall clock, in milliseconds.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed().as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_ordered() {
        let names: std::collections::HashSet<_> = Variant::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(names.len(), Variant::ALL.len());
        for (i, v) in Variant::ALL.iter().enumerate() {
            assert_eq!(v.order(), i);
        }
        assert_eq!(Variant::GpuN1(N1::new(8)).order(), Variant::GpuN1(N1::ONE).order());
        assert_eq!(serde_json::to_string(&Variant::GpuN1(N1::new(4))).unwrap(), "\"gpu-n1\"");
    }
}
