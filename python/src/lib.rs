//! `cuda_sobel._native`: the thin layer between Python and the library's [`Engine`]. The Python side
//! (`cuda_sobel/__init__.py`) turns whatever array it is given into packed RGB bytes — on the host a
//! C-contiguous NumPy array, on a GPU a raw pointer and the caller's stream — and calls one of three
//! functions here. Every native call releases the GIL while it computes; every failure is a Python
//! exception with the command line's one-line words, never a panic.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use numpy::{PyReadonlyArrayDyn, PyReadwriteArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use cuda_sobel::engine::{Device, Engine, RawImages, RunOptions};
use cuda_sobel::image_io::{Format, PngCompression};
use cuda_sobel::sobel::{Border, Compat, Filter, Operator};
use cuda_sobel::variant::Variant;

/// The value of `all` named `name`, or a `ValueError` in the command line's words.
fn pick<T: Copy>(what: &str, name: &str, all: &[T], name_of: fn(T) -> &'static str) -> PyResult<T> {
    all.iter().copied().find(|&v| name_of(v) == name).ok_or_else(|| {
        let names: Vec<_> = all.iter().map(|&v| name_of(v)).collect();
        PyValueError::new_err(format!("invalid {what} '{name}': expected one of {}", names.join(", ")))
    })
}

/// The filter named by the three strings, or a `ValueError` in the command line's words.
fn filter(operator: &str, border: Option<&str>, compat: &str) -> PyResult<Filter> {
    let operator = pick("operator", operator, &Operator::ALL, Operator::name)?;
    let compat = pick("compat", compat, &Compat::ALL, Compat::name)?;
    let border = border.map(|b| pick("border", b, &Border::ALL, Border::name)).transpose()?;
    Filter::resolve(operator, border, compat).map_err(|b| {
        PyValueError::new_err(format!("compat 'report' uses the report's zero border; leave out border '{}'", b.name()))
    })
}

