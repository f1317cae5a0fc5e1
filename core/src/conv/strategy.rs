//! The filter's strategies (`filter --variant`): the two CPU ones and one GPU kernel file each.

use serde::Serialize;

/// How the filter is computed: one per strategy of the convolution studies (docs/patterns.md compares them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// The reference: the definition, one thread.
    CpuScalar,
    /// Rows on every core.
    CpuRayon,
    /// One thread per pixel, taps in global memory; gradients in two launches (cuda/conv_single.cu).
    GpuSingle,
    /// Taps in constant memory (cuda/conv_constant.cu).
    GpuConstant,
    /// Shared-memory tile with halo (cuda/conv_local.cu).
    GpuLocal,
    /// Row pass, column pass through a temporary image (cuda/conv_separable.cu; rank-one kernels).
    GpuSeparable,
    /// Both passes in one launch through shared memory (cuda/conv_separable.cu; rank-one kernels).
    GpuSeparableFused,
    /// Gx and Gy from one read of the window (cuda/conv_double.cu).
    GpuDouble,
    /// Taps compiled in, zero taps skipped (cuda/conv_predefined.cu).
    GpuPredefined,
    /// 16 pixels per thread with 16-byte vector loads (cuda/conv_block.cu).
    GpuBlock,
    /// A rolling window of row sums down each column (cuda/conv_rolling.cu).
    GpuRolling,
    /// A rank-one kernel's row pass once per input row, in a ring of rows in registers down a strip of 4 columns
    /// (cuda/conv_strip.cu).
    GpuStrip,
}

/// gpu-strip keeps its rings two columns to a word (16-bit lanes) where every |G| is at most this (`RING_PACKED` in
/// `cuda/conv_strip.cu`, which a test of `core/src/gpu/patterns/conv_strip.rs` holds to this value).
pub const STRIP_PACKED_BOUND: i64 = 32_767;

/// Where a strategy reads a kernel's taps.
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

/// One strategy as every layer sees it: its name, its kernel file, where it reads the taps, what it accepts.
/// [`TABLE`] holds them all; adding a strategy is one row here and the row of its launch in `src/gpu/conv.rs`.
#[derive(Debug)]
pub struct Row {
    /// The strategy this row describes.
    pub strategy: Strategy,
    /// The name the command line uses.
    pub name: &'static str,
    /// The kernel file it runs (`cuda/<file>.cu`), for a GPU strategy.
    pub file: Option<&'static str>,
    /// Where it reads the taps.
    pub taps: Taps,
    /// Whether it needs a rank-one kernel (`column ⊗ row`).
    pub rank_one: bool,
    /// A gradient in two map passes through a Gx plane: `Some(default)` where a tuning may choose
    /// ([`crate::gpu::conv::Tuning::two_pass`]), `None` where both gradients always come from one launch.
    pub two_pass: Option<bool>,
}

const fn row(strategy: Strategy, name: &'static str, file: Option<&'static str>, taps: Taps) -> Row {
    Row { strategy, name, file, taps, rank_one: false, two_pass: None }
}

/// Every strategy, in the order the help lists them (`TABLE[s as usize]` is `s`'s row).
pub const TABLE: [Row; 12] = [
    row(Strategy::CpuScalar, "cpu-scalar", None, Taps::Host),
    row(Strategy::CpuRayon, "cpu-rayon", None, Taps::Host),
    Row { two_pass: Some(true), ..row(Strategy::GpuSingle, "gpu-single", Some("conv_single"), Taps::Global) },
    Row { two_pass: Some(true), ..row(Strategy::GpuConstant, "gpu-constant", Some("conv_constant"), Taps::Constant) },
    Row { two_pass: Some(false), ..row(Strategy::GpuLocal, "gpu-local", Some("conv_local"), Taps::Constant) },
    Row {
        rank_one: true,
        ..row(Strategy::GpuSeparable, "gpu-separable", Some("conv_separable"), Taps::ConstantFactors)
    },
    Row {
        rank_one: true,
        ..row(Strategy::GpuSeparableFused, "gpu-separable-fused", Some("conv_separable"), Taps::ConstantFactors)
    },
    row(Strategy::GpuDouble, "gpu-double", Some("conv_double"), Taps::Constant),
    Row {
        two_pass: Some(false),
        ..row(Strategy::GpuPredefined, "gpu-predefined", Some("conv_predefined"), Taps::Compiled)
    },
    row(Strategy::GpuBlock, "gpu-block", Some("conv_block"), Taps::Compiled),
    row(Strategy::GpuRolling, "gpu-rolling", Some("conv_rolling"), Taps::Compiled),
    Row { rank_one: true, ..row(Strategy::GpuStrip, "gpu-strip", Some("conv_strip"), Taps::CompiledFactors) },
];

