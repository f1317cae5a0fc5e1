"""The package on host images (what CI runs): byte-identical to the NumPy reference and to cpu-scalar for
every filter (operator × ksize × border × arithmetic), on literal images, random shapes, strides, layouts and
dtypes (hypothesis), batches, lists, PIL images, files, out=, the gradients and direction outputs, and errors."""

import os
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cuda_sobel as cs
import reference

FILTERS = [
    (op, k, border, compat)
    for (op, k) in reference.TAPS
    for compat in cs.COMPATS
    for border in (cs.BORDERS if compat == "exact" else ("zero",))
    if compat == "exact" or k == 3
]
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def as_rgb(image: np.ndarray, bgr: bool = False) -> np.ndarray:
    """The RGB image the package sees: grey repeated, alpha dropped, BGR reversed, 16 bits rounded."""
    if image.dtype == np.uint16:
        image = reference.to_8bit(image)
    if image.ndim == 2:
        image = image[:, :, None]
    if image.shape[-1] <= 2:
        return np.repeat(image[..., :1], 3, axis=-1)
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
    # ksize 1: no smoothing across, so only the four direct neighbours see the pixel.
    gx1, gy1 = cs.gradients(rgb, border="zero", ksize=1)
    assert gx1.tolist() == [[0, 0, 0], [255, 0, -255], [0, 0, 0]]
    assert gy1.tolist() == [[0, 255, 0], [0, 0, 0], [0, -255, 0]]
    # L1 of the corners: 255 + 255 saturates; Canny's directions: corners diagonal, sides straight, and the
    # centre, with no gradient at all, where OpenCV's arithmetic puts it (neither test passes: diagonal 1).
    assert cs.sobel(rgb, border="zero", norm="l1").tolist() == [[255] * 3, [255, 0, 255], [255] * 3]
    assert cs.direction(rgb, border="zero", quantize="canny").tolist() == [[1, 2, 3], [0, 1, 0], [3, 2, 1]]


@pytest.mark.parametrize("op,k,border,compat", FILTERS)
def test_every_filter_matches_the_reference_and_cpu_scalar(op, k, border, compat):
    rng = np.random.default_rng(7)
    rgb = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    expected = reference.sobel(rgb, op, border, compat, k)
    for variant in ("auto", "cpu-rayon", "cpu-scalar"):
        got = cs.sobel(rgb, operator=op, ksize=k, border=border, compat=compat, variant=variant)
        assert got.dtype == np.uint8 and got.shape == (37, 53)
        assert np.array_equal(got, expected), variant
    gx, gy = cs.gradients(rgb, operator=op, ksize=k, border=border, compat=compat)
    rgx, rgy = reference.gradients(rgb, op, border, compat, k)
    assert np.array_equal(gx, rgx) and np.array_equal(gy, rgy)
    assert gx.dtype == (np.int32 if k == 7 else np.int16)


@pytest.mark.parametrize("k", cs.KSIZES)
def test_grey_norm_and_direction_outputs(k):
    rng = np.random.default_rng(k)
    rgb = rng.integers(0, 256, (31, 29, 3), dtype=np.uint8)
    for weights in cs.GREYS:
        for norm in ("l2", "l1"):
            got = cs.sobel(rgb, ksize=k, grey=weights, norm=norm, border="reflect101")
            assert np.array_equal(got, reference.sobel(rgb, "sobel", "reflect101", "exact", k, weights, norm))
    gx, gy = reference.gradients(rgb, ksize=k)
    for dtype in ("int32", np.float32):
        x, y = cs.gradients(rgb, ksize=k, dtype=dtype)
        assert x.dtype == np.dtype(dtype) and np.array_equal(x, gx) and np.array_equal(y, gy)
    angle = cs.direction(rgb, ksize=k)
    assert angle.dtype == np.float32
    assert np.abs(angle.astype(np.float64) - np.arctan2(gy, gx)).max() <= 3e-7
    assert np.array_equal(cs.direction(rgb, ksize=k, quantize="canny"), reference.direction4(gx, gy))


shapes = st.tuples(st.integers(1, 40), st.integers(1, 40))
layouts = st.sampled_from(["grey", "grey1", "grey_alpha", "rgb", "rgba"])


