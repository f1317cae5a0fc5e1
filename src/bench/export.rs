//! Files: `results.json` (every raw number, the machine and GPU, the commit), `results.csv` (one row per
//! run), `results.md` (tables shaped like the report's, [`markdown`]), and the SVG plots (see
//! [`super::plots`]).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Serialize;

pub use super::markdown::markdown;

use super::{plots, BenchResults, Category, PipelineSeries};
use crate::stats::Summary;

/// Writes every export into `dir` and returns the paths written.
pub fn write_all(r: &BenchResults, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create folder", dir.display()))?;
    let mut written = Vec::new();
    for (name, text) in [("results.json", json(r)), ("results.csv", csv(r)?), ("results.md", markdown(r))] {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
        written.push(path);
    }
    written.extend(plots::write_all(r, dir)?);
    Ok(written)
}

/// Every raw number, the machine and the commit, as pretty JSON.
pub fn json(r: &BenchResults) -> String {
    serde_json::to_string_pretty(r).expect("results always serialise")
}

#[derive(Serialize)]
struct CsvRow<'a> {
    kind: &'a str,
    width: u32,
    height: u32,
    variant: &'a str,
    n: Option<u32>,
    run: usize,
    io_ms: Option<f64>,
    gpu_memory_ms: Option<f64>,
    compute_ms: f64,
    total_ms: Option<f64>,
}

/// One row per whole-pipeline run (`kind = pipeline`) and per computation-only sample (`kind = kernel`,
/// or `kernel_report_mapping` for gpu-n1 with `--mapping report`).
pub fn csv(r: &BenchResults) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for s in &r.pipeline {
        for (run, t) in s.runs.iter().enumerate() {
            w.serialize(CsvRow {
                kind: "pipeline",
                width: s.width,
                height: s.height,
                variant: s.variant.name(),
                n: s.n,
                run,
                io_ms: Some(t.io_ms),
                gpu_memory_ms: t.gpu_memory_ms,
                compute_ms: t.compute_ms,
                total_ms: Some(t.total_ms),
            })?;
        }
    }
    let kernels = r.kernels.iter().map(|k| ("kernel", k));
    for (kind, k) in kernels.chain(r.report_mapping.iter().map(|k| ("kernel_report_mapping", k))) {
        for (run, &ms) in k.samples_ms.iter().enumerate() {
            w.serialize(CsvRow {
                kind,
                width: k.width,
                height: k.height,
                variant: k.variant.name(),
                n: k.n,
                run,
                io_ms: None,
                gpu_memory_ms: None,
                compute_ms: ms,
                total_ms: None,
            })?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// `v` with three significant figures (at least), as plain decimals.
pub(super) fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.decimals$}")
}

/// "mean ± σ" with σ at the mean's precision.
pub(super) fn pm(s: Option<Summary>) -> String {
    match s {
        None => "–".into(),
        Some(s) => {
            let m = sig(s.mean);
            let decimals = m.split_once('.').map_or(0, |(_, d)| d.len());
            format!("{m} ± {:.decimals$}", s.sd)
        }
    }
}

pub(super) fn size_label((w, h): (u32, u32)) -> String {
    format!("{w}x{h}")
}

pub(super) fn categories_row(s: &PipelineSeries) -> String {
    format!(
        "{} | {} | {} | {}",
        pm(s.summary(Category::Io)),
        pm(s.summary(Category::GpuMemory)),
        pm(s.summary(Category::Computation)),
        pm(s.summary(Category::Total))
    )
}
