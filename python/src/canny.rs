//! `cuda_sobel.canny` on host arrays: OpenCV's Canny as the library defines it ([`cuda_sobel_core::canny`]), on
//! every core, straight from each image's grey rows (`Canny::edges_of`).

use numpy::{PyReadwriteArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::host::Images;
use crate::NativeFilter;

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
            edges.copy_from_slice(&canny.edges_of(&views.image(i, bgr), f));
        }
    });
    Ok(())
}
