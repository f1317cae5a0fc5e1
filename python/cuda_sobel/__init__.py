"""Sobel edge magnitudes of images in NumPy, PyTorch and CuPy arrays — byte for byte the bytes of the
``cuda_sobel`` command line's scalar reference: grey ``(30·R + 59·G + 11·B + 50) / 100``, 3×3 Gx and Gy,
``min(255, round(sqrt(Gx² + Gy²)))``.

- NumPy (or a PyTorch CPU tensor) in → the same kind out, computed by cpu-rayon on all cores, or with
  ``device="cuda"`` on the GPU (gpu-strip, through pinned buffers).
- A PyTorch CUDA tensor or a CuPy array in → the same library's array out, on the same device, computed by
  gpu-strip straight from the array's memory, launched on the library's *current stream*: no copy, no
  synchronisation, so it composes inside a training or video pipeline.
- A batch ``N×H×W×C`` is one call (one kernel launch on the GPU).

Errors are Python exceptions with the command line's words: ``TypeError`` for a dtype or an array type it
does not take, ``ValueError`` for a shape, a name, or a tensor on another device.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _native

__all__ = ["Engine", "sobel", "gradients", "device_count", "OPERATORS", "BORDERS", "COMPATS", "VARIANTS"]
__version__: str = _native.__version__

OPERATORS: Tuple[str, ...] = tuple(_native.OPERATORS)
BORDERS: Tuple[str, ...] = tuple(_native.BORDERS)
COMPATS: Tuple[str, ...] = tuple(_native.COMPATS)
VARIANTS: Tuple[str, ...] = ("auto", "cpu-rayon", "cpu-scalar", "gpu-strip")


def device_count() -> int:
    """How many CUDA devices are visible (0 without an NVIDIA driver)."""
    return _native.device_count()


# ---------------------------------------------------------------------------------------------------
# What kind of array, and where it lives


def _library(image: Any) -> str:
    """'numpy', 'torch' or 'cupy' — or a TypeError naming what it is."""
    if isinstance(image, np.ndarray):
        return "numpy"
    module = type(image).__module__.split(".")[0]
    if module == "torch" and hasattr(image, "data_ptr"):
        _torch()
        return "torch"
    if module == "cupy" and hasattr(image, "data"):
        return "cupy"
    if hasattr(image, "__cuda_array_interface__") or hasattr(image, "__dlpack_device__"):
        raise TypeError(
            f"image: a {type(image).__module__}.{type(image).__name__} on a GPU: cuda_sobel takes NumPy arrays, "
            "PyTorch tensors and CuPy arrays (convert it with torch.as_tensor or cupy.asarray)"
        )
    if hasattr(image, "__array__") or isinstance(image, (list, tuple)):
        return "numpy"
    raise TypeError(f"image: a {type(image).__name__}, expected a NumPy array, a PyTorch tensor or a CuPy array")


def _where(image: Any, library: str) -> Optional[int]:
    """The CUDA ordinal the array is on, or None for host memory; a ValueError for another device type."""
    if library == "torch":
        kind = image.device.type
        if kind == "cpu":
            return None
        if kind != "cuda":
            raise ValueError(f"image: a tensor on {image.device}: cuda_sobel takes CPU or CUDA tensors")
        return image.device.index if image.device.index is not None else _torch().cuda.current_device()
    if library == "cupy":
        return image.device.id
    return None


def _torch() -> Any:
    import torch

    _TORCH[0] = torch
    return torch


# PyTorch, once some call has met a tensor (never imported here before: it is not a dependency).
_TORCH: list = [None]


def _cupy() -> Any:
    import cupy

    return cupy


def _parse_device(device: Union[str, int, None]) -> Union[str, int, None]:
    """None, 'cpu', or a CUDA ordinal (from 'cuda', 'cuda:N' or N)."""
    if device is None or device == "cpu":
        return device
    if isinstance(device, int) and not isinstance(device, bool) and device >= 0:
        return device
    if isinstance(device, str) and device.startswith("cuda"):
        rest = device[4:]
        if rest == "":
            return 0
        if rest.startswith(":") and rest[1:].isdigit():
            return int(rest[1:])
    if hasattr(device, "type") and hasattr(device, "index"):  # a torch.device
        return _parse_device(str(device))
    raise ValueError(f"invalid device {device!r}: expected 'cpu', 'cuda', 'cuda:N' or N")


# ---------------------------------------------------------------------------------------------------
# Shapes: (H, W), (H, W, C), (N, H, W, C) with C in 1, 3, 4


def _check(image: Any, library: str) -> Tuple[int, ...]:
    dtype = str(image.dtype)
    if dtype not in ("uint8", "torch.uint8"):
        raise TypeError(
            f"image: dtype {dtype}, expected uint8 (scale other types to 0..255 first; the command line maps "
            "16-bit images with round(v·255/65535))"
        )
    shape = tuple(int(s) for s in image.shape)
    ok = len(shape) == 2 or (len(shape) in (3, 4) and shape[-1] in (1, 3, 4))
    if not ok:
        raise ValueError(
            f"image: shape {shape}, expected H×W (grey), H×W×3 (RGB), H×W×4 (alpha dropped) or a batch N×H×W×C"
            " with C = 1, 3 or 4"
        )
    return shape


def _edges_shape(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    return shape if len(shape) == 2 else shape[:-1]


def _filter_args(operator: str, border: Optional[str], compat: str) -> Tuple[str, Optional[str], str]:
    for what, value, allowed in (("operator", operator, OPERATORS), ("compat", compat, COMPATS)):
        if value not in allowed:
            raise ValueError(f"invalid {what} '{value}': expected one of {', '.join(allowed)}")
    if border is not None and border not in BORDERS:
        raise ValueError(f"invalid border '{border}': expected one of {', '.join(BORDERS)}")
    if compat == "report" and border not in (None, "zero"):
        raise ValueError(f"compat 'report' uses the report's zero border; leave out border '{border}'")
    return operator, border, compat


def _rgb_host(a: np.ndarray, bgr: bool) -> np.ndarray:
    """Packed C-contiguous (..., H, W, 3) uint8: grey repeated, alpha dropped, BGR reversed."""
    return _packed_rgb(a, np, bgr)


def _packed_rgb(a: Any, xp: Any, bgr: bool) -> Any:
    """:func:`_rgb_host` for NumPy or CuPy arrays (`xp`: the module; CuPy runs on its current stream)."""
    if a.ndim == 2:
        a = a[:, :, None]
    channels = a.shape[-1]
    if channels == 1:
        a = xp.repeat(a, 3, axis=-1)
    elif channels == 4:
        a = a[..., :3]
    if bgr and channels != 1:
        a = a[..., ::-1]
    return xp.ascontiguousarray(a)


def _rgb_device(a: Any, library: str, bgr: bool) -> Any:
    """The same on the GPU, with the array's own library (on its current stream)."""
    if library == "cupy":
        return _packed_rgb(a, _cupy(), bgr)
    if a.ndim == 2:
        a = a[:, :, None]
    channels = a.shape[-1]
    if channels == 1:
        a = a.expand(*a.shape[:-1], 3)
    elif channels == 4:
        a = a[..., :3]
    if bgr and channels != 1:
        a = a.flip(-1)
    return a.contiguous()


