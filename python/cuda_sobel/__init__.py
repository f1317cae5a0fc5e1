"""Sobel edges of images in NumPy, PyTorch and CuPy arrays, files and PIL images — byte for byte the bytes of
the ``cuda_sobel`` command line's scalar reference (``docs/semantics.md``): grey, then the Sobel (ksize 1, 3,
5 or 7) or Scharr gradients in exact integers, then ``min(255, round(sqrt(Gx² + Gy²)))`` (or L1).

- A path, a PIL image, anything ``np.asarray`` reads (grey, grey + alpha, RGB, RGBA, BGR with ``bgr=True``,
  uint8 or uint16, any strides): computed by cpu-rayon on all cores, reading the caller's memory as it is; or
  with ``device="cuda"`` on the GPU (gpu-strip, through pinned buffers). A NumPy array in, a NumPy array out.
- A PyTorch CUDA tensor or a CuPy array: the same library's array out, on the same device, computed by
  gpu-strip straight from the array's memory, launched on the library's *current stream*: no copy, no
  synchronisation, so it composes inside a training or video pipeline.
- A batch ``N×H×W×C`` is one call (one kernel launch on the GPU); a list of images (of any sizes) gives a list.

:func:`sobel` gives the 8-bit edges; :func:`gradients` Gx and Gy (int16, int32 or float32); :func:`direction`
the gradient's angle or OpenCV Canny's four directions; :func:`filter` the ``filter`` command's convolutions (box,
Gaussian, Scharr, Sobel, a matrix); :func:`canny` OpenCV's Canny edges; :func:`read` the RGB image the command line
decodes.

Errors are Python exceptions with the command line's words: ``TypeError`` for a dtype or an array type it
does not take, ``ValueError`` for a shape, a name, or a tensor on another device, ``FileNotFoundError`` /
``OSError`` / ``ValueError`` for a file that cannot be read or decoded.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Any, Optional, Tuple, Union

# NumPy is imported by the functions that use it, not here (nor by this package's other modules): `python -m
# cuda_sobel.dask` starts opening its GPUs (a context, nvJPEG) once this package is imported, and NumPy's import
# (0.22 s on an H200 host) then runs beside that instead of before it.
if TYPE_CHECKING:
    import numpy as np

from . import _arrays as _a
from . import _native
from . import _torch_ops as _ops
from ._canny import canny
from ._filter import VARIANTS as FILTER_VARIANTS
from ._filter import filter

__all__ = [
    "Engine", "sobel", "gradients", "direction", "filter", "canny", "read", "device_count",
    "OPERATORS", "KSIZES", "BORDERS", "COMPATS", "GREYS", "VARIANTS", "FILTER_VARIANTS", "FORMATS",
]
__version__: str = _native.__version__

OPERATORS: Tuple[str, ...] = tuple(_native.OPERATORS)
KSIZES: Tuple[int, ...] = tuple(_native.KSIZES)
BORDERS: Tuple[str, ...] = tuple(_native.BORDERS)
COMPATS: Tuple[str, ...] = tuple(_native.COMPATS)
GREYS: Tuple[str, ...] = tuple(_native.GREYS)
FORMATS: Tuple[str, ...] = tuple(_native.FORMATS)
VARIANTS: Tuple[str, ...] = ("auto", "cpu-rayon", "cpu-scalar", "gpu-strip")


def device_count() -> int:
    """How many CUDA devices are visible (0 without an NVIDIA driver)."""
    return _native.device_count()


def read(path: Any, *, keep_orientation: bool = False) -> np.ndarray:
    """The RGB image (H×W×3 uint8) the command line decodes from ``path``: any format it reads (PNG, JPEG, BMP,
    GIF, TIFF, WebP, PNM), alpha dropped, grey expanded, 16 bits rounded, the EXIF orientation applied (unless
    ``keep_orientation``), the first frame of an animation. What the command line says about the file (an
    orientation applied, frames dropped) comes as a warning."""
    import os

    rgb, notes = _native.read(os.fspath(path), keep_orientation)
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return rgb


# ---------------------------------------------------------------------------------------------------
# Engines


class Engine:
    """A device with its compiled kernels, kept for repeated calls (module-level functions use one default
    engine per device, made on first use).

    ``device``: ``"cpu"``, ``"cuda"`` / ``"cuda:N"`` / ``N``. Opening a CUDA device that cannot be used raises
    ``RuntimeError`` saying why.
    """

    def __init__(self, device: Union[str, int] = "cpu") -> None:
        parsed = _a.parse_device(device)
        self._ordinal: Optional[int] = None if parsed in (None, "cpu") else int(parsed)  # type: ignore[arg-type]
        self._native = _native.NativeEngine(self._ordinal)

    @property
    def device(self) -> str:
        """``"cpu"`` or ``"cuda:N"``."""
        return "cpu" if self._ordinal is None else f"cuda:{self._ordinal}"

    def __repr__(self) -> str:
        return f"cuda_sobel.Engine({self.device!r}: {self._native.describe()})"

    def sobel(self, image: Any, *, operator: str = "sobel", ksize: int = 3, border: Optional[str] = None,
              compat: str = "exact", grey: str = "percent", norm: str = "l2", variant: str = "auto",
              out: Any = None, bgr: bool = False) -> Any:
        """Edge bytes (uint8) of ``image`` on this engine's device; see :func:`cuda_sobel.sobel`."""
        f = _a.native_filter(operator, ksize, border, compat, grey, norm)
        return _each(image, out, lambda x, o: _sobel(self, x, f, variant, o, bgr))

    def gradients(self, image: Any, *, operator: str = "sobel", ksize: int = 3, border: Optional[str] = None,
                  compat: str = "exact", grey: str = "percent", dtype: Any = None, bgr: bool = False) -> Any:
        """Gx and Gy; see :func:`cuda_sobel.gradients`."""
        f = _a.native_filter(operator, ksize, border, compat, grey, "l2")
        return _each(image, None, lambda x, _: _gradients(x, f, dtype, ksize, bgr, self.device))

    def direction(self, image: Any, *, operator: str = "sobel", ksize: int = 3, border: Optional[str] = None,
                  compat: str = "exact", grey: str = "percent", quantize: Optional[str] = None,
                  bgr: bool = False) -> Any:
        """The gradient's direction; see :func:`cuda_sobel.direction`."""
        f = _a.native_filter(operator, ksize, border, compat, grey, "l2")
        return _each(image, None, lambda x, _: _direction(x, f, quantize, bgr, self.device))

    def filter(self, image: Any, kernel: Any, **options: Any) -> Any:
        """The ``filter`` command's convolution on this engine's device; see :func:`cuda_sobel.filter`."""
        return filter(image, kernel, device=self.device, **options)


