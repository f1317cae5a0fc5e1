//! GPU arrays another library owns (PyTorch, CuPy): raw device pointers and the caller's stream, computed by
//! gpu-strip in place — no copy, no synchronisation.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use cuda_sobel::engine::RawImages;

use crate::{runtime, NativeEngine, NativeFilter};

/// gpu-strip on device memory another library owns: `images` packed RGB images at `rgb` into `out`,
/// launched on `stream` (a `CUstream` handle, 0 for the default stream) without any copy or wait.
#[pyfunction]
#[pyo3(signature = (engine, rgb, out, width, height, images, stream, filter))]
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
) -> PyResult<()> {
    if rgb == 0 || out == 0 {
        return Err(PyValueError::new_err("null device pointer"));
    }
    let a = RawImages { rgb, out, width, height, images, stream };
    let (engine, filter) = (&engine.engine, filter.filter);
    // SAFETY: the Python side passes the data pointers of a CUDA array on this engine's device, of the
    // shapes it checked ((images, height, width, 3) and (images, height, width) uint8, C-contiguous),
    // and that device's current stream of the array's library; it keeps both arrays alive until the
    // call returns, and the launch is ordered before any later work on that stream.
    py.detach(|| unsafe { engine.sobel_on_device(a, filter) }).map_err(runtime)
}