def _check_out(out: Any, library: str, shape: Tuple[int, ...], ordinal: Optional[int], dtype: str = "uint8") -> None:
    got = _library(out)
    if got != library:
        raise TypeError(f"out: a {type(out).__name__}, expected the input's kind of array ({library})")
    if str(out.dtype) not in (dtype, f"torch.{dtype}"):
        raise TypeError(f"out: dtype {out.dtype}, expected {dtype}")
    if tuple(int(s) for s in out.shape) != shape:
        raise ValueError(f"out: shape {tuple(out.shape)}, expected {shape}")
    if _where(out, got) != ordinal:
        raise ValueError("out: on another device than the image")


# ---------------------------------------------------------------------------------------------------
# Engines


class Engine:
    """A device with its compiled kernels, kept for repeated calls (module-level functions use one default
    engine per device, made on first use).

    ``device``: ``"cpu"``, ``"cuda"`` / ``"cuda:N"`` / ``N``. Opening a CUDA device that cannot be used raises
    ``RuntimeError`` saying why.
    """

    def __init__(self, device: Union[str, int] = "cpu") -> None:
        parsed = _parse_device(device)
        self._ordinal: Optional[int] = None if parsed in (None, "cpu") else int(parsed)  # type: ignore[arg-type]
        self._native = _native.NativeEngine(self._ordinal)

    @property
    def device(self) -> str:
        """``"cpu"`` or ``"cuda:N"``."""
        return "cpu" if self._ordinal is None else f"cuda:{self._ordinal}"

    def __repr__(self) -> str:
        return f"cuda_sobel.Engine({self.device!r}: {self._native.describe()})"

    def sobel(
        self,
        image: Any,
        *,
        operator: str = "sobel",
        border: Optional[str] = None,
        compat: str = "exact",
        variant: str = "auto",
        out: Any = None,
        bgr: bool = False,
    ) -> Any:
        """Edge magnitudes (uint8) of ``image`` on this engine's device; see :func:`cuda_sobel.sobel`."""
        return _sobel(self, image, operator, border, compat, variant, out, bgr)

    def gradients(
        self,
        image: Any,
        *,
        operator: str = "sobel",
        border: Optional[str] = None,
        compat: str = "exact",
        bgr: bool = False,
    ) -> Tuple[Any, Any]:
        """Gx and Gy (int16); see :func:`cuda_sobel.gradients`."""
        return _gradients(image, operator, border, compat, bgr)


