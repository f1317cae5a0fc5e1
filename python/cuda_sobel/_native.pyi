"""Type stubs of the compiled module (python/src/lib.rs); use the functions of `cuda_sobel` instead."""

from typing import List, Optional

import numpy as np
import numpy.typing as npt

OPERATORS: List[str]
BORDERS: List[str]
COMPATS: List[str]
__version__: str

def device_count() -> int: ...

class NativeEngine:
    def __init__(self, ordinal: Optional[int] = None) -> None: ...
    @property
    def ordinal(self) -> Optional[int]: ...
    def describe(self) -> str: ...
    def sobel_host(
        self,
        rgb: npt.NDArray[np.uint8],
        out: npt.NDArray[np.uint8],
        variant: str,
        operator: str,
        border: Optional[str],
        compat: str,
    ) -> None: ...
    def gradients_host(
        self,
        rgb: npt.NDArray[np.uint8],
        gx: npt.NDArray[np.int16],
        gy: npt.NDArray[np.int16],
        operator: str,
        border: Optional[str],
        compat: str,
    ) -> None: ...
    def sobel_device(
        self,
        rgb: int,
        out: int,
        width: int,
        height: int,
        images: int,
        stream: int,
        operator: str,
        border: Optional[str],
        compat: str,
    ) -> None: ...
