//! `cuda_sobel batch` for Dask: the client plans (lists the folders, names every output, refuses what batch
//! refuses), each worker runs its share of the plan with engines it keeps.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use cuda_sobel_core::batch::KernelJob;
use cuda_sobel_core::conv::ConvKernel;
use cuda_sobel_core::engine::Engine;
use cuda_sobel_core::image_io::{Format, PngCompression};
use cuda_sobel_core::sobel::Filter;

use crate::{pick, runtime, NativeFilter};

/// (input, output) pairs and the lines about what was left out: what [`plan_batch`] returns.
type Plan = (Vec<(String, String)>, Vec<String>);

/// The files `inputs` (files and folders, as `cuda_sobel batch` takes them; sub-folders too with `recursive`)
/// stand for, each with its output in `out_dir`: `cuda_sobel batch`'s listing and its refusals (two inputs
/// whose outputs would share a name, an output that would replace an input, an unknown format) as
/// `ValueError`s. Also the summary's lines about what the folders held that was left out, and why.
#[pyfunction]
#[pyo3(signature = (inputs, out_dir, recursive=false, format="png", kernel=None))]
pub fn plan_batch(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    out_dir: PathBuf,
    recursive: bool,
    format: &str,
    kernel: Option<&str>,
) -> PyResult<Plan> {
    let format = pick("format", format, &Format::ALL, Format::name)?;
    let mut opts = options(inputs, recursive, out_dir, format, Filter::default(), PngCompression::Default, false);
    opts.kernel = kernel_job(kernel, false)?;
    py.detach(|| cuda_sobel_core::batch::plan(&opts).map_err(|e| format!("{e:#}")))
        .map(|(jobs, skipped)| {
            let pairs = jobs.iter().map(|(i, o)| (i.display().to_string(), o.display().to_string()));
            (pairs.collect(), skipped)
        })
        .map_err(PyValueError::new_err)
}

/// (images, [(file, reason)], seconds, what computed): what [`batch`] returns.
type BatchResult = (usize, Vec<(String, String)>, f64, String);

/// `cuda_sobel batch` on these (input, output) pairs, planned by [`plan_batch`] (the GPU(s) `devices`,
/// default every visible one, else the CPU): (images, [(file, reason) of each failure], seconds, what
/// computed). Outputs are written atomically, so running it again on the same files (a retried task) is
/// harmless.
#[pyfunction]
#[pyo3(signature = (jobs, filter, png_compression, format, check, devices=None, kernel=None, rgb=false))]
#[allow(clippy::too_many_arguments)] // batch's options, passed through one by one
pub fn batch(
    py: Python<'_>,
    jobs: Vec<(PathBuf, PathBuf)>,
    filter: &NativeFilter,
    png_compression: &str,
    format: &str,
    check: bool,
    devices: Option<Vec<usize>>,
    kernel: Option<&str>,
    rgb: bool,
) -> PyResult<BatchResult> {
    let compression = pick("png_compression", png_compression, &PngCompression::ALL, PngCompression::name)?;
    let format = pick("format", format, &Format::ALL, Format::name)?;
    let mut opts = options(Vec::new(), false, PathBuf::new(), format, filter.filter, compression, check);
    opts.devices = devices;
    opts.kernel = kernel_job(kernel, rgb)?;
    let summary = py
        .detach(|| -> anyhow::Result<_> {
            let engines = engines(&opts)?;
            Ok(cuda_sobel_core::batch::run_planned(&opts, &engines.0, engines.1.clone(), &jobs))
        })
        .map_err(|e| runtime(format!("{e:#}")))?;
    let failures = summary.failures.iter().map(|(p, r)| (p.display().to_string(), r.clone())).collect();
    Ok((summary.images, failures, summary.seconds, summary.engine))
}

/// `batch --kernel SPEC [--rgb]`'s job, or None for the edges; a bad spec as the `ValueError` of the command line's words.
fn kernel_job(kernel: Option<&str>, rgb: bool) -> PyResult<Option<KernelJob>> {
    kernel
        .map(|spec| {
            let kernel = ConvKernel::parse(spec).map_err(|e| PyValueError::new_err(format!("kernel {e}")))?;
            Ok(KernelJob { kernel, rgb })
        })
        .transpose()
}

/// Batch options with the command line's defaults for what Python does not choose.
fn options(
    inputs: Vec<PathBuf>,
    recursive: bool,
    out_dir: PathBuf,
    format: Format,
    filter: Filter,
    compression: PngCompression,
    check: bool,
) -> cuda_sobel_core::batch::BatchOptions {
    cuda_sobel_core::batch::BatchOptions {
        inputs,
        recursive,
        out_dir,
        format,
        filter,
        compression,
        slots: None,
        devices: None,
        check,
        baseline: false,
        budget: cuda_sobel_core::memory::Budget::new(None),
        keep_orientation: false,
        jpeg_decoder: cuda_sobel_core::batch::JpegDecoder::Auto,
        png_encoder: cuda_sobel_core::batch::PngEncoder::Auto,
        png_inflate: cuda_sobel_core::batch::PngInflate::Cpu,
        kernel: None,
    }
}

/// The engines for `opts.devices`, opened once per process and kept: a Dask worker runs one batch per task,
/// and opening a context with its kernels and pinned slots for each (~0.3 s) made a 2-worker run 4× slower
/// than `cuda_sobel batch` on the same folder.
fn engines(opts: &cuda_sobel_core::batch::BatchOptions) -> anyhow::Result<Arc<(Vec<Engine>, String)>> {
    type Cache = Mutex<HashMap<Option<Vec<usize>>, Arc<(Vec<Engine>, String)>>>;
    static ENGINES: OnceLock<Cache> = OnceLock::new();
    let mut cache =
        ENGINES.get_or_init(Default::default).lock().map_err(|_| anyhow::anyhow!("engine cache poisoned"))?;
    if let Some(e) = cache.get(&opts.devices) {
        return Ok(e.clone());
    }
    let opened = Arc::new(cuda_sobel_core::batch::open_engines(opts)?);
    cache.insert(opts.devices.clone(), opened.clone());
    Ok(opened)
}