/// An error of the library as a Python exception (its one-line `Display`).
fn runtime(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// A device and its compiled kernels, kept for repeated calls.
#[pyclass(module = "cuda_sobel._native", frozen)]
struct NativeEngine {
    engine: Engine,
    ordinal: Option<usize>,
}

#[pymethods]
impl NativeEngine {
    /// `device`: "cpu", or a CUDA ordinal (`cuda:N`). Opening a GPU that cannot be used raises.
    #[new]
    #[pyo3(signature = (ordinal=None))]
    fn new(py: Python<'_>, ordinal: Option<usize>) -> PyResult<Self> {
        let device = ordinal.map_or(Device::Cpu, Device::Cuda);
        let engine = py
            .detach(|| Engine::new(device, Filter::default()).and_then(|e| e.with_slots(2)))
            .map_err(|e| runtime(format!("cannot use CUDA device {}: {e}", ordinal.unwrap_or(0))))?;
        Ok(NativeEngine { engine, ordinal })
    }

    /// The CUDA ordinal, or None for the CPU.
    #[getter]
    fn ordinal(&self) -> Option<usize> {
        self.ordinal
    }

    /// "cpu-rayon" or "gpu-strip on <device name>".
    fn describe(&self) -> String {
        self.engine.describe()
    }

    /// Edges of `images` packed RGB images (`rgb`: C-contiguous uint8, shape (..., H, W, 3)) into `out`
    /// (C-contiguous uint8, shape (..., H, W)), host memory, with `variant` ("cpu-rayon", "cpu-scalar" or
    /// "gpu-strip").
    #[pyo3(signature = (rgb, out, variant, operator, border, compat))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, passed through one by one
    fn sobel_host(
        &self,
        py: Python<'_>,
        rgb: PyReadonlyArrayDyn<'_, u8>,
        mut out: PyReadwriteArrayDyn<'_, u8>,
        variant: &str,
        operator: &str,
        border: Option<&str>,
        compat: &str,
    ) -> PyResult<()> {
        let filter = filter(operator, border, compat)?;
        let (w, h, images) = packed_shape(rgb.shape(), out.shape())?;
        let variant = match variant {
            "cpu-rayon" => Variant::CpuRayon,
            "cpu-scalar" => Variant::CpuScalar,
            "gpu-strip" => Variant::GpuStrip,
            other => {
                return Err(PyValueError::new_err(format!(
                    "invalid variant '{other}': expected one of auto, cpu-rayon, cpu-scalar, gpu-strip"
                )))
            }
        };
        let src = rgb.as_slice().map_err(|_| PyValueError::new_err("rgb must be C-contiguous"))?;
        let dst = out.as_slice_mut().map_err(|_| PyValueError::new_err("out must be C-contiguous"))?;
        let engine = &self.engine;
        if variant == Variant::GpuStrip && images > 1 {
            // A batch: one upload, one launch, one download.
            return py
                .detach(|| engine.sobel_batch(src, w as u32, h as u32, images as u32, filter, dst))
                .map_err(runtime);
        }
        py.detach(|| -> Result<(), String> {
            let (px, bytes) = (w * h, 3 * w * h);
            for (i, edges) in dst.chunks_mut(px.max(1)).take(images).enumerate() {
                let one = &src[i * bytes..(i + 1) * bytes];
                if px == 0 {
                    continue;
                }
                if variant == Variant::CpuRayon {
                    cuda_sobel::cpu::rayon::sobel_into(one, w, h, filter, edges);
                    continue;
                }
                let image = image::RgbImage::from_raw(w as u32, h as u32, one.to_vec()).expect("sized above");
                let run = match variant {
                    Variant::GpuStrip => engine.sobel(&image, filter).map(|g| g.into_raw()),
                    v => engine.run(v, &image, filter, RunOptions::default()).map(|r| r.output),
                };
                edges.copy_from_slice(&run.map_err(|e| e.to_string())?);
            }
            Ok(())
        })
        .map_err(runtime)
    }

    /// Gx and Gy (int16) of packed RGB images into `gx` and `gy` (C-contiguous int16, shape (..., H, W)),
    /// host memory.
    #[pyo3(signature = (rgb, gx, gy, operator, border, compat))]
    #[allow(clippy::too_many_arguments)]
    fn gradients_host(
        &self,
        py: Python<'_>,
        rgb: PyReadonlyArrayDyn<'_, u8>,
        mut gx: PyReadwriteArrayDyn<'_, i16>,
        mut gy: PyReadwriteArrayDyn<'_, i16>,
        operator: &str,
        border: Option<&str>,
        compat: &str,
    ) -> PyResult<()> {
        let filter = filter(operator, border, compat)?;
        let (w, h, images) = packed_shape(rgb.shape(), gx.shape())?;
        if gx.shape() != gy.shape() {
            return Err(PyValueError::new_err("gx and gy must have the same shape"));
        }
        let src = rgb.as_slice().map_err(|_| PyValueError::new_err("rgb must be C-contiguous"))?;
        let gx = gx.as_slice_mut().map_err(|_| PyValueError::new_err("gx must be C-contiguous"))?;
        let gy = gy.as_slice_mut().map_err(|_| PyValueError::new_err("gy must be C-contiguous"))?;
        py.detach(|| {
            let px = w * h;
            for i in 0..images {
                if px == 0 {
                    continue;
                }
                let one = src[i * 3 * px..(i + 1) * 3 * px].to_vec();
                let image = image::RgbImage::from_raw(w as u32, h as u32, one).expect("sized above");
                let stages = cuda_sobel::cpu::scalar::sobel_stages(&image, filter);
                gx[i * px..(i + 1) * px].copy_from_slice(&stages.gx);
                gy[i * px..(i + 1) * px].copy_from_slice(&stages.gy);
            }
        });
        Ok(())
    }

    /// gpu-strip on device memory another library owns: `images` packed RGB images at `rgb` into `out`,
    /// launched on `stream` (a `CUstream` handle, 0 for the default stream) without any copy or wait.
    #[pyo3(signature = (rgb, out, width, height, images, stream, operator, border, compat))]
    #[allow(clippy::too_many_arguments)]
    fn sobel_device(
        &self,
        py: Python<'_>,
        rgb: u64,
        out: u64,
        width: u32,
        height: u32,
        images: u32,
        stream: u64,
        operator: &str,
        border: Option<&str>,
        compat: &str,
    ) -> PyResult<()> {
        let filter = filter(operator, border, compat)?;
        if rgb == 0 || out == 0 {
            return Err(PyValueError::new_err("null device pointer"));
        }
        let a = RawImages { rgb, out, width, height, images, stream };
        let engine = &self.engine;
        // SAFETY: the Python side passes the data pointers of a CUDA array on this engine's device, of the
        // shapes it checked ((images, height, width, 3) and (images, height, width) uint8, C-contiguous),
        // and that device's current stream of the array's library; it keeps both arrays alive until the
        // call returns, and the launch is ordered before any later work on that stream.
        py.detach(|| unsafe { engine.sobel_on_device(a, filter) }).map_err(runtime)
    }
}

/// (width, height, images) of packed RGB `(…, H, W, 3)` and its output `(…, H, W)`, or a `ValueError`.
fn packed_shape(rgb: &[usize], out: &[usize]) -> PyResult<(usize, usize, usize)> {
    let bad = || PyValueError::new_err(format!("shape mismatch: rgb {rgb:?} and output {out:?}"));
    if rgb.len() < 3 || rgb[rgb.len() - 1] != 3 || out.len() + 1 != rgb.len() || rgb[..out.len()] != *out {
        return Err(bad());
    }
    let (h, w) = (rgb[rgb.len() - 3], rgb[rgb.len() - 2]);
    let images = rgb[..rgb.len() - 3].iter().product();
    Ok((w, h, images))
}

/// The library's names, for the Python side's checks and messages.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeEngine>()?;
    m.add("OPERATORS", Operator::ALL.map(Operator::name).to_vec())?;
    m.add("BORDERS", Border::ALL.map(Border::name).to_vec())?;
    m.add("COMPATS", Compat::ALL.map(Compat::name).to_vec())?;
    m.add("FORMATS", Format::ALL.map(Format::name).to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(device_count, m)?)?;
    m.add_function(wrap_pyfunction!(plan_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch, m)?)?;
    Ok(())
}

