//! `cuda_sobel`: the command line, the benchmark and its plots, on the library `cuda_sobel_core` — re-exported whole,
//! so that `cuda_sobel::engine`, `cuda_sobel::conv` and the rest name the library's modules. Only this crate links
//! clap and plotters. See docs/cli.md for the command line and docs/architecture.md for the layers.
#![warn(missing_docs)]

pub use cuda_sobel_core::*;

pub mod bench;
pub mod cli;