_engines: dict = {}
_engines_lock = threading.Lock()


def _engine(ordinal: Optional[int]) -> Engine:
    key = "cpu" if ordinal is None else ordinal
    with _engines_lock:
        if key not in _engines:
            _engines[key] = Engine("cpu" if ordinal is None else ordinal)
        return _engines[key]


def _each(image: Any, out: Any, one: Any) -> Any:
    """``one(image, out)``, or for a list or tuple of images a list of results, one for each."""
    if _a.is_image_list(image):
        if out is not None:
            raise ValueError("out: not with a list of images (each may have its own size)")
        return [one(x, None) for x in image]
    return one(image, out)


# ---------------------------------------------------------------------------------------------------
# The calls


def sobel(
    image: Any,
    *,
    operator: str = "sobel",
    ksize: int = 3,
    border: Optional[str] = None,
    compat: str = "exact",
    grey: str = "percent",
    norm: str = "l2",
    variant: str = "auto",
    device: Union[str, int, None] = None,
    out: Any = None,
    bgr: bool = False,
) -> Any:
    """Sobel edges of ``image``, as uint8, shaped like the image without its channel axis.

    image
        H×W (grey), H×W×C (C = 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA; alpha dropped), or a batch N×H×W×C, uint8
        or uint16 (rounded as the command line rounds 16-bit files), any strides: a NumPy array, anything
        ``np.asarray`` reads (a PIL image, a memoryview), a path (decoded as the command line decodes it), a
        PyTorch tensor (CPU or CUDA) or a CuPy array — or a list of these, of any sizes (a list back).
    operator, ksize
        ``"sobel"`` with ``ksize`` 1, 3, 5 or 7 (OpenCV's kernels), or ``"scharr"`` (3 only).
    border
        ``"replicate"`` (the default), ``"zero"`` or ``"reflect101"`` (OpenCV's default); with
        ``compat="report"`` only ``"zero"``, its default.
    compat
        ``"exact"`` (integers, rounded, saturated) or ``"report"`` (the original C program's arithmetic, 3×3).
    grey
        ``"percent"``, ``(30·R + 59·G + 11·B + 50) / 100``, or ``"bt601"``, OpenCV's ``cvtColor``.
    norm
        ``"l2"``, ``min(255, round(sqrt(Gx² + Gy²)))``, or ``"l1"``, ``min(255, |Gx| + |Gy|)``.
    variant
        ``"auto"`` (cpu-rayon for host arrays, gpu-strip for GPU arrays or ``device="cuda"``), or one of
        ``"cpu-rayon"``, ``"cpu-scalar"`` (the reference), ``"gpu-strip"``.
    device
        None: where the image is. ``"cuda"``/``"cuda:N"`` with a host image: computed on that GPU (copies
        through pinned buffers). A GPU array must already be on the device named.
    out
        An array of the result's shape, dtype uint8, same library and device, written in place and returned.
    bgr
        The channels are in OpenCV's order (B, G, R).

    GPU arrays are computed on the array library's current stream, without synchronising: the result is
    ready for any later work on that stream. Inside ``torch.compile`` a tensor's call is the custom operator
    ``cuda_sobel::sobel``, which ``fullgraph=True`` keeps in the graph (without ``out``, ``device`` or ``variant``;
    the operators are registered when the package first meets torch: import torch first, or make one call).
    """
    if _ops.compiling(image) and out is None and device is None and variant == "auto":
        return _a._TORCH[0].ops.cuda_sobel.sobel(image, operator, ksize, border, compat, grey, norm, bgr)
    fast = _gpu_fast_path(image, operator, ksize, border, compat, grey, norm, variant, device, out, bgr)
    if fast is not None:
        return fast
    f = _a.native_filter(operator, ksize, border, compat, grey, norm)
    parsed = _a.parse_device(device)

    def one(x: Any, o: Any) -> Any:
        lib = _a.library(x) if not (_a.is_path(x) or _a.is_pil(x)) else "numpy"
        where = _a.where(x, lib) if lib != "numpy" else None
        if where is None:  # host memory: NumPy, a path, a PIL image, a PyTorch CPU tensor
            ordinal = None if parsed in (None, "cpu") else parsed
        else:
            if parsed == "cpu" or (parsed is not None and parsed != where):
                name = "cpu" if parsed == "cpu" else f"cuda:{parsed}"
                raise ValueError(f"image: on cuda:{where}, but device='{name}'; move it first, or leave device out")
            ordinal = where
        return _sobel(_engine(ordinal), x, f, variant, o, bgr)  # type: ignore[arg-type]

    return _each(image, out, one)


