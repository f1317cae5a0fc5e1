"""`cuda_sobel.filter`: the ``filter`` command's convolutions on arrays — the same kernels, borders, strategies
and bytes (``docs/filter.md``)."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Optional, Tuple, Union

if TYPE_CHECKING:  # NumPy is imported where it is used (the package's __init__ says why)
    import numpy as np

from . import _arrays as _a
from . import _native

VARIANTS: Tuple[str, ...] = ("auto",) + tuple(_native.FILTER_VARIANTS)


@functools.lru_cache(maxsize=256)
def _kernel(spec: str, text: Optional[str], border: Optional[str], variant: str) -> Any:
    return _native.NativeKernel(spec, text, border, variant)


def native_kernel(kernel: Any, divisor: Optional[int], gradient: bool, border: Optional[str], variant: str) -> Any:
    """The checked kernel of the arguments: a spec or a matrix file's path, or an integer matrix (with its divisor,
    or as a gradient)."""
    import numpy as np
    if isinstance(kernel, (str, os.PathLike)):
        if divisor is not None or gradient:
            raise ValueError("divisor and gradient go with a matrix; a named kernel or a file sets its own")
        return _kernel(os.fspath(kernel), None, border, variant)
    m = np.asarray(kernel)
    if m.ndim != 2 or not (np.issubdtype(m.dtype, np.integer) or np.array_equal(m, np.round(m))):
        raise ValueError(f"kernel: expected a spec such as 'gaussian:5', a matrix file's path, or a 2-D integer "
                         f"matrix, not {type(kernel).__name__} of shape {m.shape}")
    lines = [" ".join(str(int(v)) for v in row) for row in m]
    if divisor is not None:
        lines.append(f"divisor {int(divisor)}")
    if gradient:
        lines.append("gradient")
    return _kernel("matrix", "\n".join(lines) + "\n", border, variant)


@functools.lru_cache(maxsize=256)
def _workspace(engine: Any, k: Any, w: int, h: int, planes: int, from_rgb: bool) -> int:
    return _native.filter_workspace(engine, k, w, h, planes, from_rgb)


def _planar(a: Any, lib: str) -> Any:
    """(..., H, W, 3) → (..., 3, H, W), C-contiguous, by the array's own library on its current stream."""
    if lib == "torch":
        return a.movedim(-1, -3).contiguous()
    return _a.cupy().ascontiguousarray(_a.cupy().moveaxis(a, -1, -3))


def filter(
    image: Any,
    kernel: Any,
    *,
    rgb: bool = False,
    border: Optional[str] = None,
    variant: str = "auto",
    device: Union[str, int, None] = None,
    out: Any = None,
    bgr: bool = False,
    divisor: Optional[int] = None,
    gradient: bool = False,
) -> Any:
    """The 2-D convolution of ``image`` by ``kernel``, as uint8: the bytes of ``cuda_sobel filter``.

    image
        As :func:`cuda_sobel.sobel` takes it: H×W, H×W×C, a batch N×H×W×C, uint8 or uint16, a NumPy array, a path,
        a PIL image, a PyTorch tensor (CPU or CUDA), a CuPy array, or a list of these.
    kernel
        ``"box:D"``, ``"gaussian:D"`` (D odd, 1 to 15), ``"scharr:D"`` (3 to 15), ``"sobel:K"`` (1, 3, 5, 7), the path
        of a matrix file, or a 2-D integer matrix (odd sides up to 15; ``divisor`` divides a smoothing matrix's sum,
        by default the sum of its taps; ``gradient=True`` gives the magnitude of the matrix and its transpose).
    rgb
        Filter R, G and B each: the result is H×W×3. By default the grey image (the command line's), H×W.
    border
        ``"replicate"`` (the default), ``"zero"`` or ``"reflect101"``.
    variant
        ``"auto"`` (cpu-rayon for host arrays; on a GPU the strategy the studies measured fastest for the kernel), or
        any strategy of ``cuda_sobel filter --variant`` (:data:`FILTER_VARIANTS`).
    device
        None: where the image is; ``"cuda"``/``"cuda:N"`` computes a host image on that GPU.
    out
        An array of the result's shape, uint8, same library and device, written in place and returned.

    GPU arrays are filtered on the array library's current stream, without synchronising and without a copy to the
    host (each channel of an RGB result goes through planes the library lays out on the device).
    """
    k = native_kernel(kernel, divisor, gradient, border, variant)
    fast = None if (rgb or bgr or device is not None or out is not None) else _gpu_fast(image, k)
    if fast is not None:
        return fast
    from . import _each

    return _each(image, out, lambda x, o: _filter(x, k, rgb, device, o, bgr))


