"""`cuda_sobel.canny`: OpenCV's Canny (``cv2.Canny``) on the project's exact gradients — the same bytes."""

from __future__ import annotations

import functools
import numbers
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

if TYPE_CHECKING:  # NumPy is imported where it is used (the package's __init__ says why)
    import numpy as np

from . import _arrays as _a
from . import _native


def _threshold(name: str, value: Any) -> float:
    if type(value) is int or type(value) is float:  # the usual call: 0.06 µs, the ABC checks below 0.2–0.4 µs
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"canny: the {name} threshold must be a number, not {value!r}")
    return float(value)  # NaN and infinities: refused by the native check, in the command line's words


def canny(image: Any, low: Any, high: Any, *, ksize: int = 3, norm: str = "l1", grey: str = "percent",
          border: Optional[str] = None, bgr: bool = False, out: Any = None) -> Any:
    """Canny edges of ``image``: uint8, 255 on an edge and 0 elsewhere, shaped like the image without its channels.

    OpenCV's definition, byte for byte: the Sobel of aperture ``ksize`` (3, 5 or 7) as ``CV_16S`` (for 7 scaled by
    1/16, the thresholds too), non-maximum suppression in OpenCV's four sectors, and hysteresis from the pixels above
    ``high`` through those above ``low`` (8-connected; swapped when ``low > high``). ``norm``: ``"l1"`` (OpenCV's
    default, ``L2gradient=False``) or ``"l2"``. With ``grey="bt601"`` and the default border (replicate, OpenCV's
    choice for Canny) the result equals ``cv2.Canny(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), low, high,
    apertureSize=ksize, L2gradient=(norm == "l2"))`` (``python/tests/test_opencv.py``).

    Images as :func:`cuda_sobel.sobel` takes them: on the host (NumPy, PIL, paths, PyTorch CPU tensors, lists,
    batches) computed on all cores; PyTorch and CuPy arrays on a GPU computed there in place, on the library's current
    stream, without a copy or a wait (gpu-strip's gradients, then the suppression and a union-find hysteresis,
    ``cuda/canny.cu``) — the same bytes either way.
    """
    lo, hi = _threshold("low", low), _threshold("high", high)
    f = _a.native_filter("sobel", ksize, border, "exact", grey, norm)
    fast = _torch_fast(image, f, (lo, hi), bgr, out)
    if fast is not None:
        return fast
    from . import _each, _host, _placed

    def one(x: Any, o: Any) -> Any:
        import numpy as np
        x, lib, where, _ = _placed(x, None)
        if where is not None:
            return _on_gpu(x, lib, where, f, (lo, hi), bgr, o)
        host = _host(x, lib)
        shape = _a.check(host, "numpy")
        rs = _a.result_shape(shape)
        if o is not None:
            _a.check_out(o, lib, rs, None, ("uint8",))
        target = o.numpy() if (o is not None and lib == "torch") else o
        edges = target if (target is not None and target.flags.c_contiguous) else np.empty(rs, np.uint8)
        _native.canny_host(_a.four_d(host), edges.reshape(_a.batch_shape(shape)), f, lo, hi, bgr)
        if target is not None and edges is not target:
            target[...] = edges
        if o is not None:
            return o
        return _a.torch().from_numpy(edges) if lib == "torch" else edges

    return _each(image, out, one)


@functools.lru_cache(maxsize=64)
def _workspace_bytes(ordinal: int, f: Any, width: int, height: int) -> int:
    """The device workspace Canny needs for one image of this size (kept: a call inside a loop pays a look-up)."""
    from . import _engine

    return _native.canny_workspace(_engine(ordinal)._native, f, width, height)


_KEPT_WORKSPACE = 256 << 20
"""The largest workspace a stream keeps between calls (bytes): a 2048×1024 Canny's is 6.8 MB, a 7680×4320 one's 108
MB. Allocating it each call added 3 µs to a 30 µs call at 2048×1024 on an H200 host, and at 7680×4320 12.5 µs
against 6.6 kept (the native launch 253 µs); a 16384² image's (0.9 GB) is allocated each call, a 1.8 ms one."""