def _launch_gpu(kind: Any, image: Any, out: Any, f: Any, output: str) -> None:
    """gpu-strip from a packed RGB GPU array (``kind``: :func:`cuda_sobel._arrays.gpu_uint8`'s) into ``out`` (an
    array of the output's layout), on its library's current stream of the image's device."""
    shape = image.shape[:-1]
    ordinal = kind.ordinal(image)
    engine = _engines.get(ordinal) or _engine(ordinal)
    h, w = shape[-2], shape[-1]
    images = shape[0] if len(shape) == 3 else 1
    if h * w * images:
        _native.sobel_device(engine._native, kind.pointer(image), kind.pointer(out), w, h, images,
                             kind.stream(ordinal), f, output)


def _gpu_fast_path(image: Any, operator: str, ksize: int, border: Optional[str], compat: str, grey: str, norm: str,
                   variant: str, device: Any, out: Any, bgr: bool) -> Any:
    """:func:`sobel` of a packed RGB PyTorch or CuPy GPU array in as few Python steps as possible: at 2048×1024 the
    kernel takes 8 µs, so each µs of Python shows. None when the call needs the general path
    (which also checks and explains everything this skips)."""
    kind = _a.packed_rgb_gpu(image, bgr, device)
    if kind is None or variant not in ("auto", "gpu-strip"):
        return None
    f = _a.native_filter(operator, ksize, border, compat, grey, norm)
    shape = image.shape[:-1]
    if out is None:
        out = kind.new(image, shape)
    elif not kind.takes_out(out, image, shape):
        return None
    _launch_gpu(kind, image, out, f, "edges")
    return out


