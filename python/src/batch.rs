//! `cuda_sobel batch` for Dask: the client plans (lists the folders, names every output, refuses what batch
//! refuses), each worker runs its share of the plan through a [`BatchWorker`] it keeps.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use cuda_sobel_core::batch::{KernelJob, Resident};
use cuda_sobel_core::canny::Canny;
use cuda_sobel_core::conv::ConvKernel;
use cuda_sobel_core::image_io::{Format, PngCompression};
use cuda_sobel_core::sobel::{Compat, Filter, Ksize, Norm, Operator};
use cuda_sobel_core::{interrupt, memory};

use crate::{pick, runtime, NativeFilter};

/// (input, output) pairs, the lines about what was left out, and whether the engines need nvJPEG: what
/// [`plan_batch`] returns.
type Plan = (Vec<(String, String)>, Vec<String>, bool);

/// The files `inputs` (files and folders, as `cuda_sobel batch` takes them; sub-folders too with `recursive`)
/// stand for, each with its output in `out_dir`: `cuda_sobel batch`'s listing and its refusals (two inputs
/// whose outputs would share a name, an output that would replace an input, an unknown format) as
/// `ValueError`s. Also the summary's lines about what the folders held that was left out, and why, and whether
/// batch would load nvJPEG for them (a JPEG among the inputs, edges or Canny computed).
#[pyfunction]
#[pyo3(signature = (inputs, out_dir, recursive=false, format="png", kernel=None, canny=false))]
pub fn plan_batch(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    out_dir: PathBuf,
    recursive: bool,
    format: &str,
    kernel: Option<&str>,
    canny: bool,
) -> PyResult<Plan> {
    let format = pick("format", format, &Format::ALL, Format::name)?;
    let mut opts = options(inputs, recursive, out_dir, format, Filter::default(), PngCompression::Default, false);
    opts.kernel = kernel_job(kernel, false)?;
    // Only the outputs' names depend on it here (`<stem>_canny.<format>`).
    opts.canny = canny.then(|| Canny::new(0.0, 0.0, Norm::L1, Ksize::K3).expect("valid"));
    py.detach(|| cuda_sobel_core::batch::plan(&opts).map_err(|e| format!("{e:#}")))
        .map(|(jobs, skipped)| {
            let jpegs = cuda_sobel_core::batch::has_jpegs(&opts, &jobs);
            let pairs = jobs.iter().map(|(i, o)| (i.display().to_string(), o.display().to_string()));
            (pairs.collect(), skipped, jpegs)
        })
        .map_err(PyValueError::new_err)
}

/// (images, [(file, reason)], seconds, what computed): what [`BatchWorker::run`] returns.
type BatchResult = (usize, Vec<(String, String)>, f64, String);

/// `cuda_sobel batch`'s engines, opened once and kept for the life of a process — a Dask worker's: the devices'
/// contexts and kernels, nvJPEG, the pinned slots and the worker threads beside them (all devices at once), so that
/// a task pays for none of it. Opening costs tenths of a second to a second a device; a task of 64 photos, about as
/// long. Tasks may call [`BatchWorker::run`] from several threads at once: their jobs share its threads, slots and
/// memory budget, and one task's last images overlap the next task's first.
#[pyclass(frozen, module = "cuda_sobel._native")]
pub struct BatchWorker {
    resident: Resident,
    pool: memory::Pool,
}

#[pymethods]
impl BatchWorker {
    /// Opens the GPU(s) `devices` (default: every visible one; without any, the CPU) with `threads` workers beside
    /// the slots (default: one a core, or `RAYON_NUM_THREADS`); with `jpegs`, nvJPEG too (its JPEG engine takes
    /// ~0.6 s to open on an H200; without it, JPEGs decode on the CPU).
    #[new]
    #[pyo3(signature = (devices=None, threads=None, jpegs=true))]
    fn new(py: Python<'_>, devices: Option<Vec<usize>>, threads: Option<usize>, jpegs: bool) -> PyResult<Self> {
        let mut opts =
            options(Vec::new(), false, PathBuf::new(), Format::Png, Filter::default(), PngCompression::Default, false);
        opts.devices = devices;
        let resident = py.detach(|| Resident::open(&opts, jpegs, threads)).map_err(|e| runtime(format!("{e:#}")))?;
        Ok(BatchWorker { resident, pool: memory::Pool::new(opts.budget) })
    }

    /// What computes the edges, in one line (device, slots, JPEG decoder).
    #[getter]
    fn description(&self) -> String {
        self.resident.description(&options(
            Vec::new(),
            false,
            PathBuf::new(),
            Format::Png,
            Filter::default(),
            PngCompression::Default,
            false,
        ))
    }