def _gpu_fast(image: Any, k: Any) -> Any:
    """The grey filter of a contiguous uint8 PyTorch or CuPy GPU array — a grey plane H×W, or packed RGB H×W×3 /
    N×H×W×3 — in as few Python steps as possible (the general path's checks cost as much as the kernel at
    2048×1024); None when the call needs the general path, which also checks and explains everything this skips."""
    kind = _a.gpu_uint8(image)
    if kind is None:
        return None
    dims = image.ndim
    from_rgb = dims in (3, 4) and image.shape[-1] == 3
    if not (from_rgb or dims == 2):
        return None
    shape = image.shape[:-1] if from_rgb else image.shape
    h, w = shape[-2], shape[-1]
    n = shape[0] if len(shape) == 3 else 1
    if n * h * w == 0 or n > 65_535:
        return None
    from . import _engine, _engines

    ordinal = kind.ordinal(image)
    engine = (_engines.get(ordinal) or _engine(ordinal))._native
    need = _workspace(engine, k, w, h, n, from_rgb)
    stream = kind.stream(ordinal)
    ws, lock = _a.workspace(kind.name, image, ordinal, stream, need) if need else (None, _a.NOT_SHARED)
    out = kind.new(image, shape)
    with lock:
        _native.filter_device(engine, k, kind.pointer(image), kind.pointer(out), w, h, n, from_rgb,
                              (kind.pointer(ws), need) if need else (0, 0), stream)
    return out


def _filter(image: Any, k: Any, rgb: bool, device: Any, out: Any, bgr: bool) -> Any:
    import numpy as np
    from . import _engine, _host, _placed

    image, lib, where, ordinal = _placed(image, device)
    shape = _a.check(image, lib)
    n, h, w = _a.batch_shape(shape)
    rs = _a.result_shape(shape) + ((3,) if rgb else ())
    if out is not None:
        _a.check_out(out, lib, rs, where, ("uint8",))
    engine = _engine(ordinal)

    if where is None:  # host memory, computed on the CPU or, with a device, on that GPU
        host = _host(image, lib)
        target = out.numpy() if (out is not None and lib == "torch") else out
        result = target if (target is not None and target.flags.c_contiguous) else np.empty(rs, np.uint8)
        batch = (n, h, w) + ((3,) if rgb else ())
        _native.filter_host(engine._native, k, _a.four_d(host), result.reshape(batch), rgb, bgr, ordinal is not None)
        if target is not None and result is not target:
            target[...] = result
        if out is not None:
            return out
        return _a.torch().from_numpy(result) if lib == "torch" else result

    with _a.on_device(image, lib):  # CuPy's own steps on the image's device
        if rgb:
            src, from_rgb, per_image = _planar(_a.packed_rgb_device(image, lib, bgr), lib), False, 3
        else:
            plain = str(image.dtype).replace("torch.", "") == "uint8" and (len(shape) == 2 or shape[-1] == 1)
            if plain:  # already a grey plane: its own grey
                src = image if len(shape) == 2 else image[..., 0]
                src = src.contiguous() if lib == "torch" else _a.cupy().ascontiguousarray(src)
            else:
                src = _a.packed_rgb_device(image, lib, bgr)
            from_rgb, per_image = not plain, 1
        result_planes = _a.empty_like_result(lib, src.shape[:-1] if from_rgb else src.shape, "uint8", image.device)
        if n * h * w > 0:
            src_ptr, out_ptr, stream = _a.device_pointers(src, result_planes, lib, where)
            step = 65_535 // per_image  # images a launch: at most 65 535 planes
            in_bytes, out_bytes = h * w * (3 if from_rgb else per_image), h * w * per_image
            # The grey planes and the strategy's scratch, where it needs any, from the library's own allocator: the
            # native call then neither allocates nor frees (allocating its own through the driver's pool, the native
            # call on a 2048×1024 plane took 88 µs by CUDA events against 25 µs without, H200).
            need = _workspace(engine._native, k, w, h, min(step, n) * per_image, from_rgb)
            ws, lock = _a.workspace(lib, image, where, stream, need) if need else (None, _a.NOT_SHARED)
            workspace = (_a.data_pointer(ws, lib), need) if need else (0, 0)
            with lock:
                for first in range(0, n, step):
                    count = min(step, n - first)
                    _native.filter_device(engine._native, k, src_ptr + first * in_bytes, out_ptr + first * out_bytes,
                                          w, h, count * per_image, from_rgb, workspace, stream)
        result = result_planes
        if rgb:
            result = result_planes.movedim(-3, -1) if lib == "torch" else _a.cupy().moveaxis(result_planes, -3, -1)
        if out is not None:
            out[...] = result
            return out
        return result.contiguous() if lib == "torch" else _a.cupy().ascontiguousarray(result)
