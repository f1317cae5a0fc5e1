"""The calls as PyTorch custom operators, so that ``torch.compile(fullgraph=True)`` keeps them in its graph.

Dynamo cannot trace into :func:`cuda_sobel.sobel` (it holds a native filter object and calls the native module),
so without these a compiled function broke its graph at every call. Registered with ``torch.library.custom_op``
(as kornia's and torchvision's operators are), each with a fake implementation that gives the result's shape and
dtype without computing it; the real one is the eager call itself, so the bytes are the same. The operators are
registered once, when the package first meets torch (at import if torch is already imported), and used only while
``torch.compile`` traces a call: eagerly the calls keep their own, shorter path.
"""

# No `from __future__ import annotations` here: torch.library.custom_op reads each operator's schema from its
# annotations, which must be the types themselves, not strings.
from typing import Any, Optional

from . import _arrays as _a

_REGISTERED: list = [False]


def compiling(image: Any) -> bool:
    """Whether ``torch.compile`` is tracing a call on the tensor ``image`` and the operators are registered."""
    torch = _a._TORCH[0]
    return _REGISTERED[0] and isinstance(image, torch.Tensor) and torch.compiler.is_compiling()


def register(torch: Any) -> None:
    """Registers the operators ``cuda_sobel::sobel``, ``::gradients`` and ``::direction`` (once; a torch without
    ``torch.library.custom_op``, older than 2.4, gets none and compiled calls break the graph as before)."""
    if _REGISTERED[0] or not hasattr(torch.library, "custom_op"):
        return
    try:
        _register(torch)
    except Exception as e:  # a torch whose operator API differs: the calls still work, compiled ones break the graph
        import warnings

        warnings.warn(f"cuda_sobel: its torch.compile operators could not be registered ({e})", stacklevel=2)


def _register(torch: Any) -> None:
    from . import direction, gradients, sobel
    from . import _gradient_dtype

    Tensor = torch.Tensor

    @torch.library.custom_op("cuda_sobel::sobel", mutates_args=())
    def sobel_op(image: Tensor, operator: str, ksize: int, border: Optional[str], compat: str, grey: str, norm: str,
                 bgr: bool) -> Tensor:
        return sobel(image, operator=operator, ksize=ksize, border=border, compat=compat, grey=grey, norm=norm,
                     bgr=bgr)

    @sobel_op.register_fake
    def _(image, operator, ksize, border, compat, grey, norm, bgr):  # type: ignore[no-untyped-def]
        return image.new_empty(_a.result_shape(tuple(image.shape)), dtype=torch.uint8)

    # Gx and Gy as one tensor (2, …), which the caller unbinds in its graph: an operator's outputs may not be views of
    # one another, and the GPU path computes both planes into one allocation, returned here without a copy.
    @torch.library.custom_op("cuda_sobel::gradients", mutates_args=())
    def gradients_op(image: Tensor, operator: str, ksize: int, border: Optional[str], compat: str, grey: str,
                     dtype: Optional[str], bgr: bool) -> Tensor:
        gx, gy = gradients(image, operator=operator, ksize=ksize, border=border, compat=compat, grey=grey,
                           dtype=dtype, bgr=bgr)
        base = gx._base
        if base is not None and base is gy._base and tuple(base.shape) == (2,) + tuple(gx.shape):
            return base
        return torch.stack((gx, gy))

    @gradients_op.register_fake
    def _(image, operator, ksize, border, compat, grey, dtype, bgr):  # type: ignore[no-untyped-def]
        f = _a.native_filter(operator, ksize, border, compat, grey, "l2")
        name = _gradient_dtype(f, dtype, ksize)
        return image.new_empty((2,) + _a.result_shape(tuple(image.shape)), dtype=getattr(torch, name))

    @torch.library.custom_op("cuda_sobel::direction", mutates_args=())
    def direction_op(image: Tensor, operator: str, ksize: int, border: Optional[str], compat: str, grey: str,
                     quantize: Optional[str], bgr: bool) -> Tensor:
        return direction(image, operator=operator, ksize=ksize, border=border, compat=compat, grey=grey,
                         quantize=quantize, bgr=bgr)

    @direction_op.register_fake
    def _(image, operator, ksize, border, compat, grey, quantize, bgr):  # type: ignore[no-untyped-def]
        dtype = torch.uint8 if quantize == "canny" else torch.float32
        return image.new_empty(_a.result_shape(tuple(image.shape)), dtype=dtype)

    _REGISTERED[0] = True
