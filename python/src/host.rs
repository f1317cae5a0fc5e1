//! Host arrays, as NumPy holds them: any strides, grey / grey + alpha / RGB / RGBA, RGB or BGR order, 8 or
//! 16 bits. The Python side passes every image as a 4-D view (N, H, W, C) of the caller's memory; cpu-rayon
//! reads it in place ([`cuda_sobel_core::cpu::rayon::HostImage`]), converting each row to grey inside the band that
//! needs it, on every core. The scalar reference and the GPU take packed RGB, converted on all cores first.

use numpy::ndarray::{ArrayView4, Axis, Ix4};
use numpy::{PyArrayDyn, PyArrayMethods, PyReadwriteArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use cuda_sobel_core::cpu::rayon::{run, HostImage, Out, PackedRgb, Plane, Samples};
use cuda_sobel_core::sobel::Filter;

use crate::{runtime, NativeEngine, NativeFilter};

/// A 4-D (N, H, W, C) uint8 or uint16 array, read-only, with its images as [`HostImage`]s.
pub(crate) enum Images<'py> {
    U8(numpy::PyReadonlyArrayDyn<'py, u8>),
    U16(numpy::PyReadonlyArrayDyn<'py, u16>),
}

impl<'py> Images<'py> {
    pub(crate) fn of(image: &Bound<'py, PyUntypedArray>) -> PyResult<Self> {
        let shape = image.shape();
        if shape.len() != 4 || !(1..=4).contains(&shape[3]) {
            return Err(PyValueError::new_err(format!(
                "image: shape {shape:?}, expected (N, H, W, C) with C in 1..=4"
            )));
        }
        if let Ok(a) = image.cast::<PyArrayDyn<u8>>() {
            return Ok(Images::U8(a.readonly()));
        }
        if let Ok(a) = image.cast::<PyArrayDyn<u16>>() {
            return Ok(Images::U16(a.readonly()));
        }
        Err(PyTypeError::new_err(format!("image: dtype {}, expected uint8 or uint16", image.dtype())))
    }

    /// The views the computation borrows (`Send`: they outlive no borrow of the arrays).
    pub(crate) fn views(&self) -> Views<'_> {
        let four = "checked by `of`";
        match self {
            Images::U8(a) => Views::U8(a.as_array().into_dimensionality::<Ix4>().expect(four)),
            Images::U16(a) => Views::U16(a.as_array().into_dimensionality::<Ix4>().expect(four)),
        }
    }
}

/// The images of an [`Images`], (N, H, W, C).
pub(crate) enum Views<'a> {
    U8(ArrayView4<'a, u8>),
    U16(ArrayView4<'a, u16>),
}

impl Views<'_> {
    pub(crate) fn dim(&self) -> (usize, usize, usize, usize) {
        match self {
            Views::U8(a) => a.dim(),
            Views::U16(a) => a.dim(),
        }
    }

    /// Image `i`, as cpu-rayon reads it.
    pub(crate) fn image(&self, i: usize, bgr: bool) -> HostImage<'_> {
        let samples = match self {
            Views::U8(a) => Samples::U8(a.index_axis(Axis(0), i)),
            Views::U16(a) => Samples::U16(a.index_axis(Axis(0), i)),
        };
        HostImage { samples, bgr }
    }
}

/// cpu-rayon on one image: packed RGB (C-contiguous, 3 channels, R first) through [`PackedRgb`], whose grey
/// row has its channel order as a constant (13 % faster at 6000² than the general layout's, measured on the
/// development machine); any other layout as it is.
fn run_on(image: &HostImage, filter: Filter, out: Out) {
    if let (Samples::U8(a), false) = (&image.samples, image.bgr) {
        let (h, w, c) = a.dim();
        if let (3, Some(data)) = (c, a.as_slice()) {
            return run(&PackedRgb::new(data, w, h), filter, out);
        }
    }
    run(image, filter, out)
}

/// `(H, W)` of the images and their count, checked against an output of shape `(N, H, W)`.
fn sizes(views: &Views, out: &[usize]) -> PyResult<(usize, usize, usize)> {
    let (n, h, w, _) = views.dim();
    if out != [n, h, w] {
        return Err(PyValueError::new_err(format!("shape mismatch: image {:?} and output {out:?}", views.dim())));
    }
    Ok((n, h, w))
}

