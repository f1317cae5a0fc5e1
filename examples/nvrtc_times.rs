//! How long NVRTC takes for each kernel file, to PTX and to CUBIN (needs NVRTC, not a GPU):
//! `cargo run --release --example nvrtc_times`.
use cuda_sobel::gpu::compile::{arch_option, compile_with, options, Code};
use cuda_sobel::gpu::kernels::Build;
use cuda_sobel::gpu::patterns::SOURCES;

fn main() {
    for code in [Code::Ptx, Code::Cubin] {
        let opts = options(&arch_option(9, 0, code), Build::default());
        for src in &SOURCES {
            let t = std::time::Instant::now();
            let out = compile_with(src, &opts, code).expect("compiles");
            println!("{:?} {:<14} {:7.1} ms  {:6} bytes", code, src.name, t.elapsed().as_secs_f64() * 1e3, out.len());
        }
    }
}
