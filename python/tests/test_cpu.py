"""The package on host arrays (what CI runs): byte-identical to the NumPy reference and to cpu-scalar for
every filter, on literal images, random shapes and strides (hypothesis), batches, out=, and errors."""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cuda_sobel as cs
import reference

FILTERS = [
    (op, border, compat)
    for op in cs.OPERATORS
    for compat in cs.COMPATS
    for border in (cs.BORDERS if compat == "exact" else ("zero",))
]
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def as_rgb(image: np.ndarray, bgr: bool = False) -> np.ndarray:
    """The RGB image the package sees: grey repeated, alpha dropped, BGR reversed."""
    if image.ndim == 2:
        image = image[:, :, None]
    if image.shape[-1] == 1:
        return np.repeat(image, 3, axis=-1)
    rgb = image[..., :3]
    return rgb[..., ::-1] if bgr else rgb


def test_a_literal_image():
    # One bright pixel in the middle of a 3×3 black image: the Sobel responses around it, by hand.
    rgb = np.zeros((3, 3, 3), np.uint8)
    rgb[1, 1] = 255
    edges = cs.sobel(rgb, border="zero")
    # Gx and Gy at the corners are ±255 each: √(2·255²) = 360.6 → saturated 255; at the edges' middles ±510.
    assert edges.tolist() == [[255, 255, 255], [255, 0, 255], [255, 255, 255]]
    gx, gy = cs.gradients(rgb, border="zero")
    assert gx.tolist() == [[255, 0, -255], [510, 0, -510], [255, 0, -255]]
    assert gy.tolist() == [[255, 510, 255], [0, 0, 0], [-255, -510, -255]]


@pytest.mark.parametrize("op,border,compat", FILTERS)
def test_every_filter_matches_the_reference_and_cpu_scalar(op, border, compat):
    rng = np.random.default_rng(7)
    rgb = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    expected = reference.sobel(rgb, op, border, compat)
    for variant in ("auto", "cpu-rayon", "cpu-scalar"):
        got = cs.sobel(rgb, operator=op, border=border, compat=compat, variant=variant)
        assert got.dtype == np.uint8 and got.shape == (37, 53)
        assert np.array_equal(got, expected), variant
    gx, gy = cs.gradients(rgb, operator=op, border=border, compat=compat)
    rgx, rgy = reference.gradients(rgb, op, border, compat)
    assert np.array_equal(gx, rgx) and np.array_equal(gy, rgy) and gx.dtype == np.int16


def test_a_real_image_matches_the_command_lines_golden_output():
    png = pytest.importorskip("PIL.Image")
    rgb = np.asarray(png.open(os.path.join(ROOT, "imgs_in", "512x512.png")).convert("RGB"))
    golden = np.asarray(png.open(os.path.join(ROOT, "tests", "data", "512x512_sobel.png")))
    assert np.array_equal(cs.sobel(rgb), golden)


shapes = st.tuples(st.integers(1, 40), st.integers(1, 40))
layouts = st.sampled_from(["grey", "grey1", "rgb", "rgba"])


@settings(max_examples=150, deadline=None)
@given(
    shape=shapes,
    layout=layouts,
    step=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    fortran=st.booleans(),
    bgr=st.booleans(),
    filt=st.sampled_from(FILTERS),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_shapes_strides_and_layouts(shape, layout, step, fortran, bgr, filt, seed):
    h, w = shape
    rng = np.random.default_rng(seed)
    channels = {"grey": (), "grey1": (1,), "rgb": (3,), "rgba": (4,)}[layout]
    base = rng.integers(0, 256, (h * step[0], w * step[1]) + channels, dtype=np.uint8)
    if fortran:
        base = np.asfortranarray(base)
    image = base[:: step[0], :: step[1]]  # strided views, C or Fortran underneath
    op, border, compat = filt
    got = cs.sobel(image, operator=op, border=border, compat=compat, bgr=bgr)
    assert np.array_equal(got, reference.sobel(as_rgb(image, bgr), op, border, compat))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 5), shape=shapes, channels=st.sampled_from([1, 3, 4]), seed=st.integers(0, 2**32 - 1))
