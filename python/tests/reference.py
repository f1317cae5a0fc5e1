"""An independent NumPy statement of the arithmetic in the README's "Exact semantics" (not a call into the
package): what every path of the package must produce, byte for byte."""

import numpy as np

KERNELS = {
    "sobel": (np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]), np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]])),
    "scharr": (np.array([[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]]), np.array([[-3, -10, -3], [0, 0, 0], [3, 10, 3]])),
}
PAD = {"replicate": "edge", "reflect101": "reflect"}


def grey(rgb: np.ndarray, compat: str) -> np.ndarray:
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    if compat == "exact":
        return (30 * r + 59 * g + 11 * b + 50) // 100
    # The report's C expression, in doubles, left to right, truncated.
    return np.trunc(0.30 * r.astype(np.float64) + 0.59 * g + 0.11 * b).astype(np.int64)


def gradients(rgb: np.ndarray, operator: str = "sobel", border: str = "replicate", compat: str = "exact"):
    y = grey(rgb, compat)
    if border == "zero":
        p = np.pad(y, 1, mode="constant")
    else:
        p = np.pad(y, 1, mode=PAD[border])
    h, w = y.shape
    kx, ky = KERNELS[operator]
    gx = sum(kx[i, j] * p[i : i + h, j : j + w] for i in range(3) for j in range(3))
    gy = sum(ky[i, j] * p[i : i + h, j : j + w] for i in range(3) for j in range(3))
    return gx, gy


def sobel(rgb: np.ndarray, operator: str = "sobel", border: str = "replicate", compat: str = "exact") -> np.ndarray:
    """Edges of one H×W×3 RGB image."""
    gx, gy = gradients(rgb, operator, border, compat)
    if compat == "exact":
        m = np.floor(np.sqrt((gx * gx + gy * gy).astype(np.float64)) + 0.5)
        return np.minimum(m, 255).astype(np.uint8)
    h, v = np.abs(gx) & 255, np.abs(gy) & 255
    return (np.floor(np.sqrt((h * h + v * v).astype(np.float64))).astype(np.int64) & 255).astype(np.uint8)