_engines: dict = {}
_engines_lock = threading.Lock()


def _engine(ordinal: Optional[int]) -> Engine:
    key = "cpu" if ordinal is None else ordinal
    with _engines_lock:
        if key not in _engines:
            _engines[key] = Engine("cpu" if ordinal is None else ordinal)
        return _engines[key]


# ---------------------------------------------------------------------------------------------------
# The calls


def sobel(
    image: Any,
    *,
    operator: str = "sobel",
    border: Optional[str] = None,
    compat: str = "exact",
    variant: str = "auto",
    device: Union[str, int, None] = None,
    out: Any = None,
    bgr: bool = False,
) -> Any:
    """Sobel edge magnitudes of ``image``, as uint8, shaped like the image without its channel axis.

    image
        uint8, H×W (grey: R = G = B), H×W×3 (RGB), H×W×4 (alpha dropped), or a batch N×H×W×C, any strides:
        a NumPy array (or a PyTorch CPU tensor), a PyTorch CUDA tensor or a CuPy array.
    operator
        ``"sobel"`` or ``"scharr"``.
    border
        ``"replicate"`` (the default), ``"zero"`` or ``"reflect101"`` (OpenCV's default); with
        ``compat="report"`` only ``"zero"``, its default.
    compat
        ``"exact"`` (integers, rounded, saturated) or ``"report"`` (the original C program's arithmetic).
    variant
        ``"auto"`` (cpu-rayon for host arrays, gpu-strip for GPU arrays or ``device="cuda"``), or one of
        ``"cpu-rayon"``, ``"cpu-scalar"`` (the reference), ``"gpu-strip"``.
    device
        None: where the image is. ``"cuda"``/``"cuda:N"`` with a NumPy array: computed on that GPU (copies
        through pinned buffers). A GPU array must already be on the device named.
    out
        An array of the result's shape, dtype uint8, same library and device, written in place and returned.
    bgr
        The channels are in OpenCV's order (B, G, R).

    GPU arrays are computed on the array library's current stream, without synchronising: the result is
    ready for any later work on that stream.
    """
    fast = _torch_fast_path(image, operator, border, compat, variant, device, out, bgr)
    if fast is not None:
        return fast
    parsed = _parse_device(device)
    library = _library(image)
    where = _where(image, library) if library != "numpy" else None
    if library == "numpy":
        ordinal = None if parsed in (None, "cpu") else parsed
    elif where is None:  # a torch CPU tensor
        ordinal = None if parsed in (None, "cpu") else parsed
    else:
        if parsed == "cpu" or (parsed is not None and parsed != where):
            name = "cpu" if parsed == "cpu" else f"cuda:{parsed}"
            raise ValueError(f"image: on cuda:{where}, but device='{name}'; move it first, or leave device out")
        ordinal = where
    return _sobel(_engine(ordinal), image, operator, border, compat, variant, out, bgr)  # type: ignore[arg-type]