_workspaces: Dict[Tuple[int, int], Any] = {}


def _workspace(like: Any, ordinal: int, stream: int, need: int) -> Any:
    """A uint8 CUDA tensor of at least `need` bytes on `like`'s device (`ordinal`), for launches on `stream`: kept
    between calls on the same stream up to :data:`_KEPT_WORKSPACE` (their launches are ordered, so one's kernels
    finish with it before the next one's start; PyTorch's streams come from pools it never destroys, so a handle names
    one stream), else new."""
    key = (ordinal, stream)
    kept = _workspaces.get(key)
    if kept is not None and kept.numel() >= need:
        return kept
    ws = like.new_empty((need,))
    if need <= _KEPT_WORKSPACE:
        _workspaces[key] = ws
    return ws


_PACKAGE: list = []
"""The package's `_engine`, `_engines` and `_torch_packed_rgb`, looked up once: a `from . import` of them in each call
took 0.41 µs, the kept tuple 0.04 (CPython 3.11; the package imports this module, so they cannot be imported at its
top)."""


def _torch_fast(image: Any, f: Any, thresholds: Tuple[float, float], bgr: bool, out: Any) -> Any:
    """:func:`canny` of a packed RGB uint8 CUDA tensor (or batch) in as few Python steps as the edges' fast path takes
    (:func:`cuda_sobel._torch_fast_path`), into ``out`` where it is a contiguous uint8 tensor of the result's shape
    on the image's device: the general path's checks cost more than the kernels at 2048×1024 (with ``out=``, 81–96 µs
    a call against 54–56 without, H200). None when the call needs the general path, which checks and explains
    everything this skips."""
    if not _PACKAGE:
        from . import _engine, _engines, _torch_packed_rgb

        _PACKAGE.append((_engine, _engines, _torch_packed_rgb))
    _engine, _engines, _torch_packed_rgb = _PACKAGE[0]
    torch = _torch_packed_rgb(image, bgr, None)
    if torch is None:
        return None
    shape = image.shape[:-1]
    if out is None:
        out = image.new_empty(shape)
    elif not (type(out) is torch.Tensor and out.dtype is torch.uint8 and out.shape == shape and out.is_contiguous()
              and out.get_device() == image.get_device()):
        return None
    h, w = shape[-2], shape[-1]
    n = shape[0] if len(shape) == 3 else 1
    if h * w * n:
        ordinal = image.get_device()
        engine = _engines.get(ordinal) or _engine(ordinal)
        need = _workspace_bytes(ordinal, f, w, h)
        stream = _a.torch_stream(ordinal)
        ws = _workspace(image, ordinal, stream, need)
        _native.canny_device(engine._native, image.data_ptr(), out.data_ptr(), w, h, n, stream, f, thresholds[0],
                             thresholds[1], (ws.data_ptr(), need))
    return out


def _on_gpu(x: Any, lib: str, where: int, f: Any, thresholds: Tuple[float, float], bgr: bool, o: Any) -> Any:
    """Canny of a GPU array on its own device and the library's current stream: the edges in a new array (or ``o``),
    the gradients, states and parents in a workspace from the library's own allocator."""
    from . import _engine

    shape = _a.check(x, lib)
    rs = _a.result_shape(shape)
    n, h, w = _a.batch_shape(shape)
    if o is not None:
        _a.check_out(o, lib, rs, where, ("uint8",))
    rgb = _a.packed_rgb_device(x, lib, bgr)
    out = o if (o is not None and _a.contiguous(o, lib)) else _a.empty_like_result(lib, rs, "uint8", x.device)
    if n * h * w > 0:
        engine = _engine(where)._native
        need = _native.canny_workspace(engine, f, w, h)
        ws = _a.empty_like_result(lib, (need,), "uint8", x.device)
        rgb_ptr, out_ptr, stream = _a.device_pointers(rgb, out, lib, where)
        _native.canny_device(engine, rgb_ptr, out_ptr, w, h, n, stream, f, thresholds[0], thresholds[1],
                             (_a.data_pointer(ws, lib), need))
    if o is not None and out is not o:
        o[...] = out
        return o
    return out

