"""OpenCV is the peer whose bytes are the promise: with ``grey="bt601"`` and the same border,
cuda_sobel gives exactly the bytes of

    cv2.imread → cvtColor(BGR2GRAY) → Sobel(CV_32F, 1, 0) and Sobel(CV_32F, 0, 1) → magnitude → convertScaleAbs

and exactly ``cv2.Sobel``'s gradients, for ksize 1, 3, 5 and 7 and each border both have, on real photos
(tests/data/photos), on random images of awkward sizes (narrower and shorter than the filter), and from the
command line. The grey conversion is compared with cv2's over all 2^24 colours. Each comparison is shown to
fail where the arithmetic differs (the report's grey, another border), so a pass means something.

Skips without opencv-python-headless, unless CUDA_SOBEL_REQUIRE_OPENCV is set (CI installs it and sets it).
"""

import glob
import os
import subprocess

import numpy as np
import pytest

if os.environ.get("CUDA_SOBEL_REQUIRE_OPENCV"):
    import cv2
else:
    cv2 = pytest.importorskip("cv2", reason="opencv-python-headless is not installed (pip install opencv-python-headless)")

import cuda_sobel as cs  # noqa: E402

from test_dask import cli  # noqa: E402  (the binary to compare with, found as the Dask tests find it)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PHOTOS = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "photos", "*.png")))
KSIZES = [1, 3, 5, 7]
# cuda_sobel's names for the borders OpenCV's Sobel also has.
BORDERS = {"replicate": cv2.BORDER_REPLICATE, "zero": cv2.BORDER_CONSTANT, "reflect101": cv2.BORDER_REFLECT_101}


def opencv_gradients(bgr: np.ndarray, ksize: int, border: str):
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=ksize, borderType=BORDERS[border])
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=ksize, borderType=BORDERS[border])
    return gx, gy


def opencv_edges(bgr: np.ndarray, ksize: int, border: str) -> np.ndarray:
    gx, gy = opencv_gradients(bgr, ksize, border)
    return cv2.convertScaleAbs(cv2.magnitude(gx, gy))


def differing(a: np.ndarray, b: np.ndarray) -> int:
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.count_nonzero(a != b))


def test_the_photos_are_there():
    assert len(PHOTOS) == 4, PHOTOS


@pytest.mark.parametrize("ksize", KSIZES)
@pytest.mark.parametrize("border", list(BORDERS))
def test_edges_and_gradients_are_opencvs_on_real_photos(ksize, border):
    for path in PHOTOS:
        bgr = cv2.imread(path, cv2.IMREAD_COLOR)
        rgb = cs.read(path)
        assert np.array_equal(rgb, bgr[:, :, ::-1]), f"{path}: decoded differently"
        edges = cs.sobel(rgb, ksize=ksize, border=border, grey="bt601")
        assert differing(edges, opencv_edges(bgr, ksize, border)) == 0, f"{path} ksize {ksize} {border}"
        # OpenCV's own channel order gives the same bytes.
        assert np.array_equal(cs.sobel(bgr, ksize=ksize, border=border, grey="bt601", bgr=True), edges)
        gx, gy = cs.gradients(rgb, ksize=ksize, border=border, grey="bt601")
        cx, cy = opencv_gradients(bgr, ksize, border)
        assert gx.dtype == (np.int32 if ksize == 7 else np.int16)
        assert differing(gx.astype(np.float32), cx) == 0 and differing(gy.astype(np.float32), cy) == 0
        if ksize <= 5:  # OpenCV's own 16-bit gradients where they fit
            g16 = cv2.Sobel(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), cv2.CV_16S, 1, 0, ksize=ksize,
                            borderType=BORDERS[border])
            assert np.array_equal(gx, g16)
        fx, fy = cs.gradients(rgb, ksize=ksize, border=border, grey="bt601", dtype="float32")
        assert np.array_equal(fx, cx) and np.array_equal(fy, cy)


@pytest.mark.parametrize("ksize", KSIZES)
def test_opencvs_canny_directions_and_l1(ksize):
    """L1 is Canny's default norm: min(255, |Gx| + |Gy|) is convertScaleAbs(|Gx| + |Gy|)."""
    for path in PHOTOS:
        bgr = cv2.imread(path, cv2.IMREAD_COLOR)
        gx, gy = opencv_gradients(bgr, ksize, "reflect101")
        l1 = cs.sobel(bgr, ksize=ksize, border="reflect101", grey="bt601", bgr=True, norm="l1")
        assert differing(l1, cv2.convertScaleAbs(np.abs(gx) + np.abs(gy))) == 0


@pytest.mark.parametrize("ksize", KSIZES)
def test_awkward_sizes_match_opencv(ksize):
    """Images narrower and shorter than the filter: the borders reach across the whole image."""
    rng = np.random.default_rng(ksize)
    for h, w in [(1, 1), (1, 7), (7, 1), (2, 9), (9, 2), (3, 3), (5, 6), (13, 11)]:
        bgr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        for border in BORDERS:
            ours = cs.sobel(bgr, ksize=ksize, border=border, grey="bt601", bgr=True)
            assert differing(ours, opencv_edges(bgr, ksize, border)) == 0, f"{h}x{w} ksize {ksize} {border}"


