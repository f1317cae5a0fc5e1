//! Fills a kernel cache (`$CUDA_SOBEL_CACHE`) with the sm_90 machine code (H100, H200) of every build the GPU
//! tests, `scripts/gpu-check.sh` and the bench ask for — each stencil and border's edges, each stencil's other
//! outputs, OpenCV's grey and the L1 norm, the report's arithmetic, Canny's words; and the filter's strategies for the kernels its
//! tests and the Python tests run, with their default tunings — so that a fresh GPU machine spends its time
//! testing, not compiling (NVRTC takes up to 2 s a file there, and ~40 builds × 12 files). Needs NVRTC only:
//! `CUDA_SOBEL_CACHE=DIR cargo run --release --example fill_kernel_cache`; scripts/build-dev.sh packs DIR.
use cuda_sobel::canny::Canny;
use cuda_sobel::conv::ConvKernel;
use cuda_sobel::gpu::cache::CodeCache;
use cuda_sobel::gpu::compile::{arch_option, cache_key, compile_with, options_for, Code};
use cuda_sobel::gpu::conv::{build_of, refusal, tunings_of, Tuning};
use cuda_sobel::gpu::kernels::Build;
use cuda_sobel::gpu::patterns::{edge_sources, KernelSource, SOURCES};
use cuda_sobel::sobel::{Border, Filter, Grey, Ksize, Norm, Number, Output};
use cuda_sobel::variant::Variant;

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
    // Canny's builds (its words, `Canny::gradients`) for each aperture, grey and norm: tests/canny.rs, tests/gpu.rs
    // and the batch slots run them through every variant.
    for ksize in [Ksize::K3, Ksize::K5, Ksize::K7] {
        for grey in Grey::ALL {
            for norm in [Norm::L1, Norm::L2] {
                let f = Filter { ksize, grey, norm, ..Filter::default() };
                let (filter, words) = Canny::of_filter(f).gradients(f);
                add(Build::with_output(filter, words));
            }
        }
    }
    builds.retain(|b| b.compat == cuda_sobel::sobel::Compat::Exact || b.output == Output::Edges);
    let cache = CodeCache::in_default_folder();
    let mut jobs: Vec<(&KernelSource, Vec<String>)> = builds
        .iter()
        .flat_map(|&b| {
            edge_sources().iter().map(move |src| (src, options_for(&arch_option(9, 0, Code::Cubin), b, src)))
        })
        .collect();
    // The filter: tests/filter.rs's kernels and those of python/tests, by every GPU strategy that takes them.
    let mut kernels: Vec<ConvKernel> = [
        "box:1",
        "box:3",
        "box:5",
        "box:7",
        "box:9",
        "box:15",
        "gaussian:3",
        "gaussian:5",
        "gaussian:7",
        "gaussian:15",
        "scharr:3",
        "scharr:5",
        "scharr:7",
        "scharr:9",
        "sobel:1",
        "sobel:3",
        "sobel:5",
        "sobel:7",
    ]
    .iter()
    .map(|s| ConvKernel::parse(s).expect("a named kernel"))
    .collect();
    kernels.push(ConvKernel::from_text("laplacian", "0 1 0\n1 -4 1\n0 1 0\ndivisor 1").expect("a matrix"));
    kernels.push(ConvKernel::from_text("skew", "1 2 3 0 -1\n").expect("a matrix"));
    kernels.push(ConvKernel::from_text("emboss", "gradient\n-2 -1 0\n-1 1 1\n0 1 2").expect("a matrix"));
    let arch = arch_option(9, 0, Code::Cubin);
    for k in &kernels {
        for s in Variant::KERNELS.into_iter().filter(|s| s.is_gpu() && refusal(k, *s).is_none()) {
            for t in tunings_of(k, s, Tuning::default()).1 {
                let (file, opts) = build_of(&arch, k, s, t);
                let src = SOURCES.iter().find(|src| src.name == file).expect("a kernel file of SOURCES");
                if !jobs.iter().any(|(j, o)| j.name == file && *o == opts) {
                    jobs.push((src, opts));
                }
            }
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..std::thread::available_parallelism().map_or(2, |n| n.get()) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((src, opts)) = jobs.get(k) else { break };
                let key = cache_key(src, opts, Code::Cubin);
                if cache.get(src.name, key, Code::Cubin).is_none() {
                    let code = compile_with(src, opts, Code::Cubin).expect("every kernel file compiles");
                    cache.put(src.name, key, Code::Cubin, &code);
                }
            });
        }
    });
    println!(
        "{} builds × {} edge files and {} filter builds cached",
        builds.len(),
        edge_sources().len(),
        jobs.len() - builds.len() * edge_sources().len()
    );
    Ok(())
}