@settings(max_examples=150, deadline=None)
@given(
    shape=shapes,
    layout=layouts,
    dtype=st.sampled_from([np.uint8, np.uint16]),
    step=st.tuples(st.integers(-3, 3).filter(bool), st.integers(-3, 3).filter(bool)),
    fortran=st.booleans(),
    bgr=st.booleans(),
    filt=st.sampled_from(FILTERS),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_shapes_strides_layouts_and_dtypes(shape, layout, dtype, step, fortran, bgr, filt, seed):
    h, w = shape
    rng = np.random.default_rng(seed)
    channels = {"grey": (), "grey1": (1,), "grey_alpha": (2,), "rgb": (3,), "rgba": (4,)}[layout]
    top = 65536 if dtype == np.uint16 else 256
    base = rng.integers(0, top, (h * abs(step[0]), w * abs(step[1])) + channels).astype(dtype)
    if fortran:
        base = np.asfortranarray(base)
    image = base[:: step[0], :: step[1]]  # strided views (negative steps too), C or Fortran underneath
    op, k, border, compat = filt
    got = cs.sobel(image, operator=op, ksize=k, border=border, compat=compat, bgr=bgr)
    assert np.array_equal(got, reference.sobel(as_rgb(image, bgr), op, border, compat, k))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 5), shape=shapes, channels=st.sampled_from([1, 2, 3, 4]), seed=st.integers(0, 2**32 - 1))
def test_a_batch_is_each_image_on_its_own(n, shape, channels, seed):
    rng = np.random.default_rng(seed)
    batch = rng.integers(0, 256, (n,) + shape + (channels,), dtype=np.uint8)
    got = cs.sobel(batch, border="reflect101", ksize=5)
    assert got.shape == (n,) + shape
    for i in range(n):
        assert np.array_equal(got[i], reference.sobel(as_rgb(batch[i]), border="reflect101", ksize=5))


def test_a_list_of_images_of_any_sizes_gives_a_list():
    rng = np.random.default_rng(11)
    images = [rng.integers(0, 256, s, dtype=np.uint8) for s in [(5, 7, 3), (12, 4), (9, 9, 4)]]
    got = cs.sobel(images)
    assert isinstance(got, list) and [g.shape for g in got] == [(5, 7), (12, 4), (9, 9)]
    for g, image in zip(got, images):
        assert np.array_equal(g, reference.sobel(as_rgb(image)))
    pairs = cs.gradients(tuple(images), ksize=7)
    assert len(pairs) == 3 and pairs[1][0].dtype == np.int32
    with pytest.raises(ValueError, match="out: not with a list"):
        cs.sobel(images, out=np.zeros((5, 7), np.uint8))


def test_pil_images_of_every_mode_and_buffers():
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(12)
    rgba = rng.integers(0, 256, (21, 17, 4), dtype=np.uint8)
    pil = Image.fromarray(rgba, "RGBA")
    for mode in ("RGB", "RGBA", "L", "LA", "P", "CMYK", "I;16"):
        img = pil.convert(mode) if mode != "I;16" else Image.fromarray(rng.integers(0, 65536, (21, 17), dtype=np.uint16))
        # What the package must see: PIL's own pixels for the modes NumPy can hold, PIL's RGB of the rest.
        seen = np.asarray(img) if mode in ("RGB", "RGBA", "L", "LA", "I;16") else np.asarray(img.convert("RGB"))
        assert np.array_equal(cs.sobel(img), reference.sobel(as_rgb(seen))), mode
    view = memoryview(np.ascontiguousarray(rgba[..., :3]))
    assert np.array_equal(cs.sobel(view), reference.sobel(rgba[..., :3]))


def test_files_are_read_as_the_command_line_reads_them(tmp_path):
    path = os.path.join(ROOT, "imgs_in", "512x512.png")
    rgb = cs.read(path)
    assert rgb.shape == (512, 512, 3) and rgb.dtype == np.uint8
    golden = np.asarray(pytest.importorskip("PIL.Image").open(os.path.join(ROOT, "tests", "data", "512x512_sobel.png")))
    assert np.array_equal(cs.sobel(path), golden) and np.array_equal(cs.sobel(rgb), golden)
    exe = os.environ.get("CUDA_SOBEL_BIN")
    if exe:  # the command line's own file, byte for byte the same edges
        out = tmp_path / "e.png"
        subprocess.run([exe, path, "--ksize", "5", "--grey", "bt601", "--variant", "cpu-rayon", "-q", "--out", str(out)],
                       check=True)
        assert np.array_equal(cs.sobel(path, ksize=5, grey="bt601"), cs.read(out)[..., 0])
    with pytest.raises(FileNotFoundError, match="nothing.png: cannot read"):
        cs.read(tmp_path / "nothing.png")
    (tmp_path / "text.png").write_text("not an image")
    with pytest.raises(ValueError, match="text.png: not a decodable image"):
        cs.sobel(str(tmp_path / "text.png"))


