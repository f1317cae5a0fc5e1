//! What undoing a PNG's filters costs, on the CPU and on the GPU: the png crate's whole decode against
//! inflating alone (`image_io::filtered::read`), median of 15 after a warm-up; and `cuda/unfilter.cu`'s three
//! kernels (pad, wavefront, pack), CUDA events around them after a warm-up, median of 50, with the
//! device-to-device copy bandwidth measured in the same run.
//! `cargo run --release --example unfilter_time -- [PNG…]` (default: imgs_in/2048x1024.png).
use std::path::PathBuf;
use std::time::Instant;

use cuda_sobel::gpu::patterns::unfilter::{Scratch, Unfilter};
use cuda_sobel::gpu::patterns::Dims;
use cuda_sobel::gpu::Gpu;
use cuda_sobel::image_io::{self, filtered, DecodeOptions};
use cuda_sobel::memory::Budget;
use cuda_sobel::stats::median;
use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;

fn cpu_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut samples: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(&mut samples)
}

fn main() -> anyhow::Result<()> {
    let mut files: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if files.is_empty() {
        files.push("imgs_in/2048x1024.png".into());
    }
    let opts = DecodeOptions { budget: Budget::detect(), keep_orientation: false };
    let gpu = Gpu::open().map_err(|e| eprintln!("no GPU, CPU figures only: {e}")).ok();
    if let Some(gpu) = &gpu {
        println!("{}: copy bandwidth {:.0} GB/s", gpu.device, gpu.copy_bandwidth_gbps(1 << 30, 20)?);
    }
    for path in &files {
        let decode = cpu_ms(15, || drop(image_io::decode(path, &opts, |_| Ok(())).unwrap()));
        let inflate = cpu_ms(15, || drop(filtered::read(path, &opts, |_| Ok(())).unwrap()));
        let png = filtered::read(path, &opts, |_| Ok(()))?.ok_or_else(|| anyhow::anyhow!("not taken"))?.0;
        println!(
            "{}: {}×{}, {} bytes a pixel; CPU: whole decode {decode:.2} ms, inflate only {inflate:.2} ms ({:.0} %)",
            path.display(),
            png.width,
            png.height,
            png.bytes_per_pixel,
            100.0 * inflate / decode
        );
        let Some(gpu) = &gpu else { continue };
        let d = Dims::new(png.width, png.height)?;
        let kernel: &Unfilter = gpu.kernels.unfilter()?;
        let packed = gpu.stream.clone_htod(&png.rows[..])?;
        let mut scratch = Scratch::alloc(&gpu.stream, d, png.bytes_per_pixel)?;
        let mut rgb = gpu.stream.alloc_zeros::<u8>(3 * d.pixels())?;
        let mut samples = Vec::new();
        for rep in 0..51 {
            let start = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
            kernel.enqueue(&gpu.stream, &packed.as_view(), &mut scratch, &mut rgb, d, png.bytes_per_pixel)?;
            let end = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
            if rep > 0 {
                samples.push(start.elapsed_ms(&end)? as f64);
            }
        }
        let ms = median(&mut samples);
        let decoded = image_io::decode(path, &opts, |_| Ok(()))?.0.rgb;
        assert!(gpu.stream.clone_dtoh(&rgb)? == decoded.into_raw(), "the kernel's RGB is the decode's");
        let bytes = png.rows.len() + 3 * d.pixels();
        println!(
            "  GPU: the three kernels {ms:.3} ms (one block, {} threads), {:.1} GB/s; {:.0} images/s with one image per SM",
            Unfilter::threads(png.width),
            bytes as f64 / (ms * 1e6),
            gpu.multiprocessors as f64 * 1e3 / ms
        );
    }
    Ok(())
}