_VALID_FILTERS = frozenset(
    (op, border, compat)
    for op in OPERATORS
    for compat in COMPATS
    for border in ((None,) + BORDERS if compat == "exact" else (None, "zero"))
)


def _torch_fast_path(image: Any, operator: str, border: Optional[str], compat: str, variant: str, device: Any, out: Any, bgr: bool) -> Any:
    """The common call inside a PyTorch pipeline — a packed RGB uint8 CUDA tensor (or batch), no conversion
    asked for — in as few Python steps as possible: at 2048×1024 the kernel takes 8 µs, so each µs of Python
    shows (`docs/performance.md` v0.17). None when the call needs the general path (which also checks and
    explains everything this skips)."""
    torch = _TORCH[0]
    if torch is None or type(image) is not torch.Tensor or bgr or device is not None:
        return None
    if not image.is_cuda or image.dtype is not torch.uint8 or image.dim() not in (3, 4) or image.shape[-1] != 3:
        return None
    if variant not in ("auto", "gpu-strip") or (operator, border, compat) not in _VALID_FILTERS or not image.is_contiguous():
        return None
    shape = image.shape[:-1]
    ordinal = image.get_device()
    if out is None:
        out = torch.empty(shape, dtype=torch.uint8, device=image.device)
    elif not (type(out) is torch.Tensor and out.dtype is torch.uint8 and out.shape == shape and out.is_contiguous() and out.get_device() == ordinal):
        return None
    engine = _engines.get(ordinal) or _engine(ordinal)
    h, w = shape[-2], shape[-1]
    images = shape[0] if len(shape) == 3 else 1
    if h * w * images:
        engine._native.sobel_device(
            image.data_ptr(), out.data_ptr(), w, h, images, _torch_stream(ordinal), operator, border, compat
        )
    return out