impl Strategy {
    /// Every strategy, in the order the help lists them: [`TABLE`]'s.
    pub const ALL: [Strategy; TABLE.len()] = {
        let mut all = [Strategy::CpuScalar; TABLE.len()];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].strategy;
            i += 1;
        }
        all
    };

    /// Its row of [`TABLE`].
    pub fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The GPU strategy the filter runs when none is named, chosen from the studies on the H200
    /// (`bench/results/studies/`) and, for gpu-strip's gradients, on the H100:
    /// - gpu-strip for a column ⊗ row smoothing kernel: the fastest at every box diameter 3–15 on both box-blur images
    ///   (up to 5.1× the next; level with block reads at box:3 on 1920×1080) and at 16384² (4.5×); and for a
    ///   column ⊗ row gradient of radius 1 or 2 (the pyramid's scharr:3 0.259 ms against double's 0.429, scharr:5
    ///   0.352 against predefined's 0.440, on the H100), or whose every |G| is at most [`STRIP_PACKED_BOUND`], which
    ///   the strip keeps two columns to a word (H100: the pyramid's scharr:7 0.349 ms against predefined's
    ///   0.421, scharr:9 0.415 against 0.422, and 3.2× faster at 16384²);
    /// - gpu-predefined for the other gradient kernels (sobel:7): the fastest on the pyramid at 7×7 and 9×9 before
    ///   the packed ring (0.436 / 0.438 ms against the strip's 0.486 / 0.534), as the unpacked ring still is;
    /// - gpu-block for the rest (smoothing matrices that do not separate): 16 pixels a thread beat one pixel a thread
    ///   at every box diameter on both images when the box is computed without its row pass (1.04–1.9×).
    pub fn auto_for(kernel: &super::ConvKernel) -> Strategy {
        let gradient = kernel.kind == super::Kind::Gradient;
        match (kernel.factors().is_some(), gradient) {
            (true, false) => Strategy::GpuStrip,
            (true, true) if kernel.radius <= 2 || kernel.strip_packed() => Strategy::GpuStrip,
            (_, true) => Strategy::GpuPredefined,
            (false, false) => Strategy::GpuBlock,
        }
    }

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        self.row().file.is_some()
    }

    /// Whether it needs a rank-one kernel (`column ⊗ row`).
    pub fn needs_rank_one(self) -> bool {
        self.row().rank_one
    }

    /// The kernel file it runs (`cuda/<file>.cu`), for a GPU strategy.
    pub fn file(self) -> Option<&'static str> {
        self.row().file
    }
}

#[cfg(test)]
mod tests {
    use super::{Strategy, TABLE};

    #[test]
    fn each_row_is_at_its_strategys_place() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.strategy as usize, i, "{}", row.name);
        }
    }

    use crate::conv::ConvKernel;

    #[test]
    fn the_default_is_what_the_studies_measured_fastest() {
        let auto = |spec: &str| Strategy::auto_for(&ConvKernel::parse(spec).unwrap());
        for spec in ["box:3", "box:15", "gaussian:5", "gaussian:15", "scharr:3", "sobel:3", "scharr:5", "sobel:5"] {
            assert_eq!(auto(spec), Strategy::GpuStrip, "{spec}");
        }
        for spec in ["scharr:7", "scharr:9", "scharr:15"] {
            assert_eq!(auto(spec), Strategy::GpuStrip, "{spec}: the packed ring");
        }
        assert_eq!(auto("sobel:7"), Strategy::GpuPredefined, "|G| up to 326 400: the ring unpacked");
        let laplacian = ConvKernel::from_text("laplacian", "0 1 0\n1 -4 1\n0 1 0\ndivisor 1\n").unwrap();
        assert_eq!(Strategy::auto_for(&laplacian), Strategy::GpuBlock);
    }
}
