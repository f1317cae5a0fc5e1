//! Writes `kernels/sm_90/`: every kernel file the edge command runs compiled by NVRTC to CUBIN for sm_90 (H100, H200)
//! in the default build (the filter's own builds are one per filter kernel), and its MANIFEST (name, cache key, SHA-256), which the binary embeds so that a first run
//! on such a GPU compiles nothing (`core/src/gpu/prebuilt.rs`). Run by `scripts/prebuild-kernels.sh` after
//! changing a kernel file; `tests/kernels.rs` fails while the embedded code does not match the sources.
use std::fmt::Write as _;

use cuda_sobel::gpu::compile::{arch_option, cache_key, compile_with, options_for, Code};
use cuda_sobel::gpu::kernels::Build;
use cuda_sobel::gpu::patterns::edge_sources;
use cuda_sobel::gpu::prebuilt::{sha256_hex, DIR, MAJOR, MINOR};

fn main() -> anyhow::Result<()> {
    let arch = arch_option(MAJOR, MINOR, Code::Cubin);
    std::fs::create_dir_all(DIR)?;
    let mut manifest = String::new();
    for src in edge_sources() {
        let opts = options_for(&arch, Build::default(), src);
        let cubin = compile_with(src, &opts, Code::Cubin)?;
        std::fs::write(format!("{DIR}/{}.cubin", src.name), &cubin)?;
        writeln!(manifest, "{} {:016x} {}", src.name, cache_key(src, &opts, Code::Cubin), sha256_hex(&cubin))?;
        println!("{DIR}/{}.cubin: {} bytes", src.name, cubin.len());
    }
    std::fs::write(format!("{DIR}/MANIFEST"), manifest)?;
    Ok(())
}