def test_sixteen_bit_images_are_rounded_as_the_command_line_rounds_them():
    # round(v·255/65535): 128 → 0.498, 129 → 0.502, 65406 → 254.498, 65407 → 254.502.
    values = np.array([[0, 128, 129, 32767, 32896, 65406, 65407, 65535]], np.uint16)
    assert np.array_equal(reference.to_8bit(values), [[0, 0, 1, 127, 128, 254, 255, 255]])
    img = np.repeat(values, 3, axis=0)
    assert np.array_equal(cs.sobel(img), reference.sobel(as_rgb(img)))


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
        assert np.array_equal(engine.sobel(rgb, ksize=7), reference.sobel(rgb, ksize=7))
    gx, _ = engine.gradients(rgb)
    assert np.array_equal(gx, reference.gradients(rgb)[0])
    assert cs.sobel(np.zeros((0, 5, 3), np.uint8)).shape == (0, 5)
    assert cs.gradients(np.zeros((3, 0), np.uint8))[0].shape == (3, 0)


@pytest.mark.parametrize(
    "call,error,words",
    [
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.float32)), TypeError, "dtype float32, expected uint8 or uint16"),
        (lambda: cs.sobel(np.zeros((4, 4, 5), np.uint8)), ValueError, "shape (4, 4, 5)"),
        (lambda: cs.sobel(np.zeros((2, 4, 4, 4, 3), np.uint8)), ValueError, "expected H×W"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), border="wrap"), ValueError, "invalid border 'wrap'"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), operator="prewitt"), ValueError, "invalid operator"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), compat="c"), ValueError, "invalid compat"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), ksize=4), ValueError, "invalid ksize '4'"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), grey="luma"), ValueError, "invalid grey 'luma'"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), norm="inf"), ValueError, "invalid norm 'inf'"),
        (
            lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), compat="report", border="replicate"),
            ValueError,
            "compat='report' uses the report's zero border; leave out border='replicate'",
        ),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), operator="scharr", ksize=5), ValueError, "3×3 only"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), compat="report", ksize=7), ValueError, "3×3 program"),
        (lambda: cs.gradients(np.zeros((4, 4, 3), np.uint8), ksize=7, dtype="int16"), ValueError, "int16 cannot hold"),
        (lambda: cs.gradients(np.zeros((4, 4, 3), np.uint8), dtype="float64"), TypeError, "dtype float64"),
        (lambda: cs.direction(np.zeros((4, 4, 3), np.uint8), quantize="8"), ValueError, "invalid quantize"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), variant="gpu-fast"), ValueError, "invalid variant"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), variant="gpu-strip"), ValueError, "needs a GPU"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), device="tpu"), ValueError, "invalid device 'tpu'"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), out=np.zeros((4, 5), np.uint8)), ValueError, "out: shape"),
        (lambda: cs.sobel(np.zeros((4, 4, 3), np.uint8), out=np.zeros((4, 4), np.int16)), TypeError, "out: dtype"),
        (lambda: cs.sobel("no such file.png"), FileNotFoundError, "no such file.png: cannot read"),
        (lambda: cs.sobel(3.5), TypeError, "expected an image"),
    ],
)
def test_errors_are_exceptions_with_the_command_lines_words(call, error, words):
    with pytest.raises(error) as caught:
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


