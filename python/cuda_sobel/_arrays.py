"""What kind of image a caller holds, where it lives, and how it reaches the native module: the plumbing
behind :mod:`cuda_sobel`'s functions. Host images go to Rust as they are (a 4-D view of the caller's memory);
GPU arrays as raw pointers with the library's current stream."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

if TYPE_CHECKING:  # NumPy is imported where it is used (the package's __init__ says why)
    import numpy as np

from . import _native

# PyTorch, once some call has met a tensor (never imported here before: it is not a dependency).
_TORCH: list = [None]
# CuPy, once a call has met one of its arrays (never imported here before either).
_CUPY: list = [None]
# What to do once, when torch is first met (the package registers its custom operators).
ON_TORCH: list = []


def torch() -> Any:
    import torch as t

    if _TORCH[0] is None:
        _TORCH[0] = t
        for hook in ON_TORCH:
            hook(t)
    return t


def cupy() -> Any:
    import cupy as cp

    _CUPY[0] = cp
    return cp


@functools.lru_cache(maxsize=256)
def native_filter(operator: str, ksize: int, border: Optional[str], compat: str, grey: str, norm: str) -> Any:
    """The checked filter of these keyword arguments (kept: a call inside a training loop pays a dict look-up)."""
    if not isinstance(ksize, int) or isinstance(ksize, bool):
        raise ValueError(f"invalid ksize {ksize!r}: expected one of {', '.join(map(str, _native.KSIZES))}")
    return _native.NativeFilter(operator, ksize, border, compat, grey, norm)


def is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def is_pil(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "PIL" and hasattr(x, "mode") and hasattr(x, "getbands")


def from_pil(img: Any) -> np.ndarray:
    """A PIL image as NumPy: its own pixels for grey, grey + alpha, RGB(A) and 16-bit grey; palette, CMYK and the
    rest converted to RGB(A) by PIL first (their raw values are not colours)."""
    import numpy as np
    mode = img.mode
    if mode in ("L", "LA", "RGB", "RGBA"):
        return np.asarray(img)
    if mode in ("I;16", "I;16B", "I;16L"):
        return np.asarray(img).astype(np.uint16, copy=False)
    has_alpha = "A" in img.getbands() or "transparency" in img.info
    return np.asarray(img.convert("RGBA" if has_alpha else "RGB"))


def library(image: Any) -> str:
    """'numpy', 'torch' or 'cupy' — or a TypeError naming what it is."""
    import numpy as np
    if isinstance(image, np.ndarray):
        return "numpy"
    module = type(image).__module__.split(".")[0]
    if module == "torch" and hasattr(image, "data_ptr"):
        torch()
        return "torch"
    if module == "cupy" and hasattr(image, "data"):
        return "cupy"
    if hasattr(image, "__cuda_array_interface__") or hasattr(image, "__dlpack_device__"):
        raise TypeError(
            f"image: a {type(image).__module__}.{type(image).__name__} on a GPU: cuda_sobel takes NumPy arrays, "
            "PyTorch tensors and CuPy arrays (convert it with torch.as_tensor or cupy.asarray)"
        )
    if hasattr(image, "__array__") or hasattr(image, "__array_interface__") or isinstance(image, memoryview):
        return "numpy"
    raise TypeError(
        f"image: a {type(image).__name__}, expected an image: a path, a NumPy array (or anything np.asarray reads, "
        "such as a PIL image), a PyTorch tensor, a CuPy array, or a list of them"
    )


def to_host(image: Any) -> np.ndarray:
    """A path, a PIL image or anything NumPy reads, as a NumPy array (no copy where NumPy makes none)."""
    import numpy as np
    if is_path(image):
        from . import read

        return read(image)
    if is_pil(image):
        return from_pil(image)
    return image if isinstance(image, np.ndarray) else np.asarray(image)


def where(image: Any, lib: str) -> Optional[int]:
    """The CUDA ordinal the array is on, or None for host memory; a ValueError for another device type."""
    if lib == "torch":
        kind = image.device.type
        if kind == "cpu":
            return None
        if kind != "cuda":
            raise ValueError(f"image: a tensor on {image.device}: cuda_sobel takes CPU or CUDA tensors")
        return image.device.index if image.device.index is not None else torch().cuda.current_device()
    if lib == "cupy":
        return image.device.id
    return None


def parse_device(device: Union[str, int, None]) -> Union[str, int, None]:
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
        return parse_device(str(device))
    raise ValueError(f"invalid device {device!r}: expected 'cpu', 'cuda', 'cuda:N' or N")


# ---------------------------------------------------------------------------------------------------
# Shapes: (H, W), (H, W, C), (N, H, W, C) with C in 1 (grey), 2 (grey + alpha), 3 (RGB), 4 (RGBA)


def check(image: Any, lib: str) -> Tuple[int, ...]:
    dtype = str(image.dtype).replace("torch.", "")
    if dtype not in ("uint8", "uint16"):
        raise TypeError(
            f"image: dtype {image.dtype}, expected uint8 or uint16 (uint16 is rounded to 8 bits as the command line "
            "does, round(v·255/65535); scale other types to 0..255 first)"
        )
    shape = tuple(int(s) for s in image.shape)
    if not (len(shape) == 2 or (len(shape) in (3, 4) and 1 <= shape[-1] <= 4)):
        raise ValueError(
            f"image: shape {shape}, expected H×W (grey), H×W×C or a batch N×H×W×C, with C = 1 (grey), "
            "2 (grey + alpha), 3 (RGB) or 4 (RGBA)"
        )
    return shape


def result_shape(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    return shape if len(shape) == 2 else shape[:-1]


def four_d(a: np.ndarray) -> np.ndarray:
    """(N, H, W, C) view of a host image or batch (no copy)."""
    if a.ndim == 2:
        return a[None, :, :, None]
    return a[None] if a.ndim == 3 else a


def batch_shape(shape: Tuple[int, ...]) -> Tuple[int, int, int]:
    """(N, H, W) of an image or batch of that shape."""
    if len(shape) == 4:
        return shape[0], shape[1], shape[2]
    return 1, shape[0], shape[1]


def packed_rgb_device(a: Any, lib: str, bgr: bool) -> Any:
    """Packed (..., H, W, 3) uint8 on the GPU, converted by the array's own library on its current stream: grey
    repeated, alpha dropped, BGR reversed, 16 bits rounded as the command line rounds them."""
    if lib == "cupy":
        xp = cupy()
        if a.dtype == xp.uint16:
            a = ((a.astype(xp.uint32) * 255 + 32767) // 65535).astype(xp.uint8)
        if a.ndim == 2:
            a = a[:, :, None]
        c = a.shape[-1]
        a = xp.repeat(a[..., :1], 3, axis=-1) if c <= 2 else a[..., :3]
        if bgr and c >= 3:
            a = a[..., ::-1]
        return xp.ascontiguousarray(a)
    t = torch()
    if a.dtype == t.uint16:
        a = ((a.to(t.int64) * 255 + 32767) // 65535).to(t.uint8)
    if a.dim() == 2:
        a = a[:, :, None]
    c = a.shape[-1]
    a = a[..., :1].expand(*a.shape[:-1], 3) if c <= 2 else a[..., :3]
    if bgr and c >= 3:
        a = a.flip(-1)
    return a.contiguous()


def check_out(out: Any, lib: str, shape: Tuple[int, ...], ordinal: Optional[int], dtypes: Tuple[str, ...]) -> None:
    got = library(out)
    if got != lib:
        raise TypeError(f"out: a {type(out).__name__}, expected the input's kind of array ({lib})")
    if str(out.dtype).replace("torch.", "") not in dtypes:
        raise TypeError(f"out: dtype {out.dtype}, expected {' or '.join(dtypes)}")
    if tuple(int(s) for s in out.shape) != shape:
        raise ValueError(f"out: shape {tuple(out.shape)}, expected {shape}")
    if where(out, got) != ordinal:
        raise ValueError("out: on another device than the image")


def contiguous(a: Any, lib: str) -> bool:
    return a.is_contiguous() if lib == "torch" else a.flags.c_contiguous


_RAW_STREAM: list = []
"""torch's `_cuda_getCurrentRawStream` (what torch.cuda.current_stream builds on), looked up once."""


