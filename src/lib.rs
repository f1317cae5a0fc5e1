//! `cuda_sobel`: the Sobel pipeline (grey → Gx, Gy → magnitude) as CPU and GPU variants that must all
//! produce the bytes [`sobel`] defines. See docs/semantics.md for the semantics and docs/cli.md for the command line.
#![warn(missing_docs)]

pub mod auto;
pub mod bands;
pub mod batch;
pub mod bench;
pub mod cli;
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