def _gpu_gradients_fast(image: Any, f: Any, dtype: Any, ksize: int, bgr: bool, device: Any) -> Any:
    """:func:`gradients` of a packed RGB GPU array in as few Python steps as :func:`_gpu_fast_path` takes for the
    edges (the general path's checks cost more than the kernel at 2048×1024); None otherwise."""
    kind = _a.packed_rgb_gpu(image, bgr, device)
    if kind is None:
        return None
    name = _gradient_dtype(f, dtype, ksize)
    # PyTorch's unbind: its cheapest split (1.2 µs a call less than out[0], out[1]; scripts/python_bench.py).
    out = kind.new(image, (2,) + tuple(image.shape[:-1]), name)
    _launch_gpu(kind, image, out, f, name)
    return kind.planes(out)


def _host(image: Any, lib: str) -> np.ndarray:
    """A host image as NumPy (a PyTorch CPU tensor shares its memory)."""
    return image.detach().numpy() if lib == "torch" else image


def _sobel(engine: Engine, image: Any, f: Any, variant: str, out: Any, bgr: bool) -> Any:
    import numpy as np
    if variant not in VARIANTS:
        raise ValueError(f"invalid variant '{variant}': expected one of {', '.join(VARIANTS)}")
    if _a.is_path(image) or _a.is_pil(image):
        image = _a.to_host(image)
    lib = _a.library(image)
    if lib == "numpy":
        image = _a.to_host(image)
    shape = _a.check(image, lib)
    where = _a.where(image, lib)
    if where is not None and where != engine._ordinal:
        raise ValueError(f"image: on cuda:{where}, but the engine is on {engine.device}")
    rs = _a.result_shape(shape)
    if out is not None:
        _a.check_out(out, lib, rs, where, ("uint8",))

    if where is None:  # host memory
        host = _host(image, lib)
        if variant == "auto":
            variant = "cpu-rayon" if engine._ordinal is None else "gpu-strip"
        if variant == "gpu-strip" and engine._ordinal is None:
            raise ValueError("variant 'gpu-strip' needs a GPU: pass device='cuda'")
        target = out.numpy() if (out is not None and lib == "torch") else out
        edges = target if (target is not None and target.flags.c_contiguous) else np.empty(rs, np.uint8)
        _native.sobel_host(engine._native, _a.four_d(host), edges.reshape(_a.batch_shape(shape)), variant, f, bgr)
        if target is not None and edges is not target:
            target[...] = edges
        if out is not None:
            return out
        return _a.torch().from_numpy(edges) if lib == "torch" else edges

    if variant not in ("auto", "gpu-strip"):
        raise ValueError(f"variant '{variant}' runs on the CPU: pass a host array (this one is on cuda:{where})")
    n, h, w = _a.batch_shape(shape)
    with _a.on_device(image, lib):
        rgb = _a.packed_rgb_device(image, lib, bgr)
        if out is not None and _a.contiguous(out, lib):
            edges = out
        else:
            edges = _a.empty_like_result(lib, rs, "uint8", image.device)
        if h * w * n > 0:
            rgb_ptr, out_ptr, stream = _a.device_pointers(rgb, edges, lib, where)
            _native.sobel_device(engine._native, rgb_ptr, out_ptr, w, h, n, stream, f, "edges")
        if out is not None and edges is not out:
            out[...] = edges
            return out
    return edges


