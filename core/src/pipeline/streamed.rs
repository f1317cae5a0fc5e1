//! The single-image command's streamed path: one large PNG, one variant (cpu-rayon, gpu-strip, or
//! `auto`'s choice of them) and nothing to compare it with, decoded, computed and encoded at the same time
//! ([`crate::engine::stream`]), reported in the same table as the whole-image path.

use super::{auto_note, auto_without_gpu, gpu_status, Options, Outcome, Report, Row, Timings};
use crate::auto::auto_variant;
use crate::engine::{Device, Engine};
use crate::error::Result;
use crate::image_io::{self, Staged, Target};
use crate::variant::Variant;

/// One large PNG with one variant to run, cpu-rayon or gpu-strip (or `auto`'s choice of them), and nothing
/// to compare it with: decoded, computed and encoded at the same time ([`crate::engine::stream`]). `None` when the
/// run or the file is not one of those (the image is then decoded whole). "Large" is gpu-strip's threshold
/// for staged copies, [`crate::engine::STREAMED_FROM_BYTES`] of RGB: below it the decode, compute and
/// encode take tens of milliseconds, and one after the other is as fast.
pub(crate) fn run(opts: &Options, targets: &[Target]) -> Result<Option<(Report, Engine)>> {
    let one = matches!(opts.variants[..], [Variant::CpuRayon] | [Variant::GpuStrip]);
    // The encoder streams the rows of a PNG of edges; other formats and outputs are encoded whole.
    let png_out = crate::image_io::output::format_of(&opts.output)? == crate::image_io::Format::Png;
    let edges = matches!(opts.product, super::Product::Magnitude | super::Product::L1);
    if opts.needs_reference() || !(opts.auto || one) || !png_out || !edges {
        return Ok(None);
    }
    let decode_opts = image_io::DecodeOptions { budget: opts.budget, keep_orientation: opts.keep_orientation };
    let Some(rows) = image_io::PngRows::open(&opts.input, &decode_opts)? else { return Ok(None) };
    let (width, height) = (rows.width, rows.height);
    if crate::memory::image_bytes(width, height, 3) >= crate::engine::STREAMED_FROM_BYTES as u64 {
        stream_png(opts, targets, rows).map(Some)
    } else {
        Ok(None)
    }
}

fn stream_png(opts: &Options, targets: &[Target], rows: image_io::PngRows) -> Result<(Report, Engine)> {
    let (width, height) = (rows.width, rows.height);
    let mut variant = if opts.auto {
        auto_variant(width, height, crate::engine::driver_present(), rayon::current_num_threads())
    } else {
        opts.variants[0]
    };
    let mut notes = Vec::new();
    if opts.auto {
        notes.push(auto_note(variant, width, height));
    }
    // Memory is the band buffers' (docs/cli.md, "Memory"), whatever the image's height.
    let needed = crate::engine::stream::buffer_bytes(width, height, opts.filter);
    opts.budget.check(&opts.input, width, height, needed)?;
    let device = if variant.is_gpu() { Device::Auto } else { Device::Cpu };
    if variant.is_gpu() {
        // rayon's worker threads start (2.1 ms on the H200 machine, `examples/pinned_costs.rs`) while the CUDA
        // context is made (over 100 ms), not when the band buffers' pages are touched on all cores.
        std::thread::spawn(|| rayon::broadcast(|_| ()));
    }
    let engine = Engine::for_variants(device, opts.filter, &[variant]).expect("Auto and Cpu always open");
    crate::trace::mark("GPU open (streamed)");
    let gpu_status = gpu_status(variant.is_gpu(), &engine);
    if opts.auto && variant.is_gpu() && !engine.has_gpu() {
        notes.push(auto_without_gpu(&engine));
        variant = Variant::CpuRayon;
    }
    let mut staged = Staged::new();
    let t = engine.stream_png(rows, variant.is_gpu(), opts.filter, &mut staged, &targets[0], opts.compression)?;
    staged.commit()?;
    crate::trace::mark("streamed and written");
    let parts = t.decode_ms + t.compute_ms + t.memory_ms.unwrap_or(0.0) + t.encode_ms;
    notes.push(format!(
        "streamed: decode, {} and encode overlapped in bands; {:.0} ms in all, against {parts:.0} ms for the \
         parts one after another{}",
        if t.memory_ms.is_some() { "copies, kernels" } else { "compute" },
        t.wall_ms,
        t.memory_ms.map_or(String::new(), |m| format!(
            " (GPU memory: copies {m:.1} ms, buffers made in {:.1} ms and freed in {:.1} ms)",
            t.setup_ms, t.release_ms
        )),
    ));
    let outcome = if variant.is_gpu() && !engine.has_gpu() {
        notes.push(super::fallback_note(variant.name(), &engine, &opts.output));
        Outcome::Skipped { reason: "GPU unavailable (reason above)".into() }
    } else {
        let pixels = width as f64 * height as f64;
        Outcome::Ran {
            timings: Timings {
                io_ms: t.decode_ms + t.encode_ms,
                // As the report counted it (cudaMalloc, cudaMemcpy, cudaFree): the pinned and device buffers
                // made and freed, and the copies.
                gpu_memory_ms: t.memory_ms.map(|copies| t.setup_ms + copies + t.release_ms),
                compute_ms: t.compute_ms,
                total_ms: t.wall_ms,
                effective_gbps: variant.is_gpu().then(|| 4.0 * pixels / (t.compute_ms * 1e6)),
            },
            mismatched_pixels: None,
        }
    };
    let report = Report {
        input: opts.input.clone(),
        output: opts.output.clone(),
        width,
        height,
        filter: opts.filter,
        product: opts.product,
        n1: opts.n1,
        gpu_reps: 1,
        decode_ms: t.decode_ms,
        encode_ms: t.encode_ms,
        gpu: gpu_status,
        rows: vec![Row { variant, outcome }],
        notes,
    };
    Ok((report, engine))
}
