//! `cuda_sobel batch`: many images, the GPU kept fed.
//!
//! Decoding and encoding PNGs costs milliseconds an image; the GPU part (with pinned buffers) a fraction
//! of one. So rayon runs decode → Sobel → encode → atomic write for many files at once on all CPU cores,
//! and each worker borrows a GPU slot (its own stream and pinned buffers, [`crate::gpu::slots`]) only for
//! the copies and the kernel. Memory is bounded by the number of workers, whatever the number of files.
//! A file that fails is recorded with its reason and the batch goes on.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ::rayon::prelude::*;
use image::ExtendedColorType;
use indicatif::{ProgressBar, ProgressStyle};

use crate::gpu::slots::SlotPool;
use crate::gpu::{variants, Gpu};
use crate::image_io::{self, PngCompression};
use crate::pipeline::{Variant, N1};
use crate::sobel::Filter;
use crate::{cpu, error};

/// Edge images by (width, height), for the baseline.
type EdgeCache = Mutex<HashMap<(u32, u32), Arc<Vec<u8>>>>;

#[derive(Clone, Debug)]
pub struct BatchOptions {
    /// Files, and folders whose files (not sub-folders) are all taken.
    pub inputs: Vec<PathBuf>,
    pub out_dir: PathBuf,
    pub filter: Filter,
    pub compression: PngCompression,
    /// GPU slots (streams with pinned buffers) per device.
    pub slots: usize,
    /// Devices to spread the images over; `None`: every visible device.
    pub devices: Option<Vec<usize>>,
    /// Also compute cpu-scalar for every image and fail the image if the bytes differ.
    pub check: bool,
    /// Decode and encode only, no Sobel: the I/O ceiling batch mode is measured against. Each image is
    /// encoded as the edge image computed once for the first image of its size.
    pub baseline: bool,
}

#[derive(Debug)]
pub struct BatchSummary {
    pub images: usize,
    pub failures: Vec<(PathBuf, String)>,
    pub seconds: f64,
    pub input_bytes: u64,
    /// What computed the edges: "gpu-strip on …", "cpu-rayon (…)", or "none (baseline)".
    pub engine: String,
}

impl BatchSummary {
    pub fn images_per_second(&self) -> f64 {
        (self.images - self.failures.len()) as f64 / self.seconds
    }
}

