"""An independent NumPy statement of the arithmetic in docs/semantics.md (not a call into the package): what
every path of the package must produce, byte for byte (the direction: within the stated 3e-7 rad of
NumPy's own arctan2)."""

import numpy as np

# OpenCV's getDerivKernels(1, 0, ksize): (smoothing, derivative), and Scharr's.
TAPS = {
    ("sobel", 1): ([0, 1, 0], [-1, 0, 1]),
    ("sobel", 3): ([1, 2, 1], [-1, 0, 1]),
    ("sobel", 5): ([1, 4, 6, 4, 1], [-1, -2, 0, 2, 1]),
    ("sobel", 7): ([1, 6, 15, 20, 15, 6, 1], [-1, -4, -5, 0, 5, 4, 1]),
    ("scharr", 3): ([3, 10, 3], [-1, 0, 1]),
}
PAD = {"replicate": "edge", "reflect101": "reflect"}


def grey(rgb: np.ndarray, compat: str = "exact", weights: str = "percent") -> np.ndarray:
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    if compat == "report":
        # The report's C expression, in doubles, left to right, truncated.
        return np.trunc(0.30 * r.astype(np.float64) + 0.59 * g + 0.11 * b).astype(np.int64)
    if weights == "bt601":
        return (9798 * r + 19235 * g + 3735 * b + (1 << 14)) >> 15
    return (30 * r + 59 * g + 11 * b + 50) // 100


def gradients(rgb: np.ndarray, operator: str = "sobel", border: str = "replicate", compat: str = "exact",
              ksize: int = 3, weights: str = "percent"):
    y = grey(rgb, compat, weights)
    smooth, deriv = (np.array(t) for t in TAPS[(operator, ksize)])
    r = len(smooth) // 2
    if border == "zero":
        p = np.pad(y, r, mode="constant")
    else:
        p = np.pad(y, r, mode=PAD[border])
    h, w = y.shape
    kx, ky = np.outer(smooth, deriv), np.outer(deriv, smooth)
    n = 2 * r + 1
    gx = sum(kx[i, j] * p[i : i + h, j : j + w] for i in range(n) for j in range(n))
    gy = sum(ky[i, j] * p[i : i + h, j : j + w] for i in range(n) for j in range(n))
    return gx, gy


def edges(gx: np.ndarray, gy: np.ndarray, compat: str = "exact", norm: str = "l2") -> np.ndarray:
    if compat == "report":
        h, v = np.abs(gx) & 255, np.abs(gy) & 255
        return (np.floor(np.sqrt((h * h + v * v).astype(np.float64))).astype(np.int64) & 255).astype(np.uint8)
    if norm == "l1":
        return np.minimum(np.abs(gx) + np.abs(gy), 255).astype(np.uint8)
    m = np.floor(np.sqrt((gx * gx + gy * gy).astype(np.float64)) + 0.5)
    return np.minimum(m, 255).astype(np.uint8)


def sobel(rgb: np.ndarray, operator: str = "sobel", border: str = "replicate", compat: str = "exact",
          ksize: int = 3, weights: str = "percent", norm: str = "l2") -> np.ndarray:
    """Edges of one H×W×3 RGB image."""
    gx, gy = gradients(rgb, operator, border, compat, ksize, weights)
    return edges(gx, gy, compat, norm)


def direction4(gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """OpenCV Canny's quantised direction: tan 22.5° as 13573 / 2^15, in 64-bit integers."""
    x, y = np.abs(gx).astype(np.int64), np.abs(gy).astype(np.int64) << 15
    tg22x = x * 13573
    diagonal = np.where((gx.astype(np.int64) ^ gy.astype(np.int64)) < 0, 3, 1)
    return np.where(y < tg22x, 0, np.where(y > tg22x + (x << 16), 2, diagonal)).astype(np.uint8)


def to_8bit(v: np.ndarray) -> np.ndarray:
    """The command line's rounding of 16-bit channels: round(v·255/65535)."""
    return ((v.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)


def named_kernel(spec: str):
    """(matrix, divisor, gradient) of a named kernel of the filter (docs/filter.md): box:D, gaussian:D (the binomial
    row's outer product), scharr:D (the 3×3 Scharr dilated by (D − 1)/2), sobel:K (OpenCV's Gx)."""
    name, d = spec.split(":")
    d = int(d)
    if name == "box":
        return np.ones((d, d), np.int64), d * d, False
    if name == "gaussian":
        row = np.array([1], np.int64)
        for _ in range(d - 1):
            row = np.convolve(row, [1, 1])
        return np.outer(row, row), 4 ** (d - 1), False
    if name == "scharr":
        m, r = np.zeros((d, d), np.int64), d // 2
        for row, w in ((0, 3), (r, 10), (2 * r, 3)):
            m[row, 0], m[row, 2 * r] = -w, w
        return m, None, True
    smooth, deriv = TAPS[("sobel", d)]
    return np.outer(smooth, deriv), None, True


def correlate(plane: np.ndarray, k: np.ndarray, border: str = "replicate") -> np.ndarray:
    """Σᵢ Σⱼ K[i][j] · p(x + j − r, y + i − r) in 64-bit integers, pixels outside from the border rule."""
    r = k.shape[0] // 2
    p = np.pad(plane.astype(np.int64), r, mode="constant" if border == "zero" else PAD[border])
    h, w = plane.shape
    return sum(int(k[i, j]) * p[i : i + h, j : j + w] for i in range(k.shape[0]) for j in range(k.shape[1]))


def filter_plane(plane: np.ndarray, k: np.ndarray, divisor, gradient: bool, border: str = "replicate") -> np.ndarray:
    """The filter of one 8-bit plane: a smoothing kernel's sum divided by its divisor, rounded half up and clamped;
    a gradient kernel's magnitude of K and Kᵀ, as the edges."""
    if gradient:
        return edges(correlate(plane, k, border), correlate(plane, k.T, border))
    d = int(divisor if divisor is not None else k.sum())
    return np.clip((correlate(plane, k, border) + d // 2) // d, 0, 255).astype(np.uint8)


def filtered(rgb: np.ndarray, spec: str, rgb_planes: bool = False, border: str = "replicate") -> np.ndarray:
    """`cuda_sobel filter`'s bytes for one H×W×3 image: its grey filtered, or each channel (H×W×3)."""
    k, d, g = named_kernel(spec)
    if not rgb_planes:
        return filter_plane(grey(rgb), k, d, g, border)
    return np.stack([filter_plane(rgb[..., c], k, d, g, border) for c in range(3)], axis=-1)