/// (input, output) pairs and the lines about what was left out: what [`plan_batch`] returns.
type Plan = (Vec<(String, String)>, Vec<String>);

/// The files `inputs` (files and folders, as `cuda_sobel batch` takes them; sub-folders too with `recursive`)
/// stand for, each with its output in `out_dir`: `cuda_sobel batch`'s listing and its refusals (two inputs
/// whose outputs would share a name, an output that would replace an input, an unknown format) as
/// `ValueError`s. Also the summary's lines about what the folders held that was left out, and why.
#[pyfunction]
#[pyo3(signature = (inputs, out_dir, recursive=false, format="png"))]
fn plan_batch(
    py: Python<'_>,
    inputs: Vec<std::path::PathBuf>,
    out_dir: std::path::PathBuf,
    recursive: bool,
    format: &str,
) -> PyResult<Plan> {
    let format = pick("format", format, &Format::ALL, Format::name)?;
    let opts = batch_options(inputs, recursive, out_dir, format, Filter::default(), PngCompression::Default, false);
    py.detach(|| cuda_sobel::batch::plan(&opts).map_err(|e| format!("{e:#}")))
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
#[pyo3(signature = (jobs, operator, border, compat, png_compression, format, check, devices=None))]
#[allow(clippy::too_many_arguments)]
fn batch(
    py: Python<'_>,
    jobs: Vec<(std::path::PathBuf, std::path::PathBuf)>,
    operator: &str,
    border: Option<&str>,
    compat: &str,
    png_compression: &str,
    format: &str,
    check: bool,
    devices: Option<Vec<usize>>,
) -> PyResult<BatchResult> {
    let filter = filter(operator, border, compat)?;
    let compression = pick("png_compression", png_compression, &PngCompression::ALL, PngCompression::name)?;
    let format = pick("format", format, &Format::ALL, Format::name)?;
    let mut opts = batch_options(Vec::new(), false, std::path::PathBuf::new(), format, filter, compression, check);
    opts.devices = devices;
    let summary = py
        .detach(|| -> anyhow::Result<_> {
            let engines = batch_engines(&opts)?;
            Ok(cuda_sobel::batch::run_planned(&opts, &engines.0, engines.1.clone(), &jobs))
        })
        .map_err(|e| runtime(format!("{e:#}")))?;
    let failures = summary.failures.iter().map(|(p, r)| (p.display().to_string(), r.clone())).collect();
    Ok((summary.images, failures, summary.seconds, summary.engine))
}

/// Batch options with the command line's defaults for what Python does not choose.
fn batch_options(
    inputs: Vec<std::path::PathBuf>,
    recursive: bool,
    out_dir: std::path::PathBuf,
    format: Format,
    filter: Filter,
    compression: PngCompression,
    check: bool,
) -> cuda_sobel::batch::BatchOptions {
    cuda_sobel::batch::BatchOptions {
        inputs,
        recursive,
        out_dir,
        format,
        filter,
        compression,
        slots: 4,
        devices: None,
        check,
        baseline: false,
        budget: cuda_sobel::memory::Budget::new(None),
        keep_orientation: false,
    }
}

/// The engines for `opts.devices`, opened once per process and kept: a Dask worker runs one batch per task,
/// and opening a context with its kernels and pinned slots for each (~0.3 s) made a 2-worker run 4× slower
/// than `cuda_sobel batch` on the same folder (`docs/performance.md` v0.18).
fn batch_engines(opts: &cuda_sobel::batch::BatchOptions) -> anyhow::Result<Arc<(Vec<Engine>, String)>> {
    type Cache = Mutex<HashMap<Option<Vec<usize>>, Arc<(Vec<Engine>, String)>>>;
    static ENGINES: OnceLock<Cache> = OnceLock::new();
    let mut cache =
        ENGINES.get_or_init(Default::default).lock().map_err(|_| anyhow::anyhow!("engine cache poisoned"))?;
    if let Some(e) = cache.get(&opts.devices) {
        return Ok(e.clone());
    }
    let opened = Arc::new(cuda_sobel::batch::open_engines(opts)?);
    cache.insert(opts.devices.clone(), opened.clone());
    Ok(opened)
}

/// How many CUDA devices are visible (0 without a driver).
#[pyfunction]
fn device_count(py: Python<'_>) -> usize {
    py.detach(Engine::device_count)
}