def test_device_workspaces_are_kept_per_stream_and_thread(monkeypatch):
    # _arrays.workspace without a GPU: a stand-in tensor class whose new_empty records what it made. A stream keeps
    # its workspace, grows it when a call needs more, and keeps none over the limit; two streams, and the
    # per-thread default stream on two threads, never share one. A kept workspace comes with its stream's one lock
    # (also once it has grown), which two threads launching through it hold in turn; one made for a call with none.
    import threading
    import types

    from cuda_sobel import _arrays

    class Like:
        def new_empty(self, shape, dtype=None):
            assert dtype == "uint8"
            return types.SimpleNamespace(size=shape[0])

    monkeypatch.setattr(_arrays, "_TORCH", [types.SimpleNamespace(uint8="uint8")])
    monkeypatch.setattr(_arrays, "_workspaces", {})
    monkeypatch.setattr(_arrays, "KEPT_WORKSPACE", 1000)
    like = Like()

    def ws(*args):
        return _arrays.workspace("torch", like, *args)[0]

    first, lock = _arrays.workspace("torch", like, 0, 5, 100)
    assert ws(0, 5, 60) is first
    bigger, same = _arrays.workspace("torch", like, 0, 5, 200)
    assert bigger is not first and bigger.size == 200 and ws(0, 5, 150) is bigger
    assert same is lock and isinstance(lock, type(threading.Lock()))
    assert ws(0, 6, 100) is not bigger and _arrays.workspace("torch", like, 0, 6, 100)[1] is not lock  # another stream
    assert ws(1, 5, 100) is not bigger  # another device
    huge, none = _arrays.workspace("torch", like, 0, 7, 2000)
    assert ws(0, 7, 2000) is not huge and none is _arrays.NOT_SHARED  # over the limit: allocated each call
    mine = ws(0, 2, 100)
    assert ws(0, 2, 100) is mine
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(ws(0, 2, 100)))
    t.start()
    t.join()
    assert theirs[0] is not mine  # cudaStreamPerThread names another stream on another thread


def test_canny_allocates_its_result_while_the_first_launches_run(monkeypatch):
    # The Canny fast path without a GPU: a stand-in GPU array kind and native module that record the order of
    # events. Without out=, the first image's launches up to its edges (part 1, no output) come before the result is
    # allocated, the rest (part 2) into it after, all under the workspace's lock; with out=, one call of every
    # launch (part 0). An out= it cannot take sends the call to the general path before anything is launched.
    import types

    from cuda_sobel import _arrays, _canny

    events = []

    class Lock:
        def __enter__(self):
            events.append("lock")

        def __exit__(self, *exc):
            events.append("unlock")

    class Kind:
        name = "torch"

        @staticmethod
        def new(like, shape):
            events.append(("new", shape))
            return types.SimpleNamespace(ptr=77, shape=shape)

        @staticmethod
        def takes_out(out, like, shape):
            return out.shape == shape

        ordinal = staticmethod(lambda a: 0)
        stream = staticmethod(lambda ordinal: 5)
        pointer = staticmethod(lambda a: a.ptr)

    def canny_device(engine, rgb, out, w, h, n, stream, f, lo, hi, workspace, part=0):
        events.append(("launch", part, out, (w, h, n, stream, lo, hi, workspace)))

    engine = types.SimpleNamespace(_native="engine")
    monkeypatch.setattr(_arrays, "packed_rgb_gpu", lambda image, bgr, device: Kind)
    monkeypatch.setattr(_arrays, "workspace", lambda *a: (types.SimpleNamespace(ptr=9), Lock()))
    monkeypatch.setattr(_canny, "_workspace_bytes", lambda *a: 1234)
    monkeypatch.setattr(_canny, "_PACKAGE", [(lambda ordinal: engine, {})])
    monkeypatch.setattr(_canny._native, "canny_device", canny_device)
    image = types.SimpleNamespace(ptr=3, shape=(2, 4, 6, 3))
    call = (6, 4, 2, 5, 50.0, 150.0, (9, 1234))
    result = _canny._gpu_fast(image, "f", (50.0, 150.0), False, None)
    assert result.shape == (2, 4, 6)
    assert events == ["lock", ("launch", 1, 0, call), ("new", (2, 4, 6)), ("launch", 2, 77, call), "unlock"]
    events.clear()
    mine = types.SimpleNamespace(ptr=88, shape=(2, 4, 6))
    assert _canny._gpu_fast(image, "f", (50.0, 150.0), False, mine) is mine
    assert events == ["lock", ("launch", 0, 88, call), "unlock"]
    events.clear()
    assert _canny._gpu_fast(image, "f", (50.0, 150.0), False, types.SimpleNamespace(ptr=88, shape=(4, 6))) is None
    assert events == []


def test_host_arrays_never_take_the_gpu_fast_paths():
    from cuda_sobel import _arrays

    rgb = np.zeros((4, 5, 3), np.uint8)
    for x in (rgb, [rgb], rgb.tolist(), memoryview(rgb)):
        assert _arrays.gpu_uint8(x) is None and _arrays.packed_rgb_gpu(x, False, None) is None
