//! Registers, spills and shared memory of every kernel of every kernel file, for each stencil, as ptxas
//! reports them when NVRTC compiles to machine code for sm_90 (H100, H200): needs NVRTC only, not a GPU.
//! `cargo run --release --example kernel_resources [FILE…]` (default: strip vec16); the edges' builds, and with
//! `OUTPUTS=1` the gradients' (i16, f32), the direction's and Canny's words (L1, L2) too. With `CUBIN_DIR=DIR` each build's machine code is
//! also written there (`FILE-k5-Edges.cubin`…), to read with `nvdisasm` (the `nvidia-cuda-nvdisasm` wheel).
use cuda_sobel::canny::Canny;
use cuda_sobel::gpu::compile::{arch_option, compile_text_with_log, expanded_source, options, Code};
use cuda_sobel::gpu::kernels::Build;
use cuda_sobel::gpu::patterns::SOURCES;
use cuda_sobel::sobel::{Filter, Ksize, Norm, Number, Operator, Output};

fn main() -> anyhow::Result<()> {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let wanted = if wanted.is_empty() { vec!["strip".to_owned(), "vec16".to_owned()] } else { wanted };
    for src in SOURCES.iter().filter(|s| wanted.iter().any(|w| w == s.name)) {
        for (operator, ksize) in
            [(Operator::Sobel, Ksize::K3), (Operator::Sobel, Ksize::K5), (Operator::Sobel, Ksize::K7)]
        {
            let plain = Filter { operator, ksize, ..Filter::default() };
            let mut outputs = vec![(plain, Output::Edges)];
            if std::env::var_os("OUTPUTS").is_some() {
                for output in [Output::Gradients(Number::I16), Output::Gradients(Number::F32), Output::Direction] {
                    outputs.push((plain, output));
                }
                for norm in [Norm::L1, Norm::L2] {
                    outputs.push(Canny::new(0.0, 0.0, norm, ksize).map_err(anyhow::Error::msg)?.gradients(plain));
                }
            }
            for (filter, output) in outputs {
                if output == Output::Gradients(Number::I16) && !filter.stencil().fits_i16() {
                    continue;
                }
                let mut opts = options(&arch_option(9, 0, Code::Cubin), Build::with_output(filter, output));
                opts.push("--ptxas-options=-v".into());
                let (cubin, log) =
                    compile_text_with_log(&format!("cuda/{}.cu", src.name), &expanded_source(src), &opts, Code::Cubin)?;
                let (k, norm) = (ksize as u32, filter.norm);
                println!("== {}.cu, {} {k}×{k}, {output:?} ({norm:?})", src.name, operator.name());
                if let Some(dir) = std::env::var_os("CUBIN_DIR") {
                    let name = format!("{}-k{}-{output:?}.cubin", src.name, ksize as u32).replace(['(', ')'], "");
                    std::fs::write(std::path::Path::new(&dir).join(name), &cubin)?;
                }
                for line in log
                    .lines()
                    .filter(|l| l.contains("Compiling entry") || l.contains("registers") || l.contains("spill"))
                {
                    println!("  {}", line.trim_start_matches("ptxas info    : "));
                }
            }
        }
    }
    Ok(())
}
