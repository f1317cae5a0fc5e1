//! `cuda_sobel.canny`: OpenCV's Canny as the library defines it ([`cuda_sobel_core::canny`]) — on host arrays on every
//! core, straight from each image's grey rows (`Canny::edges_of`); on GPU arrays another library owns, in place on
//! the caller's stream (gpu-strip's gradients, then `cuda/canny.cu`).

use numpy::{PyReadwriteArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use cuda_sobel_core::engine::CannyLaunches;

use crate::host::Images;
use crate::{runtime, NativeEngine, NativeFilter};

/// Canny edges (0 or 255) of the images (`image`: (N, H, W, C)) into `out` ((N, H, W) uint8, C-contiguous), with the
/// filter's aperture (`ksize` 3, 5 or 7), norm, grey and border.
#[pyfunction]
#[pyo3(signature = (image, out, filter, low, high, bgr))]
pub fn canny_host(
    py: Python<'_>,
    image: &Bound<'_, PyUntypedArray>,
    mut out: PyReadwriteArrayDyn<'_, u8>,
    filter: &NativeFilter,
    low: f64,
    high: f64,
    bgr: bool,
) -> PyResult<()> {
    let f = filter.filter;
    let canny = crate::batch::canny_of(f, low, high)?;
    let images = Images::of(image)?;
    let views = images.views();
    let (n, h, w, _) = views.dim();
    if out.shape() != [n, h, w] {
        return Err(PyValueError::new_err(format!("out: shape {:?}, expected {:?}", out.shape(), [n, h, w])));
    }
    let dst = out.as_slice_mut().map_err(|_| PyValueError::new_err("out must be C-contiguous"))?;
    let px = h * w;
    if n * px == 0 {
        return Ok(());
    }
    py.detach(|| {
        for (i, edges) in dst.chunks_mut(px).enumerate() {
            canny.edges_of_into(&views.image(i, bgr), f, edges);
        }
    });
    Ok(())
}

/// The device workspace (bytes) that `canny_device` needs for images of `width × height`.
#[pyfunction]
#[pyo3(signature = (engine, filter, width, height))]
pub fn canny_workspace(engine: &NativeEngine, filter: &NativeFilter, width: u32, height: u32) -> PyResult<usize> {
    // Its size depends on the aperture and norm alone, not on the thresholds.
    let canny = crate::batch::canny_of(filter.filter, 0.0, 0.0)?;
    Ok(engine.engine.canny_workspace_bytes(filter.filter, &canny, width, height))
}

/// Canny's edges of caller-owned device memory: `images` packed RGB images at `rgb` into `out` ((images, height,
/// width) uint8), launched on `stream` (a `CUstream`, 0 for the default stream) without any copy, allocation or wait;
/// `workspace`: (pointer, bytes) of device memory of at least `canny_workspace`'s size. `part`: 0 every launch; 1 the
/// first image's up to its edges (`out` unused, may be 0); 2 the rest, after a call with 1 on the same stream and
/// workspace — so that the caller can allocate `out` while the first launches run.
#[pyfunction]
#[pyo3(signature = (engine, rgb, out, width, height, images, stream, filter, low, high, workspace, part=0))]
#[allow(clippy::too_many_arguments)] // the raw description of three device arrays, passed through one by one
pub fn canny_device(
    py: Python<'_>,
    engine: &NativeEngine,
    rgb: u64,
    out: u64,
    width: u32,
    height: u32,
    images: u32,
    stream: u64,
    filter: &NativeFilter,
    low: f64,
    high: f64,
    workspace: (u64, usize),
    part: u8,
) -> PyResult<()> {
    let launches = match part {
        0 => CannyLaunches::All,
        1 => CannyLaunches::FirstUntilEdges,
        2 => CannyLaunches::AfterFirstEdges,
        _ => return Err(PyValueError::new_err(format!("part {part}: 0, 1 or 2"))),
    };
    if rgb == 0 || (out == 0 && launches != CannyLaunches::FirstUntilEdges) || workspace.0 == 0 {
        return Err(PyValueError::new_err("null device pointer"));
    }
    let canny = crate::batch::canny_of(filter.filter, low, high)?;
    let a = cuda_sobel_core::engine::RawImages { rgb, out, width, height, images, stream };
    let (engine, f) = (&engine.engine, filter.filter);
    // SAFETY: the Python side passes the data pointers of CUDA arrays on this engine's device, of the shapes it
    // checked ((images, height, width, 3) uint8 in, (images, height, width) uint8 out, C-contiguous, and a uint8
    // workspace of the size it says from the library's allocator, 16-byte aligned), and that device's current stream
    // of the arrays' library; it keeps them alive until the call returns, and the launches are ordered before any
    // later work on that stream. With part 2 it holds the workspace for this call alone since its call with part 1
    // (`_arrays.workspace`'s lock).
    py.detach(|| unsafe { engine.canny_on_device(a, workspace, (f, &canny), launches) }).map_err(runtime)
}