def test_the_command_line_writes_opencvs_bytes(tmp_path):
    exe = cli()
    for ksize in KSIZES:
        for path in PHOTOS[:2]:
            out = tmp_path / f"k{ksize}.png"
            subprocess.run([exe, path, "--out", str(out), "--grey", "bt601", "--border", "reflect101",
                            "--ksize", str(ksize)], check=True, capture_output=True)
            bgr = cv2.imread(path, cv2.IMREAD_COLOR)
            ours = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
            assert differing(ours, opencv_edges(bgr, ksize, "reflect101")) == 0, f"{path} ksize {ksize}"
            npy = tmp_path / f"k{ksize}.npy"
            subprocess.run([exe, path, "--out", str(npy), "--output", "gy", "--grey", "bt601", "--border",
                            "reflect101", "--ksize", str(ksize)], check=True, capture_output=True)
            assert differing(np.load(npy).astype(np.float32), opencv_gradients(bgr, ksize, "reflect101")[1]) == 0


def test_bt601_is_cvtcolor_over_every_colour():
    """All 2^24 colours, in four slices. With ksize 1 and a zero border, Gx at column 3j of a row
    [0, c, 0, 0, c', 0, …] is grey(c) − grey(0) = grey(c): the package's own grey, read through its gradients."""
    codes = np.arange(1 << 24, dtype=np.uint32)
    for part in np.split(codes, 4):
        rgb = np.stack([(part >> 16) & 255, (part >> 8) & 255, part & 255], axis=-1).astype(np.uint8)
        rgb = rgb.reshape(1024, 4096, 3)
        theirs = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        spaced = np.zeros((1024, 4096 * 3, 3), np.uint8)
        spaced[:, 1::3] = rgb
        gx, _ = cs.gradients(spaced, ksize=1, border="zero", grey="bt601")
        ours = gx[:, 0::3]
        assert differing(ours.astype(np.uint8), theirs) == 0
        assert ours.min() >= 0 and ours.max() <= 255


def test_these_comparisons_can_fail():
    """The same comparisons, with arithmetic that really differs, find differences: the report's grey
    (0.30/0.59/0.11), another border, another ksize, and the textbook BT.601 fixed point (>> 14)."""
    bgr = cv2.imread(PHOTOS[0], cv2.IMREAD_COLOR)
    theirs = opencv_edges(bgr, 5, "reflect101")
    assert differing(cs.sobel(bgr, ksize=5, border="reflect101", bgr=True), theirs) > 0
    assert differing(cs.sobel(bgr, ksize=5, border="replicate", grey="bt601", bgr=True), theirs) > 0
    assert differing(cs.sobel(bgr, ksize=3, border="reflect101", grey="bt601", bgr=True), theirs) > 0
    gx, _ = cs.gradients(bgr, ksize=5, border="zero", grey="bt601", bgr=True)
    assert differing(gx.astype(np.float32), opencv_gradients(bgr, 5, "reflect101")[0]) > 0
    # The textbook formula differs from cv2's cvtColor on some colours (this is why bt601 is not it).
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (512, 512, 3), dtype=np.uint8).astype(np.int64)
    textbook = (rgb[..., 0] * 4899 + rgb[..., 1] * 9617 + rgb[..., 2] * 1868 + (1 << 13)) >> 14
    assert differing(textbook.astype(np.uint8), cv2.cvtColor(rgb.astype(np.uint8), cv2.COLOR_RGB2GRAY)) > 0


# ---------------------------------------------------------------------------------------------------
# Canny: cv2.Canny(cvtColor(image), low, high, apertureSize, L2gradient) is the promise.

CANNY_THRESHOLDS = [(50, 150), (150, 50), (10.5, 30.25), (0, 0), (-5, 40), (400, 9000)]


def opencv_canny(bgr: np.ndarray, low, high, ksize: int, norm: str) -> np.ndarray:
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY) if bgr.ndim == 3 else bgr
    return cv2.Canny(grey, low, high, apertureSize=ksize, L2gradient=norm == "l2")


@pytest.mark.parametrize("ksize", [3, 5, 7])
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_canny_is_opencvs_on_real_photos(ksize, norm):
    for path in PHOTOS:
        bgr = cv2.imread(path, cv2.IMREAD_COLOR)
        for low, high in CANNY_THRESHOLDS[:3] + ([(800, 2400)] if ksize == 7 else []):
            ours = cs.canny(bgr, low, high, ksize=ksize, norm=norm, grey="bt601", bgr=True)
            theirs = opencv_canny(bgr, low, high, ksize, norm)
            assert differing(ours, theirs) == 0, f"{os.path.basename(path)} ksize {ksize} {norm} {low}/{high}"
            assert set(np.unique(ours)) <= {0, 255}


