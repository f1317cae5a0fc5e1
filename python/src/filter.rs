//! `cuda_sobel.filter`: the `filter` command's convolutions (box blurs, Gaussians, the Scharr family, Sobel, an
//! integer matrix) of the grey image or of each channel — host arrays converted as the command line converts a
//! decoded image, then filtered on the CPU or the GPU; GPU arrays zero-copy on the caller's stream.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use cuda_sobel_core::conv::{ConvKernel, Planes};
use cuda_sobel_core::engine::filter::{refusal, RawPlanes};
use cuda_sobel_core::sobel::Border;
use cuda_sobel_core::variant::Variant;
use numpy::{PyReadwriteArrayDyn, PyUntypedArray, PyUntypedArrayMethods};

use crate::host::Images;
use crate::{pick, runtime, NativeEngine};

/// A kernel, its border and the strategy asked for, checked once (the Python side keeps one per combination of its
/// arguments).
#[pyclass(module = "cuda_sobel._native", frozen)]
pub struct NativeKernel {
    kernel: ConvKernel,
    border: Border,
    /// `None`: the default (cpu-rayon for host arrays, the studies' fastest GPU strategy on a GPU).
    strategy: Option<Variant>,
}

#[pymethods]
impl NativeKernel {
    /// `spec`: `box:D`, `gaussian:D`, `scharr:D`, `sobel:K` or a matrix file's path; or `text`, a matrix file's
    /// contents (named `name`). `variant`: `auto` or a strategy's name.
    #[new]
    #[pyo3(signature = (spec, text, border, variant))]
    fn new(spec: &str, text: Option<&str>, border: Option<&str>, variant: &str) -> PyResult<Self> {
        let kernel = match text {
            Some(text) => ConvKernel::from_text(spec, text),
            None => ConvKernel::parse(spec),
        }
        .map_err(|e| PyValueError::new_err(format!("kernel {e}")))?;
        let border = border.map_or(Ok(Border::default()), |b| pick("border", b, &Border::ALL, Border::name))?;
        let strategy = match variant {
            "auto" => None,
            v => Some(pick("variant", v, &Variant::KERNELS, Variant::name)?),
        };
        if let Some(why) = strategy.and_then(|s| refusal(&kernel, s)) {
            return Err(PyValueError::new_err(why));
        }
        Ok(NativeKernel { kernel, border, strategy })
    }

    /// The kernel's side (`2·radius + 1`).
    #[getter]
    fn side(&self) -> usize {
        self.kernel.side()
    }

    /// The strategy a GPU runs: the one asked for, or the studies' fastest for the kernel.
    #[getter]
    fn gpu_variant(&self) -> &'static str {
        self.strategy.unwrap_or_else(|| Variant::auto_for(&self.kernel)).name()
    }
}

/// The filter of host images (`image`: (N, H, W, C)) into `out` ((N, H, W) uint8 for the grey image, (N, H, W, 3)
/// with `rgb`; C-contiguous). Each image becomes planes as the command line's decoded image does (its grey, or R, G
/// and B apart); all the batch's planes are filtered together: on the CPU by the strategy asked for (cpu-rayon by
/// default), or with `on_gpu` on the engine's GPU (one upload and one download for up to 65 535 planes).
#[pyfunction]
#[pyo3(signature = (engine, kernel, image, out, rgb, bgr, on_gpu))]
#[allow(clippy::too_many_arguments)] // the call's arrays and switches, passed through one by one
pub fn filter_host(
    py: Python<'_>,
    engine: &NativeEngine,
    kernel: &NativeKernel,
    image: &Bound<'_, PyUntypedArray>,
    mut out: PyReadwriteArrayDyn<'_, u8>,
    rgb: bool,
    bgr: bool,
    on_gpu: bool,
) -> PyResult<()> {
    let images = Images::of(image)?;
    let views = images.views();
    let (n, h, w, _) = views.dim();
    let channels = if rgb { 3 } else { 1 };
    let want = if rgb { vec![n, h, w, 3] } else { vec![n, h, w] };
    if out.shape() != want.as_slice() {
        return Err(PyValueError::new_err(format!("out: shape {:?}, expected {want:?}", out.shape())));
    }
    let dst = out.as_slice_mut().map_err(|_| PyValueError::new_err("out must be C-contiguous"))?;
    if n * h * w == 0 {
        return Ok(());
    }
    let strategy = match kernel.strategy {
        Some(s) => s,
        None if on_gpu => Variant::auto_for(&kernel.kernel),
        None => Variant::CpuRayon,
    };
    if strategy.is_gpu() && !on_gpu {
        return Err(PyValueError::new_err(format!("variant '{}' runs on a GPU: pass device='cuda'", strategy.name())));
    }
    let (engine, k, border) = (&engine.engine, &kernel.kernel, kernel.border);
    py.detach(|| -> Result<(), String> {
        // Images a pass: every plane of the batch at once, at most 65 535 planes a GPU launch.
        let per_pass = if strategy.is_gpu() { 65_535 / channels } else { n };
        for first in (0..n).step_by(per_pass) {
            let last = n.min(first + per_pass);
            let mut planes =
                Planes { width: w, height: h, planes: 0, data: Vec::with_capacity((last - first) * h * w * channels) };
            for i in first..last {
                let rgb_image = image::RgbImage::from_raw(w as u32, h as u32, views.image(i, bgr).to_packed_rgb())
                    .expect("width × height × 3 bytes");
                let p = if rgb { Planes::channels(&rgb_image) } else { Planes::grey(&rgb_image) };
                planes.data.extend_from_slice(&p.data);
                planes.planes += p.planes;
            }
            let done = engine.filter_planes_by(&planes, k, strategy, border).map_err(|e| e.to_string())?;
            let px = h * w * channels;
            for (i, image_planes) in done.data.chunks(px).enumerate() {
                let one = Planes { width: w, height: h, planes: channels, data: image_planes.to_vec() };
                dst[(first + i) * px..(first + i + 1) * px].copy_from_slice(&one.interleaved());
            }
        }
        Ok(())
    })
    .map_err(runtime)
}

