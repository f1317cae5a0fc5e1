//! GPU arrays another library owns (PyTorch, CuPy): raw device pointers and the caller's stream, computed by
//! gpu-strip in place — no copy, no synchronisation — for every output: the edges, Gx and Gy, the direction.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use cuda_sobel_core::engine::RawImages;
use cuda_sobel_core::sobel::{Number, Output};

use crate::{runtime, NativeEngine, NativeFilter};

/// The output a name stands for: "edges", "int16", "int32", "float32" (Gx and Gy, two planes), "direction",
/// "direction4".
pub fn output_named(name: &str) -> PyResult<Output> {
    Ok(match name {
        "edges" => Output::Edges,
        "int16" => Output::Gradients(Number::I16),
        "int32" => Output::Gradients(Number::I32),
        "float32" => Output::Gradients(Number::F32),
        "direction" => Output::Direction,
        "direction4" => Output::Direction4,
        other => return Err(PyValueError::new_err(format!("invalid output '{other}'"))),
    })
}

/// gpu-strip on device memory another library owns: `images` packed RGB images at `rgb`, their `output` at
/// `out` (gradients: Gx's plane for the whole batch, then Gy's), launched on `stream` (a `CUstream` handle, 0
/// for the default stream) without any copy or wait.
#[pyfunction]
#[pyo3(signature = (engine, rgb, out, width, height, images, stream, filter, output="edges"))]
#[allow(clippy::too_many_arguments)] // the raw description of two device arrays, passed through one by one
pub fn sobel_device(
    py: Python<'_>,
    engine: &NativeEngine,
    rgb: u64,
    out: u64,
    width: u32,
    height: u32,
    images: u32,
    stream: u64,
    filter: &NativeFilter,
    output: &str,
) -> PyResult<()> {
    if rgb == 0 || out == 0 {
        return Err(PyValueError::new_err("null device pointer"));
    }
    let output = output_named(output)?;
    let a = RawImages { rgb, out, width, height, images, stream };
    let (engine, filter) = (&engine.engine, filter.filter);
    // SAFETY: the Python side passes the data pointers of CUDA arrays on this engine's device, of the shapes it
    // checked ((images, height, width, 3) uint8 and the output's: (images, height, width) of its type, or
    // (2, images, height, width) for gradients, C-contiguous), and that device's current stream of the arrays'
    // library; it keeps both arrays alive until the call returns, and the launch is ordered before any later work
    // on that stream.
    py.detach(|| unsafe { engine.outputs_on_device(a, filter, output) }).map_err(runtime)
}
