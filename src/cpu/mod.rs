//! CPU variants. `scalar` is the reference every other variant is checked against, byte for byte;
//! `rayon` is the fast CPU baseline the GPU variants must also beat.

pub mod rayon;
pub mod scalar;