/// The device workspace (bytes) that `filter_device` needs for these planes: 0 for most calls.
#[pyfunction]
#[pyo3(signature = (engine, kernel, width, height, planes, from_rgb))]
pub fn filter_workspace(
    py: Python<'_>,
    engine: &NativeEngine,
    kernel: &NativeKernel,
    width: u32,
    height: u32,
    planes: u32,
    from_rgb: bool,
) -> PyResult<usize> {
    let strategy = gpu_strategy(kernel)?;
    py.detach(|| engine.engine.filter_workspace(&kernel.kernel, strategy, (width, height, planes, from_rgb)))
        .map_err(runtime)
}

/// The GPU strategy a device array's call runs, or the `ValueError` of a CPU one.
fn gpu_strategy(kernel: &NativeKernel) -> PyResult<Variant> {
    let strategy = kernel.strategy.unwrap_or_else(|| Variant::auto_for(&kernel.kernel));
    if !strategy.is_gpu() {
        return Err(PyValueError::new_err(format!(
            "variant '{}' runs on the CPU: pass a host array (this one is on a GPU)",
            strategy.name()
        )));
    }
    Ok(strategy)
}

/// The filter of caller-owned device planes (or, with `from_rgb`, of the grey of packed RGB images) into `out`
/// (`planes` planes of `width × height` bytes), launched on `stream` without any copy, allocation or wait;
/// `workspace`: (pointer, bytes) of device memory of at least `filter_workspace`'s size.
#[pyfunction]
#[pyo3(signature = (engine, kernel, input, out, width, height, planes, from_rgb, workspace, stream))]
#[allow(clippy::too_many_arguments)] // the raw description of two device arrays, passed through one by one
pub fn filter_device(
    py: Python<'_>,
    engine: &NativeEngine,
    kernel: &NativeKernel,
    input: u64,
    out: u64,
    width: u32,
    height: u32,
    planes: u32,
    from_rgb: bool,
    workspace: (u64, usize),
    stream: u64,
) -> PyResult<()> {
    if input == 0 || out == 0 {
        return Err(PyValueError::new_err("null device pointer"));
    }
    let strategy = gpu_strategy(kernel)?;
    let (workspace, workspace_bytes) = workspace;
    let a = RawPlanes { input, out, width, height, planes, from_rgb, workspace, workspace_bytes, stream };
    let (engine, k, border) = (&engine.engine, &kernel.kernel, kernel.border);
    // SAFETY: the Python side passes the data pointers of CUDA arrays on this engine's device, of the shapes it
    // checked (`planes` C-contiguous planes of height × width uint8, or as many packed RGB images, and the output's
    // planes, and a workspace of the size it says), and that device's current stream of the arrays' library; it keeps
    // the arrays alive until the call returns, and the launches are ordered before any later work on that stream.
    py.detach(|| unsafe { engine.filter_on_device(a, k, strategy, border) }).map_err(runtime)
}
