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
/// `cuda/conv_strip.cu`, which a test of `src/gpu/patterns/conv_strip.rs` holds to this value).
pub const STRIP_PACKED_BOUND: i64 = 32_767;

impl Strategy {
    /// Every strategy, in the order the help lists them.
    pub const ALL: [Strategy; 12] = [
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
        Strategy::GpuStrip,
    ];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 12] = [
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
            "gpu-strip",
        ];
        NAMES[self as usize]
    }

    /// The GPU strategy the filter runs when none is named, chosen from the studies on the H200
    /// (`bench/h200/issue30/`, docs/performance.md v0.29) and, for gpu-strip's gradients since v0.34, on the H100
    /// (`bench/h100/issue30_v0.34/`):
    /// - gpu-strip for a column ⊗ row smoothing kernel: the fastest at every box diameter 3–15 on both box-blur images
    ///   (up to 5.1× the next; level with block reads at box:3 on 1920×1080) and at 16384² (4.5×); and for a
    ///   column ⊗ row gradient of radius 1 or 2 (the pyramid's scharr:3 0.259 ms against double's 0.429, scharr:5
    ///   0.352 against predefined's 0.440, on the H100), or whose every |G| is at most [`STRIP_PACKED_BOUND`], which
    ///   the strip keeps two columns to a word (v0.37, H100: the pyramid's scharr:7 0.349 ms against predefined's
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
        !matches!(self, Strategy::CpuScalar | Strategy::CpuRayon)
    }

    /// Whether it needs a rank-one kernel (`column ⊗ row`).
    pub fn needs_rank_one(self) -> bool {
        matches!(self, Strategy::GpuSeparable | Strategy::GpuSeparableFused | Strategy::GpuStrip)
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
            Strategy::GpuStrip => "conv_strip",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Strategy;
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
