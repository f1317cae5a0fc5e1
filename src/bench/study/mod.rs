//! `cuda_sobel bench --study NAME`: the four convolution studies beside the report, rerun on
//! this GPU with the filter's strategies (`src/gpu/conv.rs`). Each times its cases with CUDA events after a warm-up
//! run (filter time only, as the studies did: no transfers, no compile), checks every output against the CPU
//! reference, and writes a table (mean ± σ, GB/s, % of the copy bandwidth measured in the same run), an SVG of time
//! against filter size per strategy, and the study's findings, each confirmed or refuted with the numbers.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::conv::{ConvKernel, Planes};
use crate::engine::filter::{launches_an_image, ConvGpu, Dims, Gpu, Tuning};
use crate::sobel::Border;
use crate::stats::Summary;
use crate::variant::Variant;

mod findings;

/// Which study.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Study {
    /// The filter-optimisation study: Scharr 3/5/7/9 on an image pyramid, five strategies and two combinations.
    FilterSizes,
    /// The 7×7 convolution with `__constant` and `__local` memory on 1818×1368 (sizes 3, 5, 7).
    ConstantLocal,
    /// The box blur of diameter 3 … 15 on 1920×1080 and 4256×2832 RGB, one pixel against 16 per thread.
    BoxBlur,
    /// The 3×3 blur's tile prefetch: no tile, one thread loading it, many threads, at 8×4 and at 32×8.
    Prefetch,
}

impl Study {
    /// Every study, in the order the help lists them.
    pub const ALL: [Study; 4] = [Study::FilterSizes, Study::ConstantLocal, Study::BoxBlur, Study::Prefetch];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        ["filter-sizes", "constant-local", "box-blur", "prefetch"][self as usize]
    }
}

/// The filter-size study's pyramid with its launches overlapped (the findings look it up by this name).
const OVERLAPPED: &str = "the pyramid, launches overlapped (a launch an image, programmatic dependent launch)";

/// A set of images every run of a case filters: (width, height, planes) each.
struct ImageSet {
    name: &'static str,
    images: Vec<(usize, usize, usize)>,
}

impl ImageSet {
    fn pixels(&self) -> usize {
        self.images.iter().map(|&(w, h, p)| w * h * p).sum()
    }
}

/// One timed configuration.
struct Case {
    label: String,
    strategy: Variant,
    tuning: Tuning,
    kernel: ConvKernel,
    set: usize,
}

/// One timed configuration's result.
#[derive(serde::Serialize)]
pub struct Row {
    /// The strategy as the study names it.
    pub label: String,
    /// The filter's side.
    pub size: usize,
    /// The kernel (`scharr:9`).
    pub kernel: String,
    /// The image set.
    pub images: String,
    /// Milliseconds per run over the whole set.
    pub ms: Summary,
    /// (bytes read + written) / mean time.
    pub gbps: f64,
    /// Of the copy bandwidth.
    pub percent_of_copy: f64,
    /// Every output byte-identical to the CPU reference.
    pub exact: bool,
}

