//! CPU variants. `scalar` is the reference every other variant is checked against, byte for byte;
//! `rayon` is the fast CPU path the GPU variants must also beat, for the edges and the filter's kernels alike;
//! `taps` holds the stencils it runs; `source` turns any layout a caller holds into their grey rows.

pub mod rayon;
pub mod scalar;
pub mod source;
mod taps;
