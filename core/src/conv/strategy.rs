//! The filter's default strategy for a kernel, from the studies' measurements. The strategies themselves are rows of
//! the one table ([`crate::variant::TABLE`]).

use crate::variant::Variant;

/// gpu-strip keeps its rings two columns to a word (16-bit lanes) where every |G| is at most this (`RING_PACKED` in
/// `cuda/conv_strip.cu`, which a test of `core/src/gpu/patterns/conv_strip.rs` holds to this value).
pub const STRIP_PACKED_BOUND: i64 = 32_767;

impl Variant {
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
    pub fn auto_for(kernel: &super::ConvKernel) -> Variant {
        let gradient = kernel.kind == super::Kind::Gradient;
        match (kernel.factors().is_some(), gradient) {
            (true, false) => Variant::GpuStrip,
            (true, true) if kernel.radius <= 2 || kernel.strip_packed() => Variant::GpuStrip,
            (_, true) => Variant::GpuPredefined,
            (false, false) => Variant::GpuBlock,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::conv::ConvKernel;
    use crate::variant::Variant;

    #[test]
    fn the_default_is_what_the_studies_measured_fastest() {
        let auto = |spec: &str| Variant::auto_for(&ConvKernel::parse(spec).unwrap());
        for spec in ["box:3", "box:15", "gaussian:5", "gaussian:15", "scharr:3", "sobel:3", "scharr:5", "sobel:5"] {
            assert_eq!(auto(spec), Variant::GpuStrip, "{spec}");
        }
        for spec in ["scharr:7", "scharr:9", "scharr:15"] {
            assert_eq!(auto(spec), Variant::GpuStrip, "{spec}: the packed ring");
        }
        assert_eq!(auto("sobel:7"), Variant::GpuPredefined, "|G| up to 326 400: the ring unpacked");
        let laplacian = ConvKernel::from_text("laplacian", "0 1 0\n1 -4 1\n0 1 0\ndivisor 1\n").unwrap();
        assert_eq!(Variant::auto_for(&laplacian), Variant::GpuBlock);
    }
}