def _dtype_name(dtype: Any) -> Optional[str]:
    import numpy as np
    if dtype is None:
        return None
    name = str(getattr(dtype, "__name__", dtype)).replace("torch.", "").replace("numpy.", "")
    name = str(np.dtype(name)) if name in ("int16", "int32", "float32", "i2", "i4", "f4") else name
    if name not in ("int16", "int32", "float32"):
        raise TypeError(f"dtype {dtype}: expected int16, int32 or float32")
    return name


def gradients(image: Any, *, operator: str = "sobel", ksize: int = 3, border: Optional[str] = None,
              compat: str = "exact", grey: str = "percent", dtype: Any = None, device: Union[str, int, None] = None,
              bgr: bool = False) -> Any:
    """Gx and Gy, shaped like the edges (for Canny, HOG, orientation, optical flow).

    The same images, names and arithmetic as :func:`sobel` (``compat="report"`` gives the report's unwrapped
    gradients; it wrapped them only when storing bytes). ``dtype``: ``"int16"``, ``"int32"`` or ``"float32"``
    (exact: |G| < 2^24); by default int16 where it holds the kernel's gradients (|G| ≤ 12 240 up to ksize 5)
    and int32 for ksize 7 (|G| reaches 163 200). Host images are computed on all cores, or with
    ``device="cuda"`` on the GPU; a GPU array on its GPU, zero-copy, on the array library's current stream, like
    :func:`sobel`.
    """
    if _ops.compiling(image) and device is None:
        name = _dtype_name(dtype)
        return _a._TORCH[0].ops.cuda_sobel.gradients(image, operator, ksize, border, compat, grey, name, bgr).unbind(0)
    f = _a.native_filter(operator, ksize, border, compat, grey, "l2")
    fast = _gpu_gradients_fast(image, f, dtype, ksize, bgr, device)
    if fast is not None:
        return fast
    return _each(image, None, lambda x, _: _gradients(x, f, dtype, ksize, bgr, device))


def direction(image: Any, *, operator: str = "sobel", ksize: int = 3, border: Optional[str] = None,
              compat: str = "exact", grey: str = "percent", quantize: Optional[str] = None,
              device: Union[str, int, None] = None, bgr: bool = False) -> Any:
    """The direction of the gradient of each pixel, shaped like the edges.

    By default ``atan2(Gy, Gx)`` as float32 radians in (−π, π] (y grows down the rows; 0 where there is no
    gradient), the same bits on every path, CPU or GPU (one fixed sequence of float32 operations, within 3e-7
    rad of the true angle). ``quantize="canny"``: uint8 codes of OpenCV Canny's four directions, in its integer
    arithmetic — 0 horizontal gradient (a vertical edge), 1 the 45° diagonal (Gx and Gy of one sign), 2
    vertical, 3 the 135° diagonal. Where it is computed: as :func:`gradients`.
    """
    if _ops.compiling(image) and device is None:
        return _a._TORCH[0].ops.cuda_sobel.direction(image, operator, ksize, border, compat, grey, quantize, bgr)
    f = _a.native_filter(operator, ksize, border, compat, grey, "l2")
    return _each(image, None, lambda x, _: _direction(x, f, quantize, bgr, device))


def _gradient_dtype(f: Any, dtype: Any, ksize: int) -> str:
    name = _dtype_name(dtype) or ("int16" if f.gradients_fit_int16 else "int32")
    if name == "int16" and not f.gradients_fit_int16:
        raise ValueError(
            f"dtype int16 cannot hold ksize {ksize}'s gradients (|G| up to {f.gradient_bound}): use int32 or float32"
        )
    return name


