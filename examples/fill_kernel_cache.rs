//! Fills a kernel cache (`$CUDA_SOBEL_CACHE`) with the sm_90 machine code (H100, H200) of every build the GPU
//! tests, `scripts/gpu-check.sh` and the bench ask for — each stencil and border's edges, each stencil's other
//! outputs, OpenCV's grey and the L1 norm, the report's arithmetic — so that a fresh GPU machine spends its time
//! testing, not compiling (NVRTC takes up to 2 s a file there, and ~40 builds × 12 files). Needs NVRTC only:
//! `CUDA_SOBEL_CACHE=DIR cargo run --release --example fill_kernel_cache`; scripts/build-dev.sh packs DIR.
use cuda_sobel::gpu::cache::CodeCache;
use cuda_sobel::gpu::compile::{arch_option, cache_key, compile_with, options, Code};
use cuda_sobel::gpu::kernels::Build;
use cuda_sobel::gpu::patterns::edge_sources;
use cuda_sobel::sobel::{Border, Filter, Grey, Norm, Number, Output};

fn main() -> anyhow::Result<()> {
    let mut builds: Vec<Build> = Vec::new();
    let mut add = |b: Build| {
        if !builds.contains(&b) {
            builds.push(b);
        }
    };
    for f in Filter::all().map(|f| Filter { border: Border::Replicate, ..f }) {
        add(Build::of(f));
        let int = Number::integer_for(&f.stencil());
        for output in [Output::Gradients(int), Output::Gradients(Number::F32), Output::Direction, Output::Direction4] {
            add(Build::with_output(f, output));
        }
        add(Build::of(Filter { grey: Grey::Bt601, norm: Norm::L1, ..f }));
        add(Build::of(Filter { grey: Grey::Bt601, ..f }));
    }
    builds.retain(|b| b.compat == cuda_sobel::sobel::Compat::Exact || b.output == Output::Edges);
    let cache = CodeCache::in_default_folder();
    let jobs: Vec<(Build, usize)> =
        builds.iter().flat_map(|&b| (0..edge_sources().len()).map(move |i| (b, i))).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..std::thread::available_parallelism().map_or(2, |n| n.get()) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(build, i)) = jobs.get(k) else { break };
                let opts = options(&arch_option(9, 0, Code::Cubin), build);
                let key = cache_key(&edge_sources()[i], &opts, Code::Cubin);
                if cache.get(edge_sources()[i].name, key, Code::Cubin).is_none() {
                    let code =
                        compile_with(&edge_sources()[i], &opts, Code::Cubin).expect("every kernel file compiles");
                    cache.put(edge_sources()[i].name, key, Code::Cubin, &code);
                }
            });
        }
    });
    println!("{} builds × {} files cached", builds.len(), edge_sources().len());
    Ok(())
}
