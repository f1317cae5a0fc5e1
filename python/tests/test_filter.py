"""`cuda_sobel.filter` on host images (what CI runs): a literal image worked by hand, the NumPy reference's bytes
and the command line's (`cuda_sobel filter`) for every named kernel family, border and channel mode, random sizes
(smaller than the kernel included), batches, lists, matrices, out=, and errors in the command line's words. The GPU
paths are in test_gpu.py."""

import os
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import cuda_sobel as cs
import reference

SPECS = ["box:1", "box:3", "box:15", "gaussian:3", "gaussian:7", "gaussian:15", "scharr:3", "scharr:9",
         "sobel:1", "sobel:3", "sobel:5", "sobel:7"]
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_a_literal_image_worked_by_hand():
    # One grey pixel of 95 among zeros; gaussian:3 is [1 2 1; 2 4 2; 1 2 1] / 16, sums rounded half up:
    # centre (4·95 + 8) // 16 = 24, beside it (2·95 + 8) // 16 = 12, the corners (95 + 8) // 16 = 6.
    img = np.zeros((3, 3, 3), np.uint8)
    img[1, 1] = 95
    want = np.array([[6, 12, 6], [12, 24, 12], [6, 12, 6]], np.uint8)
    for variant in ("auto", "cpu-scalar", "cpu-rayon"):
        assert np.array_equal(cs.filter(img, "gaussian:3", variant=variant), want)
    # box:3: with replicate or zero each window holds the 95 once, (95 + 4) // 9 = 11; reflect101 mirrors it into
    # the border, twice beside it ((190 + 4) // 9 = 21) and four times at the corners ((380 + 4) // 9 = 42).
    for border in ("replicate", "zero"):
        assert np.array_equal(cs.filter(img, "box:3", border=border), np.full((3, 3), 11, np.uint8))
    mirrored = np.array([[42, 21, 42], [21, 11, 21], [42, 21, 42]], np.uint8)
    assert np.array_equal(cs.filter(img, "box:3", border="reflect101"), mirrored)
    # Per channel: a red pixel blurs the red plane alone.
    red = np.zeros((3, 3, 3), np.uint8)
    red[1, 1, 0] = 95
    got = cs.filter(red, "gaussian:3", rgb=True)
    assert got.shape == (3, 3, 3) and np.array_equal(got[..., 0], want) and not got[..., 1:].any()


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("border", ["replicate", "zero", "reflect101"])
def test_every_kernel_family_matches_the_reference(spec, border):
    rgb = np.random.default_rng(len(spec) + len(border)).integers(0, 256, (23, 31, 3), dtype=np.uint8)
    for planes in (False, True):
        want = reference.filtered(rgb, spec, planes, border)
        for variant in ("cpu-scalar", "cpu-rayon"):
            got = cs.filter(rgb, spec, rgb=planes, border=border, variant=variant)
            assert got.dtype == np.uint8 and np.array_equal(got, want), (spec, border, planes, variant)


def cli():
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    for exe in (os.environ.get("CUDA_SOBEL_BIN"), os.path.join(target, "release", "cuda_sobel"), shutil.which("cuda_sobel")):
        if exe and os.path.exists(exe):
            return exe
    pytest.skip(f"no cuda_sobel binary in {target}/release or on PATH (cargo build --release, or set CUDA_SOBEL_BIN)")


@pytest.mark.parametrize("spec,planes,border", [("gaussian:5", False, "replicate"), ("box:7", True, "zero"),
                                                ("scharr:5", False, "reflect101"), ("sobel:3", True, "replicate")])