    /// `cuda_sobel batch` on these (input, output) pairs, planned by [`plan_batch`]: (images, [(file, reason) of
    /// each failure], seconds, what computed). Outputs are written atomically, so running it again on the same
    /// files (a retried task) is harmless.
    /// With `ahead`, the files of `jobs` it read are taken from it first.
    #[pyo3(signature = (jobs, filter, png_compression, format, check, kernel=None, rgb=false, canny=None, ahead=None))]
    #[allow(clippy::too_many_arguments)] // batch's options, passed through one by one
    fn run(
        &self,
        py: Python<'_>,
        jobs: Vec<(PathBuf, PathBuf)>,
        filter: &NativeFilter,
        png_compression: &str,
        format: &str,
        check: bool,
        kernel: Option<&str>,
        rgb: bool,
        canny: Option<(f64, f64)>,
        ahead: Option<&Bound<'_, ReadAhead>>,
    ) -> PyResult<BatchResult> {
        let compression = pick("png_compression", png_compression, &PngCompression::ALL, PngCompression::name)?;
        let format = pick("format", format, &Format::ALL, Format::name)?;
        let mut opts = options(Vec::new(), false, PathBuf::new(), format, filter.filter, compression, check);
        opts.kernel = kernel_job(kernel, rgb)?;
        opts.canny = canny.map(|(low, high)| canny_of(filter.filter, low, high)).transpose()?;
        let ahead = ahead.map(|a| &a.get().ahead);
        let summary = py.detach(|| self.resident.run(&opts, &jobs, &self.pool, ahead));
        let failures = summary.failures.iter().map(|(p, r)| (p.display().to_string(), r.clone())).collect();
        Ok((summary.images, failures, summary.seconds, summary.engine))
    }
}

/// PNGs of a plan read ahead, on the cores less two, until the first [`BatchWorker::run`] given it starts: what the
/// command's local cluster does with its idle cores while Dask is imported and the cluster starts. Runs then take
/// their files from it first (outputs identical: the same rows a run reads). At most a quarter of the memory budget.
#[pyclass(frozen, module = "cuda_sobel._native")]
pub struct ReadAhead {
    ahead: cuda_sobel_core::batch::ReadAhead,
}

#[pymethods]
impl ReadAhead {
    /// Starts reading the PNGs of `jobs` ((input, output) pairs of [`plan_batch`]), in order, for runs with or
    /// without `check` and `canny` (their memory estimates).
    #[new]
    #[pyo3(signature = (jobs, check=false, canny=false))]
    fn new(jobs: Vec<(PathBuf, PathBuf)>, check: bool, canny: bool) -> Self {
        let mut opts =
            options(Vec::new(), false, PathBuf::new(), Format::Png, Filter::default(), PngCompression::Default, check);
        opts.canny = canny.then(|| Canny::new(0.0, 0.0, Norm::L1, Ksize::K3).expect("valid"));
        ReadAhead { ahead: cuda_sobel_core::batch::ReadAhead::start(&opts, jobs) }
    }

    /// Files the runs took from it.
    #[getter]
    fn taken(&self) -> usize {
        self.ahead.taken()
    }
}

/// Removes what writers killed mid-file left beside each of `outputs` (hidden temporary files named after the
/// output, and only those), once no task writes them any more; returns how many.
#[pyfunction]
pub fn remove_stale(py: Python<'_>, outputs: Vec<PathBuf>) -> PyResult<usize> {
    py.detach(|| interrupt::remove_stale(&outputs)).map_err(|e| runtime(format!("removing temporary files: {e}")))
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

/// Checks `--output canny`'s thresholds against `filter` before any task runs: a `ValueError` in the command line's
/// words.
#[pyfunction]
pub fn check_canny(filter: &NativeFilter, low: f64, high: f64) -> PyResult<()> {
    canny_of(filter.filter, low, high).map(drop)
}

/// `--output canny`'s parameters with `filter`'s aperture and norm, checked as the command line checks them (a
/// `ValueError` in its words).
pub fn canny_of(filter: Filter, low: f64, high: f64) -> PyResult<Canny> {
    if filter.operator != Operator::Sobel || filter.compat != Compat::Exact {
        return Err(PyValueError::new_err(
            "canny: OpenCV's Canny takes the exact Sobel (operator='sobel', compat='exact')",
        ));
    }
    Canny::new(low, high, filter.norm, filter.ksize).map_err(PyValueError::new_err)
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
        canny: None,
    }
}