/// The files to process: each input file, and the regular, non-hidden files of each input folder, sorted.
pub fn collect_inputs(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    use anyhow::Context as _;
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("{}: cannot list folder", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

pub fn run(opts: &BatchOptions) -> anyhow::Result<BatchSummary> {
    let files = collect_inputs(&opts.inputs)?;
    // One slot pool per device; images go to the devices in turn.
    let mut engine = "none (baseline: decode + encode only)".to_string();
    let mut gpus: Vec<(Gpu, SlotPool)> = Vec::new();
    if !opts.baseline {
        let ordinals = opts.devices.clone().unwrap_or_else(|| (0..Gpu::device_count().max(1)).collect());
        let mut reasons = Vec::new();
        for ordinal in ordinals {
            let opened =
                Gpu::open_device(ordinal, opts.filter).and_then(|g| SlotPool::new(&g, opts.slots).map(|p| (g, p)));
            match opened {
                Ok(pair) => gpus.push(pair),
                Err(e) => reasons.push(format!("device {ordinal}: {e}")),
            }
        }
        engine = match gpus.first() {
            Some((g, _)) => format!("gpu-strip on {} device(s) ({}), {} slots each", gpus.len(), g.device, opts.slots),
            None => format!("cpu-rayon (GPU variants skipped: {})", reasons.join("; ")),
        };
        if !gpus.is_empty() && !reasons.is_empty() {
            engine.push_str(&format!(" — skipped {}", reasons.join("; ")));
        }
    }
    // Baseline: one edge image per size, computed on first use.
    let baseline_edges: EdgeCache = Mutex::new(HashMap::new());

    let progress = ProgressBar::new(files.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} images · {per_sec} · {msg}")
            .expect("a valid template"),
    );
    let failures = Mutex::new(Vec::new());
    let input_bytes = std::sync::atomic::AtomicU64::new(0);
    let start = Instant::now();

    files.par_iter().enumerate().for_each(|(i, path)| {
        let device = (!gpus.is_empty()).then(|| &gpus[i % gpus.len()]);
        let result = (|| -> Result<u64, String> {
            let out = image_io::edge_path(&opts.out_dir, path);
            image_io::check_output(path, &out).map_err(|e| e.to_string())?;
            let rgb = image_io::decode_rgb(path).map_err(|e| e.to_string())?;
            let (w, h) = rgb.dimensions();
            let edges: Arc<Vec<u8>> = if opts.baseline {
                let mut cache = baseline_edges.lock().expect("no panic while locked");
                cache.entry((w, h)).or_insert_with(|| Arc::new(cpu::rayon::sobel(&rgb, opts.filter).into_raw())).clone()
            } else {
                Arc::new(compute(device, &rgb, opts.filter).map_err(|e| e.to_string())?)
            };
            if opts.check && !opts.baseline {
                let reference = cpu::scalar::sobel(&rgb, opts.filter);
                let differing = crate::pipeline::count_mismatches(&edges, reference.as_raw());
                if differing > 0 {
                    return Err(format!("{}: {differing} pixels differ from cpu-scalar", path.display()));
                }
            }
            image_io::write_png_with(&out, w, h, &edges, ExtendedColorType::L8, opts.compression)
                .map_err(|e| e.to_string())?;
            Ok(std::fs::metadata(path).map(|m| m.len()).unwrap_or(0))
        })();
        match result {
            Ok(bytes) => {
                let total = input_bytes.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed) + bytes;
                progress.set_message(format!("{:.0} MB/s", total as f64 / 1e6 / start.elapsed().as_secs_f64()));
            }
            Err(reason) => failures.lock().expect("no panic while locked").push((path.clone(), reason)),
        }
        progress.inc(1);
    });
    progress.finish_and_clear();

    let mut failures = failures.into_inner().expect("no panic while locked");
    failures.sort();
    Ok(BatchSummary {
        images: files.len(),
        failures,
        seconds: start.elapsed().as_secs_f64(),
        input_bytes: input_bytes.into_inner(),
        engine,
    })
}

/// The edge image of one decoded image: gpu-strip through a slot, bands for images a slot cannot hold,
/// cpu-rayon without a GPU.
fn compute(device: Option<&(Gpu, SlotPool)>, rgb: &image::RgbImage, filter: Filter) -> Result<Vec<u8>, BatchError> {
    match device {
        Some((g, pool)) => {
            let fits = variants::max_band_rows(g, Variant::GpuStrip, rgb.width() as usize)? >= rgb.height() as usize;
            if fits {
                Ok(pool.with_slot(|slot| slot.run(rgb, filter))?)
            } else {
                Ok(variants::run(g, Variant::GpuStrip, rgb, filter, N1::new(1), false, 1)?.output)
            }
        }
        None => Ok(cpu::rayon::sobel(rgb, filter).into_raw()),
    }
}

#[derive(Debug, thiserror::Error)]
enum BatchError {
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
    #[error(transparent)]
    Image(#[from] error::Error),
}

/// The summary as the terminal shows it.
pub fn summary_text(s: &BatchSummary) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let ok = s.images - s.failures.len();
    let _ = writeln!(
        t,
        "batch: {ok} of {} images in {:.2} s — {:.1} images/s, {:.0} MB/s of input — {}",
        s.images,
        s.seconds,
        s.images_per_second(),
        s.input_bytes as f64 / 1e6 / s.seconds,
        s.engine
    );
    if !s.failures.is_empty() {
        let _ = writeln!(t, "failed ({}):", s.failures.len());
        for (_, reason) in &s.failures {
            let _ = writeln!(t, "  {reason}");
        }
    }
    t
}