/// Edges of the images (`image`: (N, H, W, C)) into `out` ((N, H, W) uint8, C-contiguous): "cpu-rayon" reads
/// them in place; "cpu-scalar" (the reference) and "gpu-strip" (this engine's GPU: one upload, one launch and one
/// download for the batch) take them as packed RGB.
#[pyfunction]
#[pyo3(signature = (engine, image, out, variant, filter, bgr))]
pub fn sobel_host(
    py: Python<'_>,
    engine: &NativeEngine,
    image: &Bound<'_, PyUntypedArray>,
    mut out: PyReadwriteArrayDyn<'_, u8>,
    variant: &str,
    filter: &NativeFilter,
    bgr: bool,
) -> PyResult<()> {
    let images = Images::of(image)?;
    let views = images.views();
    let (n, h, w) = sizes(&views, out.shape())?;
    let dst = out.as_slice_mut().map_err(|_| PyValueError::new_err("out must be C-contiguous"))?;
    let (filter, engine) = (filter.filter, &engine.engine);
    let px = h * w;
    if px * n == 0 {
        return Ok(());
    }
    py.detach(|| -> Result<(), String> {
        match variant {
            "cpu-rayon" => {
                for (i, edges) in dst.chunks_mut(px).enumerate() {
                    run_on(&views.image(i, bgr), filter, Out::Edges(edges));
                }
            }
            "cpu-scalar" => {
                for (i, edges) in dst.chunks_mut(px).enumerate() {
                    let rgb = packed(&views.image(i, bgr), w, h);
                    edges.copy_from_slice(cuda_sobel_core::cpu::scalar::sobel(&rgb, filter).as_raw());
                }
            }
            "gpu-strip" => {
                let rgb = packed_batch(&views, bgr);
                engine.sobel_batch(&rgb, w as u32, h as u32, n as u32, filter, dst).map_err(|e| e.to_string())?;
            }
            other => {
                return Err(format!(
                    "invalid variant '{other}': expected one of auto, cpu-rayon, cpu-scalar, gpu-strip"
                ))
            }
        }
        Ok(())
    })
    .map_err(|e| if e.starts_with("invalid variant") { PyValueError::new_err(e) } else { runtime(e) })
}

/// Every image as packed RGB, one after another (the GPU's upload), each converted on all cores.
fn packed_batch(views: &Views, bgr: bool) -> Vec<u8> {
    let (n, h, w, _) = views.dim();
    let mut rgb = Vec::with_capacity(3 * w * h * n);
    (0..n).for_each(|i| rgb.extend(views.image(i, bgr).to_packed_rgb()));
    rgb
}

/// `output` ("int16", "int32", "float32": Gx and Gy; "direction"; "direction4") of host images on the GPU:
/// packed on all cores, one upload, one launch and one download, into `out`: the output array's bytes (a uint8
/// view of a C-contiguous (2, N, H, W) array of the gradients' type, or (N, H, W)).
#[pyfunction]
#[pyo3(signature = (engine, image, out, filter, output, bgr))]
pub fn outputs_on_gpu(
    py: Python<'_>,
    engine: &NativeEngine,
    image: &Bound<'_, PyUntypedArray>,
    mut out: PyReadwriteArrayDyn<'_, u8>,
    filter: &NativeFilter,
    output: &str,
    bgr: bool,
) -> PyResult<()> {
    let output = crate::device::output_named(output)?;
    let images = Images::of(image)?;
    let views = images.views();
    let (n, h, w, _) = views.dim();
    if n * h * w == 0 {
        return Ok(());
    }
    let dst = out.as_slice_mut().map_err(|_| PyValueError::new_err("out must be C-contiguous"))?;
    if dst.len() != n * h * w * output.bytes_per_pixel() {
        return Err(PyValueError::new_err(format!(
            "out: {} bytes, expected the output's {}",
            dst.len(),
            n * h * w * output.bytes_per_pixel()
        )));
    }
    let (engine, filter) = (&engine.engine, filter.filter);
    py.detach(|| {
        let rgb = packed_batch(&views, bgr);
        engine.batch_on_gpu(&rgb, w as u32, h as u32, n as u32, (filter, output), dst)
    })
    .map_err(runtime)
}

/// One image as packed RGB (the reference's input), converted on all cores.
fn packed(image: &HostImage, w: usize, h: usize) -> image::RgbImage {
    image::RgbImage::from_raw(w as u32, h as u32, image.to_packed_rgb()).expect("width × height × 3 bytes")
}

