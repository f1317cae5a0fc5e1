//! CPU variants. `scalar` is the reference every other variant is checked against, byte for byte;
//! `rayon` is the fast CPU baseline the GPU variants must also beat; `source` turns any layout a caller
//! holds into their grey rows.

pub mod rayon;
pub mod scalar;
pub mod source;
