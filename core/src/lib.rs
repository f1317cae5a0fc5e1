//! `cuda_sobel_core`, the library: the Sobel pipeline (grey → Gx, Gy → magnitude) as CPU and GPU variants that must
//! all produce the bytes [`sobel`] defines, the convolution engine around it ([`conv`], [`engine`]), batch mode and
//! the codecs. It knows nothing of a command line or of plots: the `cuda_sobel` crate (the CLI, the benchmark and its
//! plots) and the Python package are built on it. See docs/semantics.md for the semantics and docs/architecture.md
//! for the layers.
#![warn(missing_docs)]

pub mod auto;
pub mod bands;
pub mod batch;
pub mod canny;
pub mod conv;
pub mod cpu;
pub mod engine;
pub mod error;
pub mod generate;
pub mod gpu;
pub mod image_io;
pub mod interrupt;
pub mod memory;
pub mod pipeline;
pub mod report;
pub mod sobel;
pub mod stats;
pub mod student;
pub mod trace;
pub mod variant;