def _placed(image: Any, device: Any) -> Tuple[Any, str, Optional[int], Optional[int]]:
    """The image (paths and PIL images read), its library, the CUDA ordinal it is on (None: host), and the one
    to compute on (None: the CPU), checked against ``device``."""
    if _a.is_path(image) or _a.is_pil(image):
        image = _a.to_host(image)
    lib = _a.library(image)
    if lib == "numpy":
        image = _a.to_host(image)
    where = _a.where(image, lib)
    parsed = _a.parse_device(device)
    if where is None:
        return image, lib, None, (None if parsed in (None, "cpu") else parsed)  # type: ignore[return-value]
    if parsed == "cpu" or (parsed is not None and parsed != where):
        name = "cpu" if parsed == "cpu" else f"cuda:{parsed}"
        raise ValueError(f"image: on cuda:{where}, but device='{name}'; move it first, or leave device out")
    return image, lib, where, where


def _computed(image: Any, f: Any, output: str, dtype: str, planes: int, bgr: bool, device: Any) -> Any:
    """``output`` of an image on the GPU (its own, zero-copy; or a host image's copied through) or None when it
    is computed on the CPU: an array of shape (planes, *edges' shape) of ``dtype`` (planes 2: Gx, Gy)."""
    import numpy as np
    image, lib, where, ordinal = _placed(image, device)
    if ordinal is None:
        return None
    shape = _a.check(image, lib)
    rs = _a.result_shape(shape)
    n, h, w = _a.batch_shape(shape)
    engine = _engine(ordinal)
    if where is None:  # a host image computed on the GPU: one upload, one launch, one download
        host = _host(image, lib)
        out = np.empty((planes,) + rs, dtype)
        _native.outputs_on_gpu(engine._native, _a.four_d(host), out.reshape(-1).view(np.uint8), f, output, bgr)
        return _a.torch().from_numpy(out) if lib == "torch" else out
    with _a.on_device(image, lib):
        rgb = _a.packed_rgb_device(image, lib, bgr)
        out = _a.empty_like_result(lib, (planes,) + rs, dtype, image.device)
        if n * h * w > 0:
            rgb_ptr, out_ptr, stream = _a.device_pointers(rgb, out, lib, where)
            _native.sobel_device(engine._native, rgb_ptr, out_ptr, w, h, n, stream, f, output)
    return out


def _gradients(image: Any, f: Any, dtype: Any, ksize: int, bgr: bool, device: Any = None) -> Tuple[Any, Any]:
    import numpy as np
    name = _gradient_dtype(f, dtype, ksize)
    on_gpu = _computed(image, f, name, name, 2, bgr, device)
    if on_gpu is not None:
        return on_gpu[0], on_gpu[1]
    image, lib, _, _ = _placed(image, None)
    host = _host(image, lib)
    shape = _a.check(host, "numpy")
    rs = _a.result_shape(shape)
    gx, gy = np.empty(rs, name), np.empty(rs, name)
    bs = _a.batch_shape(shape)
    _native.gradients_host(_a.four_d(host), gx.reshape(bs), gy.reshape(bs), f, bgr)
    if lib == "torch":
        return _a.torch().from_numpy(gx), _a.torch().from_numpy(gy)
    return gx, gy


def _direction(image: Any, f: Any, quantize: Optional[str], bgr: bool, device: Any = None) -> Any:
    import numpy as np
    if quantize not in (None, "canny"):
        raise ValueError(f"invalid quantize '{quantize}': expected None or 'canny'")
    output, dtype = ("direction4", "uint8") if quantize else ("direction", "float32")
    on_gpu = _computed(image, f, output, dtype, 1, bgr, device)
    if on_gpu is not None:
        return on_gpu[0]
    image, lib, _, _ = _placed(image, None)
    host = _host(image, lib)
    shape = _a.check(host, "numpy")
    out = np.empty(_a.result_shape(shape), dtype)
    _native.direction_host(_a.four_d(host), out.reshape(_a.batch_shape(shape)), f, bgr)
    return _a.torch().from_numpy(out) if lib == "torch" else out


# The custom operators for torch.compile: registered when the package first meets torch, or now if the caller has
# imported it already.
_a.ON_TORCH.append(_ops.register)
if "torch" in __import__("sys").modules:
    _a.torch()
