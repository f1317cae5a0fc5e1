//! `cuda_sobel._native`: the thin layer between Python and the library. The Python side
//! (`cuda_sobel/__init__.py`) checks what it is given and calls one of the functions here: host arrays go
//! in as they are — any layout NumPy can describe, 8 or 16 bits — and are read in place by the CPU
//! variants, or turned into packed RGB on all cores for the GPU; GPU arrays come as raw pointers with the
//! caller's stream. Every native call releases the GIL while it computes; every failure is a Python
//! exception with the command line's one-line words, never a panic.

mod batch;
mod canny;
mod device;
mod filter;
mod host;

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use cuda_sobel_core::engine::{Device, Engine};
use cuda_sobel_core::image_io::Format;
use cuda_sobel_core::sobel::{Border, Compat, Filter, Grey, Ksize, Norm, Operator};

/// The value of `all` named `name`, or a `ValueError` in the command line's words.
fn pick<T: Copy>(what: &str, name: &str, all: &[T], name_of: fn(T) -> &'static str) -> PyResult<T> {
    all.iter().copied().find(|&v| name_of(v) == name).ok_or_else(|| {
        let names: Vec<_> = all.iter().map(|&v| name_of(v)).collect();
        PyValueError::new_err(format!("invalid {what} '{name}': expected one of {}", names.join(", ")))
    })
}

/// An error of the library as a Python exception (its one-line `Display`).
fn runtime(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// What every call computes with: operator, kernel size, border, arithmetic, grey and norm, checked once
/// (the Python side keeps one per combination of its keyword arguments).
#[pyclass(module = "cuda_sobel._native", frozen)]
struct NativeFilter {
    filter: Filter,
}

#[pymethods]
impl NativeFilter {
    #[new]
    #[pyo3(signature = (operator, ksize, border, compat, grey, norm))]
    fn new(operator: &str, ksize: u32, border: Option<&str>, compat: &str, grey: &str, norm: &str) -> PyResult<Self> {
        let operator = pick("operator", operator, &Operator::ALL, Operator::name)?;
        let ksize = pick("ksize", &ksize.to_string(), &Ksize::ALL, Ksize::name)?;
        let compat = pick("compat", compat, &Compat::ALL, Compat::name)?;
        let grey = pick("grey", grey, &Grey::ALL, Grey::name)?;
        let norm = pick("norm", norm, &[Norm::L2, Norm::L1], |n| if n == Norm::L2 { "l2" } else { "l1" })?;
        let border = border.map(|b| pick("border", b, &Border::ALL, Border::name)).transpose()?;
        let base = Filter { operator, ksize, compat, grey, norm, ..Filter::default() };
        let filter = Filter::resolve(base, border)
            .map_err(|c| PyValueError::new_err(c.message(|name, value| format!("{name}='{value}'"))))?;
        Ok(NativeFilter { filter })
    }

    /// Whether the filter's gradients fit int16 (every kernel size but 7).
    #[getter]
    fn gradients_fit_int16(&self) -> bool {
        self.filter.stencil().fits_i16()
    }

    /// The largest |Gx| or |Gy| an 8-bit image can give.
    #[getter]
    fn gradient_bound(&self) -> i32 {
        self.filter.stencil().bound()
    }
}

/// A device and its compiled kernels, kept for repeated calls.
#[pyclass(module = "cuda_sobel._native", frozen)]
struct NativeEngine {
    engine: Engine,
    ordinal: Option<usize>,
}

#[pymethods]
impl NativeEngine {
    /// `ordinal`: a CUDA device, or None for the CPU. Opening a GPU that cannot be used raises.
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
}

/// The RGB image the command line decodes from `path` (H×W×3 uint8: any format it reads, alpha dropped,
/// grey expanded, 16 bits rounded, the EXIF orientation applied unless `keep_orientation`, the first frame of
/// an animation), and the notes it prints about it.
#[pyfunction]
#[pyo3(signature = (path, keep_orientation=false))]
fn read<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    keep_orientation: bool,
) -> PyResult<(Bound<'py, numpy::PyArray3<u8>>, Vec<String>)> {
    use cuda_sobel_core::error::Error;
    use cuda_sobel_core::image_io::{decode, DecodeOptions};
    use cuda_sobel_core::memory::{image_bytes, Budget};
    let budget = Budget::detect();
    let opts = DecodeOptions { budget, keep_orientation };
    let decoded = py.detach(|| {
        decode(&path, &opts, |h| {
            budget.check(&path, h.width, h.height, image_bytes(h.width, h.height, h.decode_peak_bytes_per_pixel()))
        })
    });
    let (decoded, ()) = decoded.map_err(|e| match &e {
        Error::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(cuda_sobel_core::error::one_line(&e))
        }
        Error::Read { .. } | Error::IsDirectory { .. } | Error::NotRegular { .. } => {
            PyOSError::new_err(cuda_sobel_core::error::one_line(&e))
        }
        _ => PyValueError::new_err(cuda_sobel_core::error::one_line(&e)),
    })?;
    let (w, h) = decoded.rgb.dimensions();
    let array = numpy::ndarray::Array3::from_shape_vec((h as usize, w as usize, 3), decoded.rgb.into_raw())
        .expect("width × height × 3 bytes");
    Ok((numpy::PyArray3::from_owned_array(py, array), decoded.notes))
}