fn cases(study: Study) -> (Vec<ImageSet>, Vec<Case>) {
    let mut cases = Vec::new();
    let mut add = |label: &str, strategy, tuning, kernel: &ConvKernel, set| {
        cases.push(Case { label: label.to_owned(), strategy, tuning, kernel: kernel.clone(), set })
    };
    let two = Tuning { two_pass: Some(true), ..Tuning::default() };
    let one = Tuning { two_pass: Some(false), ..Tuning::default() };
    match study {
        Study::FilterSizes => {
            let octaves = [(3866, 4320), (1933, 2160), (966, 1080), (483, 540)];
            let pyramid: Vec<_> = octaves.iter().flat_map(|&(w, h)| [(w, h, 1); 4]).collect();
            // The same 16 images with an octave's four (of one size) as the four planes of one launch, as a pipeline
            // would batch them: the small octaves fill the GPU only together.
            let batched = octaves.iter().map(|&(w, h)| (w, h, 4)).collect();
            let sets = vec![
                ImageSet { name: "pyramid (16 images, 88.7 Mpixel)", images: pyramid.clone() },
                ImageSet { name: "16384×16384", images: vec![(16384, 16384, 1)] },
                ImageSet { name: "the same pyramid, an octave a launch (4 planes)", images: batched },
                // The article's launches (one an image, in order on one stream), each allowed to start while the one
                // before finishes (`Tuning::overlap`: Hopper's programmatic dependent launch).
                ImageSet { name: OVERLAPPED, images: pyramid },
            ];
            for (d, set) in [3, 5, 7, 9].into_iter().flat_map(|d| [(d, 0), (d, 2), (d, 3)]) {
                let k = ConvKernel::scharr(d);
                let (two, one) = (Tuning { overlap: set == 3, ..two }, Tuning { overlap: set == 3, ..one });
                let default = Tuning { overlap: set == 3, ..Tuning::default() };
                add("single", Variant::GpuSingle, two, &k, set);
                add("local", Variant::GpuLocal, two, &k, set);
                add("separation", Variant::GpuSeparable, default, &k, set);
                add("double", Variant::GpuDouble, default, &k, set);
                add("predefined", Variant::GpuPredefined, one, &k, set);
                add("local + double", Variant::GpuLocal, one, &k, set);
                let local_predefined = Tuning { local_predefined: true, ..one };
                add("local + predefined", Variant::GpuLocal, local_predefined, &k, set);
                add("separable, fused (ours)", Variant::GpuSeparableFused, default, &k, set);
                add("block reads (ours)", Variant::GpuBlock, default, &k, set);
                add("rolling window (ours)", Variant::GpuRolling, default, &k, set);
                add("separable strip (ours)", Variant::GpuStrip, default, &k, set);
            }
            // Strategies of two launches an image (single, local, separation) keep ordinary launches
            // (`conv::launches_an_image`): the overlapped set would repeat their pyramid rows.
            let two_launches = |c: &Case| launches_an_image(&c.kernel, c.strategy, c.tuning) > 1;
            let k9 = ConvKernel::scharr(9);
            for (label, s, t) in [
                ("predefined", Variant::GpuPredefined, one),
                ("block reads (ours)", Variant::GpuBlock, Tuning::default()),
                ("rolling window (ours)", Variant::GpuRolling, Tuning::default()),
                ("separable strip (ours)", Variant::GpuStrip, Tuning::default()),
            ] {
                add(label, s, t, &k9, 1);
            }
            cases.retain(|c| !(c.set == 3 && two_launches(c)));
            (sets, cases)
        }
        Study::ConstantLocal => {
            let sets = vec![ImageSet { name: "1818×1368", images: vec![(1818, 1368, 1)] }];
            for d in [3, 5, 7] {
                let k = ConvKernel::gaussian(d);
                add("global", Variant::GpuSingle, Tuning::default(), &k, 0);
                add("constant", Variant::GpuConstant, Tuning::default(), &k, 0);
                add("local", Variant::GpuLocal, Tuning::default(), &k, 0);
            }
            (sets, cases)
        }
        Study::BoxBlur => {
            // gpu-strip chooses a box's columns a thread per image (8 below 2^27 pixels, 16 from there:
            // conv_strip::build_for); the rows with the other count show what the choice gains
            //.
            let columns = |c| Tuning { strip_columns: Some(c), ..Tuning::default() };
            let sixteen = columns(16);
            let sets = vec![
                ImageSet { name: "1920×1080 RGB", images: vec![(1920, 1080, 3)] },
                ImageSet { name: "4256×2832 RGB", images: vec![(4256, 2832, 3)] },
                ImageSet { name: "16384×16384", images: vec![(16384, 16384, 1)] },
            ];
            for set in 0..2 {
                for d in (3..=15).step_by(2) {
                    let k = ConvKernel::boxed(d);
                    add("1 pixel per thread", Variant::GpuPredefined, Tuning::default(), &k, set);
                    add("16 pixels per thread", Variant::GpuBlock, Tuning::default(), &k, set);
                    add("separable, fused (ours)", Variant::GpuSeparableFused, Tuning::default(), &k, set);
                    add("rolling window (ours)", Variant::GpuRolling, Tuning::default(), &k, set);
                    add("separable strip (ours)", Variant::GpuStrip, Tuning::default(), &k, set);
                    add("separable strip, 16 columns (ours)", Variant::GpuStrip, sixteen, &k, set);
                }
            }
            let k15 = ConvKernel::boxed(15);
            for (label, s) in [
                ("16 pixels per thread", Variant::GpuBlock),
                ("separable, fused (ours)", Variant::GpuSeparableFused),
                ("rolling window (ours)", Variant::GpuRolling),
                ("separable strip (ours)", Variant::GpuStrip),
            ] {
                add(label, s, Tuning::default(), &k15, 2);
            }
            add("separable strip, 8 columns (ours)", Variant::GpuStrip, columns(8), &k15, 2);
            (sets, cases)
        }
        Study::Prefetch => {
            let sets = vec![ImageSet { name: "1920×1080 RGB", images: vec![(1920, 1080, 3)] }];
            let k = ConvKernel::gaussian(3);
            let at = |block, loaders| Tuning { block: Some(block), tile_loaders: loaders, ..Tuning::default() };
            add("no tile, 8×4", Variant::GpuConstant, at((8, 4), None), &k, 0);
            add("tile by 1 thread, 8×4", Variant::GpuLocal, at((8, 4), Some(1)), &k, 0);
            add("tile by 30 threads, 8×4", Variant::GpuLocal, at((8, 4), Some(30)), &k, 0);
            add("tile by all 32, 8×4", Variant::GpuLocal, at((8, 4), None), &k, 0);
            add("no tile, 32×8", Variant::GpuConstant, at((32, 8), None), &k, 0);
            add("tile by all 256, 32×8", Variant::GpuLocal, at((32, 8), None), &k, 0);
            (sets, cases)
        }
    }
}