def test_the_command_lines_bytes(tmp_path, spec, planes, border):
    rgb = np.random.default_rng(3).integers(0, 256, (29, 41, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(tmp_path / "in.png")
    args = [cli(), "filter", str(tmp_path / "in.png"), "--kernel", spec, "--border", border,
            "--variant", "cpu-scalar", "--out", str(tmp_path / "out.png")] + (["--rgb"] if planes else [])
    subprocess.run(args, check=True, capture_output=True)
    want = np.asarray(Image.open(tmp_path / "out.png"))
    assert np.array_equal(cs.filter(rgb, spec, rgb=planes, border=border), want)
    assert np.array_equal(cs.filter(str(tmp_path / "in.png"), spec, rgb=planes, border=border), want)


@settings(max_examples=60, deadline=None)
@given(h=st.integers(1, 20), w=st.integers(1, 20), spec=st.sampled_from(SPECS), planes=st.booleans(),
       border=st.sampled_from(["replicate", "zero", "reflect101"]), seed=st.integers(0, 2**32 - 1))
def test_random_sizes_smaller_than_the_kernel_included(h, w, spec, planes, border, seed):
    rgb = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    want = reference.filtered(rgb, spec, planes, border)
    assert np.array_equal(cs.filter(rgb, spec, rgb=planes, border=border), want)
    assert np.array_equal(cs.filter(rgb, spec, rgb=planes, border=border, variant="cpu-scalar"), want)


def test_batches_lists_layouts_and_out():
    rng = np.random.default_rng(9)
    batch = rng.integers(0, 256, (3, 17, 22, 3), dtype=np.uint8)
    got = cs.filter(batch, "gaussian:5", rgb=True)
    assert got.shape == (3, 17, 22, 3)
    for i in range(3):
        assert np.array_equal(got[i], reference.filtered(batch[i], "gaussian:5", True))
    one, other = batch[0], rng.integers(0, 256, (9, 5, 3), dtype=np.uint8)
    listed = cs.filter([one, other], "box:3")
    assert [a.shape for a in listed] == [(17, 22), (9, 5)]
    assert np.array_equal(listed[1], reference.filtered(other, "box:3"))
    # Grey, BGR, RGBA, 16 bits and strided views are converted as for the edges.
    grey = rng.integers(0, 256, (17, 22), dtype=np.uint8)
    assert np.array_equal(cs.filter(grey, "box:5"), reference.filtered(np.repeat(grey[..., None], 3, -1), "box:5"))
    bgra = np.concatenate([one[..., ::-1], np.full((17, 22, 1), 7, np.uint8)], axis=-1)
    assert np.array_equal(cs.filter(bgra, "sobel:5", bgr=True), reference.filtered(one, "sobel:5"))
    wide = (one.astype(np.uint16) * 257)[:, ::2]
    assert np.array_equal(cs.filter(wide, "box:3"), reference.filtered(one[:, ::2], "box:3"))
    out = np.zeros((17, 22), np.uint8)
    assert cs.filter(one, "box:3", out=out) is out and np.array_equal(out, reference.filtered(one, "box:3"))


def test_a_matrix_or_a_matrix_file_is_a_kernel(tmp_path):
    rgb = np.random.default_rng(4).integers(0, 256, (19, 26, 3), dtype=np.uint8)
    binomial = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    assert np.array_equal(cs.filter(rgb, binomial), cs.filter(rgb, "gaussian:3"))
    laplacian = np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]])
    got = cs.filter(rgb, laplacian, divisor=1)
    assert np.array_equal(got, reference.filter_plane(reference.grey(rgb), laplacian, 1, False))
    sobel = np.outer([1, 2, 1], [-1, 0, 1])
    assert np.array_equal(cs.filter(rgb, sobel, gradient=True), cs.filter(rgb, "sobel:3"))
    (tmp_path / "k.txt").write_text("# a sharpen\n0 -1 0\n-1 5 -1\n0 -1 0\n")
    assert np.array_equal(cs.filter(rgb, tmp_path / "k.txt"), cs.filter(rgb, [[0, -1, 0], [-1, 5, -1], [0, -1, 0]]))


@pytest.mark.parametrize(
    "call,error,words",
    [
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), "gaussian:4"), ValueError, "gaussian:4: the size must be odd"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), "blur:3"), ValueError, "not a kernel"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), [[1, 1], [1, 1]]), ValueError, "odd"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), [[1, -1, 0]]), ValueError, "divisor"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), "box:3", divisor=2), ValueError, "divisor and gradient"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), "box:3", border="wrap"), ValueError, "invalid border"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), "box:3", variant="gpu-fast"), ValueError, "invalid variant"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), "box:3", variant="gpu-strip"), ValueError, "runs on a GPU"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), [[0, 1, 0], [1, -4, 1], [0, 1, 0]], divisor=1,
                           variant="gpu-separable"),
         ValueError, "not a column ⊗ row product"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.float32), "box:3"), TypeError, "dtype float32"),
        (lambda: cs.filter(np.zeros((4, 4, 3), np.uint8), "box:3", out=np.zeros((4, 4, 3), np.uint8)), ValueError,
         "out: shape"),
    ],
)
def test_errors_are_exceptions_with_the_command_lines_words(call, error, words):
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value)


def test_pytorch_cpu_tensors_when_installed():
    torch = pytest.importorskip("torch")
    rgb = np.random.default_rng(5).integers(0, 256, (2, 17, 19, 3), dtype=np.uint8)
    got = cs.filter(torch.from_numpy(rgb), "gaussian:5")
    assert isinstance(got, torch.Tensor) and got.shape == (2, 17, 19)
    assert np.array_equal(got.numpy()[1], reference.filtered(rgb[1], "gaussian:5"))
