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
    /// A rolling window of row sums down each column (cuda/conv_rolling.cu): the default on a GPU.
    GpuRolling,
}

impl Strategy {
    /// Every strategy, in the order the help lists them.
    pub const ALL: [Strategy; 11] = [
        Strategy::CpuScalar,
        Strategy::CpuRayon,
        Strategy::GpuSingle,
        Strategy::GpuConstant,
        Strategy::GpuLocal,
        Strategy::GpuSeparable,
        Strategy::GpuSeparableFused,
        Strategy::GpuDouble,
        Strategy::GpuPredefined,
        Strategy::GpuBlock,
        Strategy::GpuRolling,
    ];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 11] = [
            "cpu-scalar",
            "cpu-rayon",
            "gpu-single",
            "gpu-constant",
            "gpu-local",
            "gpu-separable",
            "gpu-separable-fused",
            "gpu-double",
            "gpu-predefined",
            "gpu-block",
            "gpu-rolling",
        ];
        NAMES[self as usize]
    }

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        !matches!(self, Strategy::CpuScalar | Strategy::CpuRayon)
    }

    /// Whether it needs a rank-one kernel (`column ⊗ row`).
    pub fn needs_rank_one(self) -> bool {
        matches!(self, Strategy::GpuSeparable | Strategy::GpuSeparableFused)
    }

    /// The kernel file it runs (`cuda/<file>.cu`), for a GPU strategy.
    pub fn file(self) -> Option<&'static str> {
        Some(match self {
            Strategy::CpuScalar | Strategy::CpuRayon => return None,
            Strategy::GpuSingle => "conv_single",
            Strategy::GpuConstant => "conv_constant",
            Strategy::GpuLocal => "conv_local",
            Strategy::GpuSeparable | Strategy::GpuSeparableFused => "conv_separable",
            Strategy::GpuDouble => "conv_double",
            Strategy::GpuPredefined => "conv_predefined",
            Strategy::GpuBlock => "conv_block",
            Strategy::GpuRolling => "conv_rolling",
        })
    }
}