@pytest.mark.parametrize("ksize", [3, 5, 7])
def test_canny_on_awkward_sizes_and_every_threshold_pair(ksize):
    rng = np.random.default_rng(ksize)
    for h, w in [(1, 1), (1, 7), (7, 1), (2, 9), (9, 2), (3, 3), (5, 6), (13, 11), (40, 57)]:
        for smooth in (False, True):
            grey = rng.integers(0, 256, (h, w), dtype=np.uint8)
            if smooth:
                grey = cv2.GaussianBlur(grey, (5, 5), 0)
            for low, high in CANNY_THRESHOLDS:
                for norm in ("l1", "l2"):
                    scale = 16 if ksize == 7 else 1
                    ours = cs.canny(grey, low * scale, high * scale, ksize=ksize, norm=norm)
                    theirs = opencv_canny(grey, low * scale, high * scale, ksize, norm)
                    assert differing(ours, theirs) == 0, f"{h}x{w} ksize {ksize} {norm} {low}/{high}"


def spiral(n: int) -> np.ndarray:
    """A one-pixel-wide white spiral on black, n×n: one chain of edge pixels that winds through the whole image."""
    img = np.zeros((n, n), np.uint8)
    top, left, bottom, right = 1, 1, n - 2, n - 2
    while top <= bottom and left <= right:
        img[top, left:right + 1] = 255
        img[top:bottom + 1, right] = 255
        img[bottom, left:right + 1] = 255
        img[top + 2:bottom + 1, left] = 255
        top, left, bottom, right = top + 2, left + 2, bottom - 2, right - 2
        if top <= bottom:
            img[top - 1, left - 1] = 255  # joins this turn to the next
    return img


def test_canny_on_adversarial_images():
    """A spiral (one long chain), a weak ramp over the whole image with one strong seed, a checkerboard."""
    n = 203
    ramp = np.tile((np.arange(n) // 3).astype(np.uint8), (n, 1))
    ramp[n // 2, n // 2] = 255
    checker = ((np.add.outer(np.arange(n), np.arange(n)) % 2) * 255).astype(np.uint8)
    for name, grey in [("spiral", spiral(n)), ("ramp", ramp), ("checker", checker)]:
        for ksize in (3, 5, 7):
            for low, high in [(1, 300), (20, 2000), (100, 100)]:
                ours = cs.canny(grey, low, high, ksize=ksize)
                assert differing(ours, opencv_canny(grey, low, high, ksize, "l1")) == 0, f"{name} ksize {ksize}"
    # Hysteresis reaches along the weak ramp from the seed: 8 strong pixels alone, 208 with the weak ones joined.
    assert np.count_nonzero(cs.canny(ramp, 300, 300)) == 8 and np.count_nonzero(cs.canny(ramp, 1, 300)) == 208


def test_canny_comparisons_can_fail_and_errors_are_the_command_lines():
    bgr = cv2.imread(PHOTOS[0], cv2.IMREAD_COLOR)
    theirs = opencv_canny(bgr, 50, 150, 3, "l1")
    assert differing(cs.canny(bgr, 50, 150, grey="bt601", bgr=True), theirs) == 0
    assert differing(cs.canny(bgr, 50, 150, bgr=True), theirs) > 0  # the report's grey
    assert differing(cs.canny(bgr, 50, 150, grey="bt601", bgr=True, norm="l2"), theirs) > 0
    assert differing(cs.canny(bgr, 50, 150, grey="bt601", bgr=True, border="zero"), theirs) > 0
    assert differing(cs.canny(bgr, 50, 160, grey="bt601", bgr=True), theirs) > 0
    for low, high, words in [(float("nan"), 1, "low threshold must be a finite number"),
                             (1, float("inf"), "high threshold must be a finite number"),
                             ("abc", 1, "low threshold must be a number"), (1, None, "high threshold must be a number")]:
        with pytest.raises(ValueError, match=words):
            cs.canny(bgr, low, high)
    with pytest.raises(ValueError, match="3, 5 or 7"):
        cs.canny(bgr, 1, 2, ksize=1)


def test_the_command_line_writes_cv2_cannys_bytes(tmp_path):
    exe = cli()
    for ksize, norm, (low, high) in [(3, "l1", (50, 150)), (5, "l2", (100, 300)), (7, "l1", (800, 2400))]:
        for path in PHOTOS[:2]:
            out = tmp_path / f"canny{ksize}.png"
            subprocess.run([exe, path, "--output", "canny", "--low", str(low), "--high", str(high), "--ksize",
                            str(ksize), "--norm", norm, "--grey", "bt601", "--variant", "cpu-rayon", "--out", str(out)],
                           check=True, capture_output=True)
            bgr = cv2.imread(path, cv2.IMREAD_COLOR)
            ours = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
            assert differing(ours, opencv_canny(bgr, low, high, ksize, norm)) == 0, f"{path} ksize {ksize} {norm}"
