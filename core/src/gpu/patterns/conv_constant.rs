//! `cuda/conv_constant.cu` — MAP with the taps in constant memory. `filter --variant gpu-constant`.
//!
//! `conv_constant(const u8* in, u8* out, int* gx_plane, int width, int height, int border, int pass)` reads
//! `planes·w·h` bytes and writes `planes·w·h` bytes (pass 0 or 2) or `planes·w·h` ints of the Gx plane (pass 1),
//! which pass 2 reads.

use super::KernelSource;

/// The kernel file, embedded.
pub const SOURCE: KernelSource =
    KernelSource { name: "conv_constant", source: include_str!("../../../../cuda/conv_constant.cu") };

/// The default block shape (any shape computes the same).
pub const BLOCK: (u32, u32) = (32, 8);

// Its launch is the map passes' one, `patterns::launch_conv_pass` (through `gpu::conv`'s launch table): these
// files differ in their `.cu` alone.

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
    }
}