/// The library's names, for the Python side's checks and messages.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // `CUDA_SOBEL_TRACE=1` marks count from the import, as the command line's count from `main`.
    cuda_sobel_core::trace::start();
    m.add_class::<NativeEngine>()?;
    m.add_class::<NativeFilter>()?;
    m.add_class::<filter::NativeKernel>()?;
    m.add("OPERATORS", Operator::ALL.map(Operator::name).to_vec())?;
    m.add("KSIZES", Ksize::ALL.map(|k| k as u32).to_vec())?;
    m.add("BORDERS", Border::ALL.map(Border::name).to_vec())?;
    m.add("COMPATS", Compat::ALL.map(Compat::name).to_vec())?;
    m.add("GREYS", Grey::ALL.map(Grey::name).to_vec())?;
    m.add("FORMATS", Format::ALL.map(Format::name).to_vec())?;
    m.add(
        "FILTER_VARIANTS",
        cuda_sobel_core::variant::Variant::KERNELS.map(cuda_sobel_core::variant::Variant::name).to_vec(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(device_count, m)?)?;
    m.add_function(wrap_pyfunction!(show_only_devices, m)?)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(host::sobel_host, m)?)?;
    m.add_function(wrap_pyfunction!(host::gradients_host, m)?)?;
    m.add_function(wrap_pyfunction!(host::direction_host, m)?)?;
    m.add_function(wrap_pyfunction!(canny::canny_host, m)?)?;
    m.add_function(wrap_pyfunction!(canny::canny_workspace, m)?)?;
    m.add_function(wrap_pyfunction!(canny::canny_device, m)?)?;
    m.add_function(wrap_pyfunction!(host::outputs_on_gpu, m)?)?;
    m.add_function(wrap_pyfunction!(device::sobel_device, m)?)?;
    m.add_function(wrap_pyfunction!(filter::filter_host, m)?)?;
    m.add_function(wrap_pyfunction!(filter::filter_device, m)?)?;
    m.add_function(wrap_pyfunction!(filter::filter_workspace, m)?)?;
    m.add_function(wrap_pyfunction!(batch::plan_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch::remove_stale, m)?)?;
    m.add_function(wrap_pyfunction!(batch::check_canny, m)?)?;
    m.add_class::<batch::BatchWorker>()?;
    m.add_class::<batch::ReadAhead>()?;
    Ok(())
}

/// How many CUDA devices are visible (0 without a driver).
#[pyfunction]
fn device_count(py: Python<'_>) -> usize {
    py.detach(Engine::device_count)
}

/// Shows the CUDA driver only the devices `ordinals`, still called by those ordinals (`cuda_sobel_core::gpu::visible`):
/// `cuInit` starts every visible device, ~0.2 s each on an H200 host. Call before any CUDA call, before the program
/// starts threads; does nothing where `CUDA_VISIBLE_DEVICES` is set. Returns whether it narrowed them.
#[pyfunction]
fn show_only_devices(ordinals: Vec<usize>) -> bool {
    cuda_sobel_core::gpu::visible::show_only(&ordinals)
}