def torch_stream(ordinal: int) -> int:
    """The raw handle of PyTorch's current stream on device `ordinal`."""
    if _RAW_STREAM:
        return int(_RAW_STREAM[0](ordinal))
    t = torch()
    raw = getattr(t._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        return int(t.cuda.current_stream(ordinal).cuda_stream)
    _RAW_STREAM.append(raw)
    return int(raw(ordinal))


def device_pointers(rgb: Any, out: Any, lib: str, ordinal: int) -> Tuple[int, int, int]:
    """(rgb pointer, out pointer, stream) of two arrays on device `ordinal`, on the library's current stream."""
    if lib == "torch":
        return rgb.data_ptr(), out.data_ptr(), torch_stream(ordinal)
    cp = cupy()
    with cp.cuda.Device(ordinal):
        stream = cp.cuda.get_current_stream().ptr
    return rgb.data.ptr, out.data.ptr, stream


def data_pointer(a: Any, lib: str) -> int:
    """The device address of a PyTorch or CuPy array's first element."""
    return a.data_ptr() if lib == "torch" else a.data.ptr


def empty_like_result(lib: str, shape: Tuple[int, ...], dtype: str, device: Any) -> Any:
    import numpy as np
    if lib == "torch":
        t = torch()
        return t.empty(shape, dtype=getattr(t, dtype), device=device)
    if lib == "cupy":
        cp = cupy()
        with device:  # CuPy allocates on its current device, which need not be the image's
            return cp.empty(shape, dtype=getattr(cp, dtype))
    return np.empty(shape, getattr(np, dtype))


class _TorchCuda:
    """What the fast paths do with a PyTorch CUDA tensor: ``new_empty`` allocates on its device (the cheapest
    allocation torch has: 1 µs a call less than ``torch.empty(…, device=…)``), its own stream handle of that device."""

    name = "torch"

    @staticmethod
    def ordinal(a: Any) -> int:
        return a.get_device()

    @staticmethod
    def pointer(a: Any) -> int:
        return a.data_ptr()

    @staticmethod
    def stream(ordinal: int) -> int:
        return torch_stream(ordinal)

    @staticmethod
    def new(like: Any, shape: Tuple[int, ...], dtype: Optional[str] = None) -> Any:
        return like.new_empty(shape) if dtype is None else like.new_empty(shape, dtype=getattr(_TORCH[0], dtype))

    @staticmethod
    def takes_out(out: Any, like: Any, shape: Tuple[int, ...]) -> bool:
        t = _TORCH[0]
        return (type(out) is t.Tensor and out.dtype is t.uint8 and out.shape == shape and out.is_contiguous()
                and out.get_device() == like.get_device())

    @staticmethod
    def planes(a: Any) -> Tuple[Any, ...]:
        return a.unbind(0)


class _CupyCuda:
    """The same for a CuPy array on CuPy's current device (the fast paths take no other): CuPy allocates there and
    its current stream is that device's."""

    name = "cupy"

    @staticmethod
    def ordinal(a: Any) -> int:
        return a.data.device_id  # a.device.id makes a Device object first

    @staticmethod
    def pointer(a: Any) -> int:
        return a.data.ptr

    @staticmethod
    def stream(ordinal: int) -> int:
        return _CUPY[0].cuda.get_current_stream().ptr

    @staticmethod
    def new(like: Any, shape: Tuple[int, ...], dtype: Optional[str] = None) -> Any:
        cp = _CUPY[0]
        return cp.empty(shape, cp.uint8 if dtype is None else getattr(cp, dtype))

    @staticmethod
    def takes_out(out: Any, like: Any, shape: Tuple[int, ...]) -> bool:
        cp = _CUPY[0]
        return (type(out) is cp.ndarray and out.dtype.char == "B" and out.shape == shape and out.flags.c_contiguous
                and out.data.device_id == like.data.device_id)

    @staticmethod
    def planes(a: Any) -> Tuple[Any, ...]:
        return tuple(a)


def gpu_uint8(image: Any) -> Any:
    """The fast paths' view of ``image`` (:class:`_TorchCuda` or :class:`_CupyCuda`) when it is a C-contiguous uint8
    PyTorch CUDA tensor, or such a CuPy array on CuPy's current device; else None, and the general path takes the
    call. Each check is the cheapest its library has: at 2048×1024 the kernels take 8–30 µs, and the general
    path's checks cost as much (a CuPy Canny took 74 µs through it against the native launch's 29, H200)."""
    t = _TORCH[0]
    kind = type(image)
    if t is not None and kind is t.Tensor:
        if image.is_cuda and image.dtype is t.uint8 and image.is_contiguous():
            return _TorchCuda
        return None
    cp = _CUPY[0]
    if cp is None:
        if kind.__module__.split(".")[0] != "cupy":
            return None
        import cupy as cp

        _CUPY[0] = cp
    # dtype.char "B" is uint8: comparing dtypes with == converts the right side first.
    if (kind is cp.ndarray and image.dtype.char == "B" and image.flags.c_contiguous
            and image.data.device_id == cp.cuda.runtime.getDevice()):
        return _CupyCuda
    return None


def packed_rgb_gpu(image: Any, bgr: bool, device: Any) -> Any:
    """:func:`gpu_uint8`'s view of ``image`` when it is also packed RGB (H×W×3 or N×H×W×3) with no conversion
    asked for — the common call inside a GPU pipeline, which the fast paths take — else None."""
    if bgr or device is not None:
        return None
    kind = gpu_uint8(image)
    if kind is None or image.ndim not in (3, 4) or image.shape[-1] != 3:
        return None
    return kind


def on_device(a: Any, lib: str) -> Any:
    """A context in which the array library's own operations run on ``a``'s device: CuPy's go to its current
    device, whichever an array is on; PyTorch's follow their tensors."""
    return a.device if lib == "cupy" else contextlib.nullcontext()


KEPT_WORKSPACE = 256 << 20
"""The largest device workspace a stream keeps between calls (bytes): a 2048×1024 Canny's is 6.8 MB, a 7680×4320
one's 108 MB. Allocating Canny's each call added 3 µs to a 30 µs call at 2048×1024 on an H200 host, and at 7680×4320
12.5 µs against 6.6 kept (the native launch 253 µs); a larger one (a 16384² Canny's is 0.9 GB) is allocated each
call."""

_workspaces: Dict[Tuple[str, int, int, Optional[int]], Tuple[int, Any, Any]] = {}

_PER_THREAD_STREAM = 2
"""CUDA's handle for "this thread's default stream" (cudaStreamPerThread): the same number names a different stream
on each thread."""

NOT_SHARED = contextlib.nullcontext()
"""The lock of a workspace made for one call: nothing to share."""


def workspace(lib: str, like: Any, ordinal: int, stream: int, need: int) -> Tuple[Any, Any]:
    """A uint8 array (``lib``'s) of at least ``need`` bytes on ``like``'s device (``ordinal``), for launches on
    ``stream``, and the lock to hold while launching through it: kept between calls on the same stream up to
    :data:`KEPT_WORKSPACE` bytes, else new. Safe because a stream runs its launches in order, so one call's kernels
    are done with it before the next call's start — provided two threads sharing a stream do not interleave their
    launches (the native calls release the GIL, and Canny's first launches come in a call of their own), which the
    lock prevents. A stream handle names one stream for as long as the library's own allocator trusts it to
    (PyTorch's come from pools it never destroys; CuPy's memory pool keys its own reuse by the handle too)."""
    key = (lib, ordinal, stream, threading.get_ident() if stream == _PER_THREAD_STREAM else None)
    kept = _workspaces.get(key)
    if kept is not None and kept[0] >= need:
        return kept[1], kept[2]
    if lib == "torch":
        ws = like.new_empty((need,), dtype=_TORCH[0].uint8)  # a tensor came here: torch is known
    else:
        ws = empty_like_result(lib, (need,), "uint8", like.device)
    if need > KEPT_WORKSPACE:
        return ws, NOT_SHARED
    lock = kept[2] if kept is not None else threading.Lock()  # a larger one replaces it under the same lock
    _workspaces[key] = (need, ws, lock)
    return ws, lock


def is_image_list(image: Any) -> bool:
    """A list or tuple of images (paths, arrays, PIL images, tensors), as opposed to nested lists of numbers."""
    if not isinstance(image, (list, tuple)) or not image:
        return False
    first = image[0]
    return is_path(first) or is_pil(first) or hasattr(first, "shape") or hasattr(first, "__array_interface__")


ListOrOne = Union[Any, List[Any]]