/// A writable output plane of gradients: int16, int32 or float32, (N, H, W), C-contiguous.
enum PlaneArray<'py> {
    I16(PyReadwriteArrayDyn<'py, i16>),
    I32(PyReadwriteArrayDyn<'py, i32>),
    F32(PyReadwriteArrayDyn<'py, f32>),
}

impl<'py> PlaneArray<'py> {
    fn of(a: &Bound<'py, PyUntypedArray>, what: &str) -> PyResult<Self> {
        if let Ok(a) = a.cast::<PyArrayDyn<i16>>() {
            return Ok(PlaneArray::I16(a.readwrite()));
        }
        if let Ok(a) = a.cast::<PyArrayDyn<i32>>() {
            return Ok(PlaneArray::I32(a.readwrite()));
        }
        if let Ok(a) = a.cast::<PyArrayDyn<f32>>() {
            return Ok(PlaneArray::F32(a.readwrite()));
        }
        Err(PyTypeError::new_err(format!("{what}: dtype {}, expected int16, int32 or float32", a.dtype())))
    }

    /// Shape and the image planes, `px` values each.
    fn planes(&mut self, px: usize, what: &str) -> PyResult<(Vec<usize>, Vec<Plane<'_>>)> {
        let contiguous = || PyValueError::new_err(format!("{what} must be C-contiguous"));
        Ok(match self {
            PlaneArray::I16(a) => (
                a.shape().to_vec(),
                a.as_slice_mut().map_err(|_| contiguous())?.chunks_mut(px).map(Plane::I16).collect(),
            ),
            PlaneArray::I32(a) => (
                a.shape().to_vec(),
                a.as_slice_mut().map_err(|_| contiguous())?.chunks_mut(px).map(Plane::I32).collect(),
            ),
            PlaneArray::F32(a) => (
                a.shape().to_vec(),
                a.as_slice_mut().map_err(|_| contiguous())?.chunks_mut(px).map(Plane::F32).collect(),
            ),
        })
    }
}

/// Gx and Gy of the images (`image`: (N, H, W, C)) into `gx` and `gy` ((N, H, W), C-contiguous, each int16,
/// int32 or float32; the Python side checks that int16 holds the filter's gradients), cpu-rayon on every core.
#[pyfunction]
#[pyo3(signature = (image, gx, gy, filter, bgr))]
pub fn gradients_host(
    py: Python<'_>,
    image: &Bound<'_, PyUntypedArray>,
    gx: &Bound<'_, PyUntypedArray>,
    gy: &Bound<'_, PyUntypedArray>,
    filter: &NativeFilter,
    bgr: bool,
) -> PyResult<()> {
    let images = Images::of(image)?;
    let views = images.views();
    let (n, h, w, _) = views.dim();
    if n * h * w == 0 {
        return Ok(());
    }
    let (mut ax, mut ay) = (PlaneArray::of(gx, "gx")?, PlaneArray::of(gy, "gy")?);
    let ((sx, px), (sy, py_)) = (ax.planes(h * w, "gx")?, ay.planes(h * w, "gy")?);
    sizes(&views, &sx)?;
    sizes(&views, &sy)?;
    let filter: Filter = filter.filter;
    py.detach(|| {
        for (i, (x, y)) in px.into_iter().zip(py_).enumerate() {
            run_on(&views.image(i, bgr), filter, Out::Gradients(x, y));
        }
    });
    Ok(())
}

/// The direction of the gradient of each pixel of the images into `out` ((N, H, W), C-contiguous): float32
/// radians ([`cuda_sobel_core::sobel::direction`]), or with `out` uint8, OpenCV Canny's four directions
/// ([`cuda_sobel_core::sobel::direction4`]); cpu-rayon on every core.
#[pyfunction]
#[pyo3(signature = (image, out, filter, bgr))]
pub fn direction_host(
    py: Python<'_>,
    image: &Bound<'_, PyUntypedArray>,
    out: &Bound<'_, PyUntypedArray>,
    filter: &NativeFilter,
    bgr: bool,
) -> PyResult<()> {
    let images = Images::of(image)?;
    let views = images.views();
    sizes(&views, out.shape())?;
    let (n, h, w, _) = views.dim();
    let px = h * w;
    if n * px == 0 {
        return Ok(());
    }
    let filter = filter.filter;
    let contiguous = || PyValueError::new_err("out must be C-contiguous");
    if let Ok(a) = out.cast::<PyArrayDyn<f32>>() {
        let mut a = a.readwrite();
        let dst = a.as_slice_mut().map_err(|_| contiguous())?;
        py.detach(|| {
            dst.chunks_mut(px).enumerate().for_each(|(i, o)| run_on(&views.image(i, bgr), filter, Out::Direction(o)))
        });
    } else if let Ok(a) = out.cast::<PyArrayDyn<u8>>() {
        let mut a = a.readwrite();
        let dst = a.as_slice_mut().map_err(|_| contiguous())?;
        py.detach(|| {
            dst.chunks_mut(px).enumerate().for_each(|(i, o)| run_on(&views.image(i, bgr), filter, Out::Direction4(o)))
        });
    } else {
        return Err(PyTypeError::new_err(format!("out: dtype {}, expected float32 or uint8", out.dtype())));
    }
    Ok(())
}