/// Deterministic content: the noise generator, one plane per channel.
fn image(w: usize, h: usize, planes: usize, seed: u64) -> Planes {
    let rgb = crate::generate::noise(w as u32, (h * planes) as u32, seed);
    Planes { width: w, height: h, planes, data: rgb.as_raw().iter().step_by(3).copied().collect() }
}

/// Runs `study` with `runs` timed runs per case and writes its files into `out`; returns the paths.
pub fn run(study: Study, runs: usize, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let started = std::time::Instant::now();
    let gpu = Gpu::open().context("bench --study needs a GPU")?;
    // Every case on one stream created for the study: launches overlap (`Tuning::overlap`) only off the legacy default
    // stream. Its buffers without cudarc's per-buffer events, which it would record between two launches (keeping
    // them from overlapping) to order work between streams, of which there is one here.
    // SAFETY: every buffer the study makes is allocated, used and freed on this one stream.
    unsafe { gpu.ctx.disable_event_tracking() };
    let gpu = gpu.on_stream(gpu.ctx.new_stream().context("a stream for the study")?);
    let copy = gpu.copy_bandwidth_gbps(1 << 30, 20)?;
    let conv = ConvGpu::new(gpu.clone());
    let (sets, cases) = cases(study);
    let jobs: Vec<_> = cases.iter().map(|c| (c.kernel.clone(), c.strategy, c.tuning)).collect();
    conv.preload(&jobs)?;
    let compiled = started.elapsed().as_secs_f64();
    let border = Border::Replicate;
    let stream = &gpu.stream;
    let mut rows = Vec::new();
    for (s, set) in sets.iter().enumerate() {
        let host: Vec<Planes> =
            set.images.iter().enumerate().map(|(i, &(w, h, p))| image(w, h, p, i as u64 + 1)).collect();
        let inputs = host.iter().map(|p| stream.clone_htod(&p.data)).collect::<Result<Vec<_>, _>>()?;
        let mut outputs = host.iter().map(|p| stream.alloc_zeros::<u8>(p.data.len())).collect::<Result<Vec<_>, _>>()?;
        let largest = host.iter().map(|p| p.data.len()).max().unwrap_or(1);
        let mut kernels: Vec<&ConvKernel> = cases.iter().filter(|c| c.set == s).map(|c| &c.kernel).collect();
        kernels.dedup();
        for kernel in kernels {
            let want: Vec<Vec<u8>> = host.iter().map(|p| crate::cpu::rayon::filter(p, kernel, border).data).collect();
            // What each case's outputs are first set to: the complement of every expected byte, so that a strategy
            // that leaves a pixel unwritten fails the check below, whatever an earlier case left in the shared buffers.
            let poison: Vec<Vec<u8>> = want.iter().map(|w| w.iter().map(|b| !b).collect()).collect();
            for case in cases.iter().filter(|c| c.set == s && &c.kernel == kernel) {
                let prepared = conv.prepare(kernel, case.strategy, case.tuning)?;
                let mut scratch = stream.alloc_zeros::<u8>(prepared.scratch_bytes(largest).max(1))?;
                let mut once =
                    |outputs: &mut Vec<cudarc::driver::CudaSlice<u8>>| -> Result<(), crate::engine::GpuError> {
                        for ((p, input), output) in host.iter().zip(&inputs).zip(outputs.iter_mut()) {
                            let d = Dims::new(p.width as u32, p.height as u32)?;
                            prepared.enqueue(stream, (d, p.planes as u32, border), input, output, &mut scratch)?;
                        }
                        Ok(())
                    };
                for (o, p) in outputs.iter_mut().zip(&poison) {
                    stream.memcpy_htod(p, o)?;
                }
                once(&mut outputs)?; // warm-up, and the output checked below
                stream.synchronize()?;
                let exact = outputs.iter().zip(&want).all(|(o, w)| stream.clone_dtoh(o).is_ok_and(|got| &got == w));
                let samples = gpu.time_runs(runs, |_| once(&mut outputs))?;
                let ms = Summary::of(&samples).expect("runs ≥ 1");
                let gbps = 2.0 * set.pixels() as f64 / (ms.mean * 1e6);
                rows.push(Row {
                    label: case.label.clone(),
                    size: kernel.side(),
                    kernel: kernel.name.clone(),
                    images: set.name.to_owned(),
                    ms,
                    gbps,
                    percent_of_copy: 100.0 * gbps / copy,
                    exact,
                });
            }
        }
    }
    let total = started.elapsed().as_secs_f64();
    write(study, &rows, (copy, compiled, total, &gpu.device), out)
}

