"""`cuda_sobel.canny`: OpenCV's Canny (``cv2.Canny``) on the project's exact gradients — the same bytes."""

from __future__ import annotations

import functools
import numbers
from typing import TYPE_CHECKING, Any, Optional, Tuple

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
    fast = _gpu_fast(image, f, (lo, hi), bgr, out)
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


_PACKAGE: list = []
"""The package's `_engine` and `_engines`, looked up once: a `from . import` of them in each call took 0.41 µs, the
kept tuple 0.04 (CPython 3.11; the package imports this module, so they cannot be imported at its top)."""


def _gpu_fast(image: Any, f: Any, thresholds: Tuple[float, float], bgr: bool, out: Any) -> Any:
    """:func:`canny` of a packed RGB uint8 PyTorch or CuPy GPU array (or batch) in as few Python steps as the edges'
    fast path takes (:func:`cuda_sobel._gpu_fast_path`), into ``out`` where it is a contiguous uint8 array of the
    result's shape on the image's device: the general path's checks cost more than the kernels at 2048×1024 (with
    ``out=``, 81–96 µs a call against 54–56 without, H200). None when the call needs the general path, which checks
    and explains everything this skips.

    Without ``out``, the first image's gradients, suppression and link are launched before the result is allocated,
    and its edges (with the other images) after: the allocation then runs while the GPU works instead of before it
    starts: 5–12 µs less a call at 7680×4320 and 0–4 µs at 2048×1024 than allocating first, on two H200 hosts
    (``scripts/canny_order.py``)."""
    kind = _a.packed_rgb_gpu(image, bgr, None)
    if kind is None:
        return None
    if not _PACKAGE:
        from . import _engine, _engines

        _PACKAGE.append((_engine, _engines))
    _engine, _engines = _PACKAGE[0]
    shape = image.shape[:-1]
    if out is not None and not kind.takes_out(out, image, shape):
        return None
    h, w = shape[-2], shape[-1]
    n = shape[0] if len(shape) == 3 else 1
    if h * w * n == 0:
        return kind.new(image, shape) if out is None else out
    ordinal = kind.ordinal(image)
    engine = (_engines.get(ordinal) or _engine(ordinal))._native
    need = _workspace_bytes(ordinal, f, w, h)
    stream = kind.stream(ordinal)
    ws, lock = _a.workspace(kind.name, image, ordinal, stream, need)
    rgb, lo, hi, workspace = kind.pointer(image), thresholds[0], thresholds[1], (kind.pointer(ws), need)
    with lock:
        if out is not None:
            _native.canny_device(engine, rgb, kind.pointer(out), w, h, n, stream, f, lo, hi, workspace)
            return out
        _native.canny_device(engine, rgb, 0, w, h, n, stream, f, lo, hi, workspace, 1)
        out = kind.new(image, shape)
        _native.canny_device(engine, rgb, kind.pointer(out), w, h, n, stream, f, lo, hi, workspace, 2)
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
    with _a.on_device(x, lib):
        rgb = _a.packed_rgb_device(x, lib, bgr)
        out = o if (o is not None and _a.contiguous(o, lib)) else _a.empty_like_result(lib, rs, "uint8", x.device)
        if n * h * w > 0:
            engine = _engine(where)._native
            rgb_ptr, out_ptr, stream = _a.device_pointers(rgb, out, lib, where)
            need = _workspace_bytes(where, f, w, h)
            ws, lock = _a.workspace(lib, x, where, stream, need)
            with lock:
                _native.canny_device(engine, rgb_ptr, out_ptr, w, h, n, stream, f, thresholds[0], thresholds[1],
                                     (_a.data_pointer(ws, lib), need))
        if o is not None and out is not o:
            o[...] = out
            return o
    return out