def _sobel(engine: Engine, image: Any, operator: str, border: Optional[str], compat: str, variant: str, out: Any, bgr: bool) -> Any:
    operator, border, compat = _filter_args(operator, border, compat)
    if variant not in VARIANTS:
        raise ValueError(f"invalid variant '{variant}': expected one of {', '.join(VARIANTS)}")
    library = _library(image)
    if library == "numpy" and not isinstance(image, np.ndarray):
        image = np.asarray(image)
    shape = _check(image, library)
    where = _where(image, library)
    if where is not None and where != engine._ordinal:
        raise ValueError(f"image: on cuda:{where}, but the engine is on {engine.device}")
    result_shape = _edges_shape(shape)
    if out is not None:
        _check_out(out, library, result_shape, where)

    if where is None:  # host memory: NumPy, or a PyTorch CPU tensor through NumPy
        host = image.numpy() if library == "torch" else image
        if variant == "auto":
            variant = "cpu-rayon" if engine._ordinal is None else "gpu-strip"
        if variant == "gpu-strip" and engine._ordinal is None:
            raise ValueError("variant 'gpu-strip' needs a GPU: pass device='cuda'")
        rgb = _rgb_host(host, bgr)
        target = out.numpy() if (out is not None and library == "torch") else out
        edges = target if (target is not None and target.flags.c_contiguous) else np.empty(result_shape, np.uint8)
        engine._native.sobel_host(rgb, edges, variant, operator, border, compat)
        if target is not None and edges is not target:
            target[...] = edges
        if out is not None:
            return out
        return _torch().from_numpy(edges) if library == "torch" else edges

    if variant not in ("auto", "gpu-strip"):
        raise ValueError(f"variant '{variant}' runs on the CPU: pass a host array (this one is on cuda:{where})")
    rgb = _rgb_device(image, library, bgr)
    if out is not None and _contiguous(out, library):
        edges = out
    elif library == "torch":
        edges = _torch().empty(result_shape, dtype=_torch().uint8, device=image.device)
    else:
        edges = _cupy().empty(result_shape, dtype=_cupy().uint8)
    h, w = int(rgb.shape[-3]), int(rgb.shape[-2])
    images = math.prod(int(s) for s in rgb.shape[:-3])
    if h * w * images > 0:
        if library == "torch":
            stream = _torch_stream(where)
            rgb_ptr, out_ptr = rgb.data_ptr(), edges.data_ptr()
        else:
            cp = _cupy()
            with cp.cuda.Device(where):
                stream = cp.cuda.get_current_stream().ptr
            rgb_ptr, out_ptr = rgb.data.ptr, edges.data.ptr
        engine._native.sobel_device(rgb_ptr, out_ptr, w, h, images, stream, operator, border, compat)
    if out is not None and edges is not out:
        out[...] = edges
        return out
    return edges


def _torch_stream(ordinal: int) -> int:
    """The raw handle of PyTorch's current stream on device `ordinal`."""
    torch = _torch()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # what torch.cuda.current_stream builds on
    if raw is not None:
        return int(raw(ordinal))
    return int(torch.cuda.current_stream(ordinal).cuda_stream)


def _contiguous(a: Any, library: str) -> bool:
    return a.is_contiguous() if library == "torch" else a.flags.c_contiguous


def gradients(
    image: Any,
    *,
    operator: str = "sobel",
    border: Optional[str] = None,
    compat: str = "exact",
    bgr: bool = False,
) -> Tuple[Any, Any]:
    """Gx and Gy as int16, shaped like the edges (for Canny, or gradient orientation ``atan2(Gy, Gx)``).

    The same image kinds, names and arithmetic as :func:`sobel` (``compat="report"`` gives the report's
    unwrapped gradients; it wrapped them only when storing bytes). Computed on the CPU by the scalar
    reference; a GPU array is copied to the host and the results back to its device.
    """
    return _gradients(image, operator, border, compat, bgr)


def _gradients(image: Any, operator: str, border: Optional[str], compat: str, bgr: bool) -> Tuple[Any, Any]:
    operator, border, compat = _filter_args(operator, border, compat)
    library = _library(image)
    if library == "numpy" and not isinstance(image, np.ndarray):
        image = np.asarray(image)
    shape = _check(image, library)
    where = _where(image, library)
    if library == "torch":
        host = image.detach().cpu().numpy()
    elif library == "cupy":
        host = _cupy().asnumpy(image)
    else:
        host = image
    rgb = _rgb_host(host, bgr)
    result_shape = _edges_shape(shape)
    gx, gy = np.empty(result_shape, np.int16), np.empty(result_shape, np.int16)
    _engine(None)._native.gradients_host(rgb, gx, gy, operator, border, compat)
    if library == "torch":
        torch = _torch()
        return torch.from_numpy(gx).to(image.device), torch.from_numpy(gy).to(image.device)
    if library == "cupy":
        cp = _cupy()
        with cp.cuda.Device(where):
            return cp.asarray(gx), cp.asarray(gy)
    return gx, gy
