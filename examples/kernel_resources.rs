//! Registers, spills and shared memory of every kernel of every kernel file, for each stencil, as ptxas
//! reports them when NVRTC compiles to machine code for sm_90 (H100, H200): needs NVRTC only, not a GPU.
//! `cargo run --release --example kernel_resources [FILE…]` (default: strip vec16); the edges' builds, and with
//! `OUTPUTS=1` the gradients' (i16, f32) and the direction's too. With `CUBIN_DIR=DIR` each build's machine code is
//! also written there (`FILE-k5-Edges.cubin`…), to read with `nvdisasm` (the `nvidia-cuda-nvdisasm` wheel).
use cuda_sobel::gpu::compile::{arch_option, compile_text_with_log, expanded_source, options, Code};
use cuda_sobel::gpu::kernels::Build;
use cuda_sobel::gpu::patterns::SOURCES;
use cuda_sobel::sobel::{Filter, Ksize, Number, Operator, Output};

fn main() -> anyhow::Result<()> {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let wanted = if wanted.is_empty() { vec!["strip".to_owned(), "vec16".to_owned()] } else { wanted };
    for src in SOURCES.iter().filter(|s| wanted.iter().any(|w| w == s.name)) {
        for (operator, ksize) in
            [(Operator::Sobel, Ksize::K3), (Operator::Sobel, Ksize::K5), (Operator::Sobel, Ksize::K7)]
        {
            let outputs = if std::env::var_os("OUTPUTS").is_some() {
                vec![Output::Edges, Output::Gradients(Number::I16), Output::Gradients(Number::F32), Output::Direction]
            } else {
                vec![Output::Edges]
            };
            for output in outputs {
                let filter = Filter { operator, ksize, ..Filter::default() };
                if output == Output::Gradients(Number::I16) && !filter.stencil().fits_i16() {
                    continue;
                }
                let mut opts = options(&arch_option(9, 0, Code::Cubin), Build::with_output(filter, output));
                opts.push("--ptxas-options=-v".into());
                let (cubin, log) =
                    compile_text_with_log(&format!("cuda/{}.cu", src.name), &expanded_source(src), &opts, Code::Cubin)?;
                println!("== {}.cu, {} {}×{}, {output:?}", src.name, operator.name(), ksize as u32, ksize as u32);
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
