"""Type stubs of the compiled module (python/src/lib.rs); use the functions of `cuda_sobel` instead."""

from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

OPERATORS: List[str]
KSIZES: List[int]
BORDERS: List[str]
COMPATS: List[str]
GREYS: List[str]
FORMATS: List[str]
__version__: str

def device_count() -> int: ...
def show_only_devices(ordinals: List[int]) -> bool: ...
def read(path: Any, keep_orientation: bool = False) -> Tuple[npt.NDArray[np.uint8], List[str]]: ...

class NativeFilter:
    def __init__(
        self, operator: str, ksize: int, border: Optional[str], compat: str, grey: str, norm: str
    ) -> None: ...
    @property
    def gradients_fit_int16(self) -> bool: ...
    @property
    def gradient_bound(self) -> int: ...

class NativeEngine:
    def __init__(self, ordinal: Optional[int] = None) -> None: ...
    @property
    def ordinal(self) -> Optional[int]: ...
    def describe(self) -> str: ...

# Host images (any layout NumPy holds: H×W×C, C = 1…4, uint8 or uint16, any strides, as a 4-D batch view).
def sobel_host(
    engine: NativeEngine, image: npt.NDArray[Any], out: npt.NDArray[np.uint8], variant: str,
    filter: NativeFilter, bgr: bool,
) -> None: ...
def gradients_host(
    image: npt.NDArray[Any], gx: npt.NDArray[Any], gy: npt.NDArray[Any], filter: NativeFilter, bgr: bool
) -> None: ...
def direction_host(image: npt.NDArray[Any], out: npt.NDArray[Any], filter: NativeFilter, bgr: bool) -> None: ...
def outputs_on_gpu(
    engine: NativeEngine, image: npt.NDArray[Any], out: npt.NDArray[np.uint8], filter: NativeFilter, output: str,
    bgr: bool,
) -> None: ...

# Device memory another library owns (data pointers), on its stream; output: "edges", "int16", "int32",
# "float32", "direction" or "direction4".
def sobel_device(
    engine: NativeEngine, rgb: int, out: int, width: int, height: int, images: int, stream: int,
    filter: NativeFilter, output: str = "edges",
) -> None: ...

def canny_workspace(engine: NativeEngine, filter: NativeFilter, width: int, height: int) -> int: ...
def canny_device(
    engine: NativeEngine, rgb: int, out: int, width: int, height: int, images: int, stream: int,
    filter: NativeFilter, low: float, high: float, workspace: Tuple[int, int], part: int = 0,
) -> None: ...

# Folders (cuda_sobel.dask): the plan of `cuda_sobel batch`, and one chunk of it run.
def plan_batch(
    inputs: List[str], out_dir: str, recursive: bool = False, format: str = "png", kernel: Optional[str] = None,
    canny: bool = False,
) -> Any: ...
def remove_stale(outputs: List[str]) -> int: ...
def check_canny(filter: NativeFilter, low: float, high: float) -> None: ...

class BatchWorker:
    def __init__(self, devices: Optional[List[int]] = None, threads: Optional[int] = None, jpegs: bool = True) -> None: ...
    @property
    def description(self) -> str: ...
    def run(
        self, jobs: Any, filter: NativeFilter, png_compression: str, format: str, check: bool,
        kernel: Optional[str] = None, rgb: bool = False, canny: Optional[Tuple[float, float]] = None,
        ahead: Optional["ReadAhead"] = None,
    ) -> Any: ...

class ReadAhead:
    def __init__(self, jobs: Any, check: bool = False, canny: bool = False) -> None: ...
    @property
    def taken(self) -> int: ...