def test_a_batch_is_each_image_on_its_own(n, shape, channels, seed):
    rng = np.random.default_rng(seed)
    batch = rng.integers(0, 256, (n,) + shape + (channels,), dtype=np.uint8)
    got = cs.sobel(batch, border="reflect101")
    assert got.shape == (n,) + shape
    for i in range(n):
        assert np.array_equal(got[i], reference.sobel(as_rgb(batch[i]), border="reflect101"))


def test_out_is_written_in_place_contiguous_or_not():
    rgb = np.random.default_rng(3).integers(0, 256, (20, 30, 3), dtype=np.uint8)
    out = np.zeros((20, 30), np.uint8)
    assert cs.sobel(rgb, out=out) is out and np.array_equal(out, reference.sobel(rgb))
    strided = np.zeros((20, 60), np.uint8)[:, ::2]
    assert cs.sobel(rgb, out=strided) is strided and np.array_equal(strided, reference.sobel(rgb))


def test_an_engine_keeps_working_and_empty_images_are_empty():
    engine = cs.Engine("cpu")
    assert engine.device == "cpu" and "cpu-rayon" in repr(engine)
    rgb = np.random.default_rng(4).integers(0, 256, (9, 11, 3), dtype=np.uint8)
    for _ in range(3):
        assert np.array_equal(engine.sobel(rgb), reference.sobel(rgb))
    assert cs.sobel(np.zeros((0, 5, 3), np.uint8)).shape == (0, 5)


@pytest.mark.parametrize(
    "call,error,words",
    [
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.float32)), TypeError, "dtype float32, expected uint8"),
        (lambda: cs.sobel(np.zeros((4, 4, 2), np.uint8)), ValueError, "shape (4, 4, 2)"),
        (lambda: cs.sobel(np.zeros((2, 4, 4, 4, 3), np.uint8)), ValueError, "expected H×W"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), border="wrap"), ValueError, "invalid border 'wrap'"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), operator="prewitt"), ValueError, "invalid operator"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), compat="c"), ValueError, "invalid compat"),
        (
            lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), compat="report", border="replicate"),
            ValueError,
            "compat 'report' uses the report's zero border",
        ),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), variant="gpu-fast"), ValueError, "invalid variant"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), variant="gpu-strip"), ValueError, "needs a GPU"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), device="tpu"), ValueError, "invalid device 'tpu'"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), out=np.zeros((4, 5), np.uint8)), ValueError, "out: shape"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), out=np.zeros((4, 4), np.int16)), TypeError, "out: dtype"),
        (lambda: cs.sobel("a string"), TypeError, "expected a NumPy array"),
    ],
)
def test_errors_are_exceptions_with_the_command_lines_words(call, error, words):
    with pytest.raises(error, match=None) as caught:
        call()
    assert words in str(caught.value)


@pytest.mark.skipif(cs.device_count() > 0, reason="a GPU is visible: tests/test_gpu.py covers device='cuda'")
def test_without_a_gpu_device_cuda_says_why():
    with pytest.raises(RuntimeError, match="cannot use CUDA device 0"):
        cs.sobel(np.zeros((4, 4, 3), np.uint8), device="cuda")


def test_pytorch_cpu_tensors_when_installed():
    torch = pytest.importorskip("torch")
    rgb = np.random.default_rng(5).integers(0, 256, (2, 17, 19, 3), dtype=np.uint8)
    got = cs.sobel(torch.from_numpy(rgb))
    assert isinstance(got, torch.Tensor) and got.shape == (2, 17, 19)
    assert np.array_equal(got.numpy()[1], reference.sobel(rgb[1]))
