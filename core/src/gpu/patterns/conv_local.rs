//! `cuda/conv_local.cu` — TILING WITH HALO in shared memory. `filter --variant gpu-local`.
//!
//! `conv_local(const u8* in, out_t* out, int* gx_plane, int width, int height, int border, int pass)` reads
//! `planes·w·h` bytes and writes `planes·w·h` bytes (pass 0 or 2) or `planes·w·h` ints of the Gx plane (pass 1).
//! Its blocks must be exactly the TILE_W × TILE_H it was compiled with (`-DTILE_W`, `-DTILE_H`; [`BLOCK`] by
//! default): the host passes the same shape to both.

use super::KernelSource;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "conv_local", source: include_str!("../../../../cuda/conv_local.cu") };

/// TILE_W × TILE_H by default: one thread per output of the tile.
pub const BLOCK: (u32, u32) = (32, 8);

// Its launch is the map passes' one, `patterns::launch_conv_pass` (through `gpu::conv`'s launch table): these
// files differ in their `.cu` alone.

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
        for (name, v) in [("TILE_W", super::BLOCK.0), ("TILE_H", super::BLOCK.1)] {
            assert!(super::SOURCE.source.contains(&format!("#define {name} {v}\n")), "conv_local.cu: {name} {v}");
        }
    }
}