/// Writes the table, findings, JSON and SVG; prints the table and findings.
fn write(
    study: Study,
    rows: &[Row],
    (copy, compiled, total, device): (f64, f64, f64, &str),
    out: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create it", out.display()))?;
    let mut md = format!(
        "# bench --study {} on {device}\n\nCopy bandwidth (device to device, read + written): {copy:.0} GB/s. Whole study \
         {total:.1} s, of which {compiled:.1} s compiling or loading kernels. Times: CUDA events, filter only, mean ± σ of \
         the runs after one warm-up run; GB/s counts each plane's bytes read once and written once.\n\n",
        study.name()
    );
    let mut sets: Vec<&str> = rows.iter().map(|r| r.images.as_str()).collect();
    sets.dedup();
    for set in &sets {
        writeln!(md, "## {set}\n\n| strategy | kernel | ms (mean ± σ) | GB/s | % of copy | exact |\n|---|---|---:|---:|---:|---|")?;
        for r in rows.iter().filter(|r| r.images == *set) {
            writeln!(
                md,
                "| {} | {} | {:.4} ± {:.4} | {:.0} | {:.1} | {} |",
                r.label,
                r.kernel,
                r.ms.mean,
                r.ms.sd,
                r.gbps,
                r.percent_of_copy,
                if r.exact { "yes" } else { "**NO**" }
            )?;
        }
        md.push('\n');
    }
    md.push_str("## Its findings on this GPU\n\n");
    for line in findings::of(study, rows) {
        writeln!(md, "- {line}")?;
    }
    let stem = format!("study-{}", study.name());
    let md_path = out.join(format!("{stem}.md"));
    std::fs::write(&md_path, &md)?;
    let json_path = out.join(format!("{stem}.json"));
    std::fs::write(&json_path, serde_json::to_string_pretty(rows)?)?;
    let mut paths = vec![md_path, json_path];
    for (n, set) in sets.iter().enumerate() {
        let mut labels: Vec<&str> = rows.iter().filter(|r| r.images == *set).map(|r| r.label.as_str()).collect();
        labels.sort();
        labels.dedup();
        let lines: Vec<super::plots::Line> = labels
            .iter()
            .map(|l| {
                let pts = rows.iter().filter(|r| r.images == *set && r.label == *l).map(|r| (r.size as f64, r.ms.mean));
                (l.to_string(), pts.collect())
            })
            .filter(|(_, p): &(String, Vec<(f64, f64)>)| p.len() > 1)
            .collect();
        if lines.is_empty() {
            continue;
        }
        let svg = out.join(format!("{stem}-{n}.svg"));
        let title = format!("{}: {set}", study.name());
        super::plots::log_log_chart(&svg, &title, "filter size", "ms per run", &lines)
            .map_err(|e| anyhow::anyhow!("{}: {e}", svg.display()))?;
        paths.push(svg);
    }
    crate::say!("{md}");
    Ok(paths)
}
