"""The package on GPU arrays (the GPU machine; skipped elsewhere with the reason, required with
CUDA_SOBEL_REQUIRE_GPU=1): PyTorch and CuPy inputs zero-copy on the caller's stream, batches, out=, NumPy with
device='cuda', and arrays on the wrong device — all byte-identical to the NumPy reference."""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cuda_sobel as cs
import reference
from cuda_sobel import _arrays as _a
from test_cpu import FILTERS, as_rgb

REQUIRED = os.environ.get("CUDA_SOBEL_REQUIRE_GPU") is not None


def need(module: str):
    try:
        return __import__(module)
    except ImportError as e:
        if REQUIRED:
            raise
        pytest.skip(f"{module} not installed: {e}")


@pytest.fixture(scope="module")
def torch():
    t = need("torch")
    if not t.cuda.is_available():
        if REQUIRED:
            pytest.fail("CUDA_SOBEL_REQUIRE_GPU=1 but torch sees no CUDA device")
        pytest.skip("no CUDA device")
    return t


@pytest.fixture(scope="module")
def cupy():
    cp = need("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver or device
        if REQUIRED:
            raise
        pytest.skip(f"no CUDA device: {e}")
    return cp


@pytest.mark.parametrize("op,k,border,compat", FILTERS)
def test_torch_cuda_tensors_every_filter(torch, op, k, border, compat):
    rgb = np.random.default_rng(1).integers(0, 256, (45, 67, 3), dtype=np.uint8)
    got = cs.sobel(torch.from_numpy(rgb).cuda(), operator=op, ksize=k, border=border, compat=compat)
    assert got.is_cuda and got.dtype == torch.uint8 and tuple(got.shape) == (45, 67)
    assert np.array_equal(got.cpu().numpy(), reference.sobel(rgb, op, border, compat, k))


@settings(max_examples=40, deadline=None)
@given(
    h=st.integers(1, 60),
    w=st.integers(1, 70),
    channels=st.sampled_from([0, 1, 3, 4]),
    step=st.integers(1, 2),
    bgr=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_torch_random_shapes_strides_layouts(h, w, channels, step, bgr, seed):
    torch = need("torch")
    if not torch.cuda.is_available():
        if REQUIRED:
            pytest.fail("CUDA_SOBEL_REQUIRE_GPU=1 but torch sees no CUDA device")
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(seed)
    shape = (h * step, w * step) + ((channels,) if channels else ())
    full = rng.integers(0, 256, shape, dtype=np.uint8)
    x = torch.from_numpy(full).cuda()[::step, ::step]  # a strided view on the GPU
    got = cs.sobel(x, bgr=bgr)
    assert np.array_equal(got.cpu().numpy(), reference.sobel(as_rgb(full[::step, ::step], bgr)))


def test_a_batch_is_one_call_and_each_image_keeps_its_borders(torch):
    batch = np.random.default_rng(2).integers(0, 256, (7, 33, 41, 3), dtype=np.uint8)
    got = cs.sobel(torch.from_numpy(batch).cuda(), border="reflect101").cpu().numpy()
    for i in range(7):
        assert np.array_equal(got[i], reference.sobel(batch[i], border="reflect101"))


def test_on_a_non_default_stream_without_synchronising(torch):
    rgb = np.random.default_rng(3).integers(0, 256, (512, 768, 3), dtype=np.uint8)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        # Produced on `side`, consumed on `side`: the edges follow the upload in stream order.
        x = torch.from_numpy(rgb).to("cuda", non_blocking=True)
        y = cs.sobel(x)
        z = y.to(torch.int32).sum()  # more work on the same stream, reading the edges
    side.synchronize()
    expected = reference.sobel(rgb)
    assert np.array_equal(y.cpu().numpy(), expected)
    assert int(z) == int(expected.astype(np.int64).sum())


def test_out_and_the_wrong_device(torch):
    rgb = torch.from_numpy(np.random.default_rng(4).integers(0, 256, (20, 30, 4), dtype=np.uint8)).cuda()
    out = torch.zeros((20, 30), dtype=torch.uint8, device="cuda")
    assert cs.sobel(rgb, out=out) is out
    assert np.array_equal(out.cpu().numpy(), reference.sobel(rgb.cpu().numpy()[..., :3]))
    with pytest.raises(ValueError, match="on cuda:0, but device='cpu'"):
        cs.sobel(rgb, device="cpu")
    with pytest.raises(ValueError, match="out: on another device"):
        cs.sobel(rgb, out=torch.zeros((20, 30), dtype=torch.uint8))
    with pytest.raises(TypeError, match="dtype torch.float32"):
        cs.sobel(rgb.float())
    if torch.cuda.device_count() < 2:
        with pytest.raises((ValueError, RuntimeError)):
            cs.sobel(rgb, device="cuda:1")
    with pytest.raises(ValueError, match="runs on the CPU"):
        cs.sobel(rgb, variant="cpu-scalar")


@pytest.mark.parametrize("k", cs.KSIZES)
def test_gradients_and_direction_of_cuda_tensors_on_the_gpu(torch, k):
    rng = np.random.default_rng(5 + k)
    batch = rng.integers(0, 256, (3, 25, 35, 4), dtype=np.uint8)  # RGBA, converted on the GPU
    x = torch.from_numpy(batch).cuda()
    rgx, rgy = zip(*(reference.gradients(as_rgb(b), "sobel", "reflect101", "exact", k) for b in batch))
    for dtype, expected_type in ((None, torch.int32 if k == 7 else torch.int16), ("int32", torch.int32),
                                 (torch.float32, torch.float32)):
        gx, gy = cs.gradients(x, ksize=k, border="reflect101", dtype=dtype)
        assert gx.is_cuda and gx.dtype == expected_type and tuple(gx.shape) == (3, 25, 35)
        assert np.array_equal(gx.cpu().numpy(), np.stack(rgx)) and np.array_equal(gy.cpu().numpy(), np.stack(rgy))
    # The direction on the GPU is the CPU's to the bit; Canny's directions are the reference's.
    angle = cs.direction(x, ksize=k, border="reflect101")
    assert angle.is_cuda and angle.dtype == torch.float32
    assert np.array_equal(angle.cpu().numpy(), cs.direction(batch, ksize=k, border="reflect101"))
    codes = cs.direction(x, ksize=k, border="reflect101", quantize="canny")
    assert codes.is_cuda and np.array_equal(codes.cpu().numpy(), np.stack([reference.direction4(a, b) for a, b in zip(rgx, rgy)]))
    # A host image on the GPU with device="cuda": the same arrays, back on the host.
    hx, _ = cs.gradients(batch[0], ksize=k, border="reflect101", device="cuda")
    assert isinstance(hx, np.ndarray) and np.array_equal(hx, rgx[0])


def test_gradients_run_on_the_callers_stream_without_a_copy(torch):
    rgb = np.random.default_rng(9).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.from_numpy(rgb).to("cuda", non_blocking=True)
        gx, gy = cs.gradients(x, ksize=5)
        total = (gx.to(torch.int64).abs().sum() + gy.to(torch.int64).abs().sum())
    side.synchronize()
    rgx, rgy = reference.gradients(rgb, ksize=5)
    assert int(total) == int(np.abs(rgx).sum() + np.abs(rgy).sum())
    assert gx.untyped_storage().data_ptr() == gy.untyped_storage().data_ptr(), "one allocation, two planes"


def test_numpy_on_the_gpu_with_device_cuda(torch):
    rgb = np.random.default_rng(6).integers(0, 256, (3, 300, 257, 3), dtype=np.uint8)
    got = cs.sobel(rgb, device="cuda")
    assert isinstance(got, np.ndarray)
    for i in range(3):
        assert np.array_equal(got[i], reference.sobel(rgb[i]))
    assert "gpu-strip" in repr(cs.Engine("cuda:0"))


def test_cupy_gradients_and_every_filter_size(cupy):
    rgb = np.random.default_rng(10).integers(0, 256, (2, 41, 53, 3), dtype=np.uint8)
    x = cupy.asarray(rgb)
    for k in cs.KSIZES:
        got = cs.sobel(x, ksize=k, grey="bt601", norm="l1")
        for i in range(2):
            assert np.array_equal(cupy.asnumpy(got[i]), reference.sobel(rgb[i], ksize=k, weights="bt601", norm="l1"))
        gx, gy = cs.gradients(x, ksize=k, dtype="float32")
        assert isinstance(gx, cupy.ndarray) and gx.dtype == cupy.float32
        assert np.array_equal(cupy.asnumpy(gy[1]), reference.gradients(rgb[1], ksize=k)[1])


def test_cupy_arrays(cupy):
    rgb = np.random.default_rng(7).integers(0, 256, (2, 61, 77, 3), dtype=np.uint8)
    x = cupy.asarray(rgb)
    got = cs.sobel(x, border="zero")
    assert isinstance(got, cupy.ndarray) and got.shape == (2, 61, 77)
    for i in range(2):
        assert np.array_equal(cupy.asnumpy(got[i]), reference.sobel(rgb[i], border="zero"))
    strided = cupy.asarray(np.random.default_rng(8).integers(0, 256, (40, 60, 3), dtype=np.uint8))[::2, ::3]
    assert np.array_equal(cupy.asnumpy(cs.sobel(strided, bgr=True)), reference.sobel(as_rgb(cupy.asnumpy(strided), True)))
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        y = cs.sobel(x)
    s.synchronize()
    assert np.array_equal(cupy.asnumpy(y[1]), reference.sobel(rgb[1]))


def test_torch_compile_keeps_every_call_in_one_graph(torch):
    """The calls are custom operators under torch.compile: fullgraph=True compiles (a graph break would raise), and
    the compiled function gives the eager bytes, on packed RGB and on a layout the fast path does not take."""
    if not hasattr(torch.library, "custom_op"):
        pytest.skip(f"torch {torch.__version__} has no torch.library.custom_op (2.4 and later)")

    def pipeline(x):
        gx, gy = cs.gradients(x, ksize=5)
        return cs.sobel(x, border="reflect101"), gx, gy, cs.direction(x, quantize="canny"), cs.direction(x)

    compiled = torch.compile(pipeline, fullgraph=True, backend="aot_eager")
    rng = np.random.default_rng(7)
    packed = torch.from_numpy(rng.integers(0, 256, (2, 37, 53, 3), dtype=np.uint8)).cuda()
    rgba = torch.from_numpy(rng.integers(0, 256, (41, 29, 4), dtype=np.uint8)).cuda()
    for x in (packed, rgba):
        got, want = compiled(x), pipeline(x)
        for g, w in zip(got, want):
            assert g.is_cuda and g.dtype == w.dtype and g.shape == w.shape
            assert torch.equal(g, w)
    assert torch.ops.cuda_sobel.sobel.default is not None


# ---------------------------------------------------------------------------------------------------
# cuda_sobel.filter on the GPU: the host reference's bytes (test_filter.py holds it to NumPy and the command line)

FILTER_SPECS = ["box:3", "box:15", "gaussian:5", "gaussian:15", "scharr:9", "sobel:3", "sobel:7"]


@pytest.mark.parametrize("spec", FILTER_SPECS)
@pytest.mark.parametrize("planes", [False, True])
def test_filter_of_torch_tensors_zero_copy(torch, spec, planes):
    rng = np.random.default_rng(len(spec))
    batch = rng.integers(0, 256, (3, 45, 67, 3), dtype=np.uint8)
    want = cs.filter(batch, spec, rgb=planes, variant="cpu-scalar")
    got = cs.filter(torch.from_numpy(batch).cuda(), spec, rgb=planes)
    assert got.is_cuda and got.dtype == torch.uint8 and tuple(got.shape) == want.shape
    assert np.array_equal(got.cpu().numpy(), want)
    one = cs.filter(torch.from_numpy(batch[1]).cuda(), spec, rgb=planes, border="reflect101")
    assert np.array_equal(one.cpu().numpy(), cs.filter(batch[1], spec, rgb=planes, border="reflect101"))
    grey = rng.integers(0, 256, (31, 20), dtype=np.uint8)  # a grey plane goes in as it is
    assert np.array_equal(cs.filter(torch.from_numpy(grey).cuda(), spec).cpu().numpy(), cs.filter(grey, spec))


@pytest.mark.parametrize("variant", [v for v in cs.FILTER_VARIANTS if v.startswith("gpu")])
def test_every_gpu_strategy_on_device_and_from_host(torch, variant):
    rgb = np.random.default_rng(2).integers(0, 256, (2, 33, 70, 3), dtype=np.uint8)
    for spec in ("box:7", "gaussian:5", "scharr:5", "sobel:5"):
        want = cs.filter(rgb, spec, variant="cpu-scalar")
        assert np.array_equal(cs.filter(rgb, spec, variant=variant, device="cuda"), want), (variant, spec)
        got = cs.filter(torch.from_numpy(rgb).cuda(), spec, variant=variant)
        assert np.array_equal(got.cpu().numpy(), want), (variant, spec)


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 24), w=st.integers(1, 24), n=st.integers(1, 3), spec=st.sampled_from(FILTER_SPECS),
       planes=st.booleans(), channels=st.sampled_from([1, 3, 4]), seed=st.integers(0, 2**32 - 1))
def test_filter_random_sizes_on_the_gpu(h, w, n, spec, planes, channels, seed):
    t = pytest.importorskip("torch")
    if not t.cuda.is_available():
        pytest.skip("no CUDA device")
    image = np.random.default_rng(seed).integers(0, 256, (n, h, w, channels), dtype=np.uint8)
    got = cs.filter(t.from_numpy(image).cuda(), spec, rgb=planes)
    assert np.array_equal(got.cpu().numpy(), cs.filter(image, spec, rgb=planes, variant="cpu-scalar"))


def test_filter_on_a_side_stream_into_out_and_in_many_launches(torch):
    rgb = np.random.default_rng(6).integers(0, 256, (4, 300, 500, 3), dtype=np.uint8)
    x = torch.from_numpy(rgb).cuda()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = torch.empty((4, 300, 500, 3), dtype=torch.uint8, device="cuda")
        assert cs.filter(x, "gaussian:7", rgb=True, out=out) is out
    side.synchronize()
    assert np.array_equal(out.cpu().numpy(), cs.filter(rgb, "gaussian:7", rgb=True))
    # 22 000 RGB images of 4×4: 66 000 planes, past one launch's 65 535.
    many = np.random.default_rng(7).integers(0, 256, (22_000, 4, 4, 3), dtype=np.uint8)
    got = cs.filter(torch.from_numpy(many).cuda(), "box:3", rgb=True)
    assert np.array_equal(got.cpu().numpy(), cs.filter(many, "box:3", rgb=True))
    wide = (many[:50].astype(np.uint16) * 257)
    got16 = cs.filter(torch.from_numpy(wide).cuda(), "box:3", bgr=True)  # 16 bits rounded, BGR reversed, on the GPU
    assert np.array_equal(got16.cpu().numpy(), cs.filter(many[:50, ..., ::-1].copy(), "box:3"))
    with pytest.raises(ValueError, match="runs on the CPU"):
        cs.filter(x, "box:3", variant="cpu-rayon")


def test_filter_of_cupy_arrays(cupy):
    rgb = np.random.default_rng(8).integers(0, 256, (2, 41, 59, 3), dtype=np.uint8)
    for spec, planes in (("gaussian:3", False), ("scharr:7", True)):
        got = cs.filter(cupy.asarray(rgb), spec, rgb=planes)
        assert isinstance(got, cupy.ndarray) and np.array_equal(cupy.asnumpy(got), cs.filter(rgb, spec, rgb=planes))


@pytest.mark.parametrize("ksize,norm", [(3, "l1"), (3, "l2"), (5, "l1"), (7, "l2")])
def test_canny_of_cuda_tensors_equals_the_host_call(torch, ksize, norm):
    # Random images and the spiral-like rings of a scene, single and batched, BGR and grey inputs, on the GPU in place:
    # byte for byte the host call's (which test_opencv.py holds to cv2.Canny).
    rng = np.random.default_rng(ksize)
    scale = {3: 1, 5: 4, 7: 16}[ksize]
    images = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in [(1, 1), (2, 9), (45, 67), (130, 7)]]
    images.append(np.repeat((np.add.outer(np.arange(90), np.arange(120)) % 23 * 11).astype(np.uint8)[..., None], 3, 2))
    for rgb in images:
        for low, high in [(20 * scale, 60 * scale), (150 * scale, 50 * scale)]:
            want = cs.canny(rgb, low, high, ksize=ksize, norm=norm, grey="bt601")
            got = cs.canny(torch.from_numpy(rgb).cuda(), low, high, ksize=ksize, norm=norm, grey="bt601")
            assert got.is_cuda and got.dtype == torch.uint8 and tuple(got.shape) == want.shape
            assert np.array_equal(got.cpu().numpy(), want), (rgb.shape, low, high)
    batch = np.stack([images[2], images[2][::-1].copy()])
    want = cs.canny(batch, 30, 90, ksize=ksize, norm=norm, bgr=True)
    got = cs.canny(torch.from_numpy(batch).cuda(), 30, 90, ksize=ksize, norm=norm, bgr=True)
    assert np.array_equal(got.cpu().numpy(), want)
    grey = images[2][..., 0].copy()
    assert np.array_equal(cs.canny(torch.from_numpy(grey).cuda(), 30, 90, ksize=ksize, norm=norm).cpu().numpy(),
                          cs.canny(grey, 30, 90, ksize=ksize, norm=norm))


def test_canny_calls_queued_on_two_streams_keep_their_own_workspaces(torch):
    # Calls queued without a wait, on the default stream and a side stream in turn, images of three sizes (a stream's
    # kept workspace grows; each stream keeps its own): every result is the host call's.
    rng = np.random.default_rng(9)
    images = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in [(300, 400), (40, 50), (600, 500)] * 3]
    inputs = [torch.from_numpy(rgb).cuda() for rgb in images]  # kept alive until the streams are done with them
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    results = []
    for i, x in enumerate(inputs):
        if i % 2:
            with torch.cuda.stream(side):
                results.append(cs.canny(x, 30, 90))
        else:
            results.append(cs.canny(x, 30, 90))
    torch.cuda.synchronize()
    for rgb, got in zip(images, results):
        assert np.array_equal(got.cpu().numpy(), cs.canny(rgb, 30, 90))
    streams = {stream for lib, _, stream, _ in _a._workspaces if lib == "torch"}
    assert {torch.cuda.current_stream().cuda_stream, side.cuda_stream} <= streams


def test_cupy_packed_rgb_takes_the_fast_path_with_the_host_bytes(cupy):
    # A C-contiguous uint8 CuPy array on the current device goes the fast path (its kind is CuPy's); every call then
    # gives the host call's bytes, into a new array or out=, one image or a batch; a grey plane through filter too.
    from cuda_sobel import _arrays

    rng = np.random.default_rng(13)
    for shape in [(37, 53, 3), (3, 29, 64, 3), (1, 1, 3)]:
        rgb = rng.integers(0, 256, shape, dtype=np.uint8)
        x = cupy.asarray(rgb)
        assert _arrays.packed_rgb_gpu(x, False, None) is _arrays._CupyCuda
        out = cupy.empty(shape[:-1], cupy.uint8)
        for got in (cs.sobel(x, ksize=5), cs.sobel(x, ksize=5, out=out)):
            assert isinstance(got, cupy.ndarray) and np.array_equal(cupy.asnumpy(got), cs.sobel(rgb, ksize=5))
        assert cs.sobel(x, out=out) is out
        for got in (cs.canny(x, 20, 60, norm="l2"), cs.canny(x, 20, 60, norm="l2", out=out)):
            assert np.array_equal(cupy.asnumpy(got), cs.canny(rgb, 20, 60, norm="l2"))
        gx, gy = cs.gradients(x, ksize=7)
        want = cs.gradients(rgb, ksize=7)
        assert gx.dtype == want[0].dtype and np.array_equal(cupy.asnumpy(gx), want[0])
        assert np.array_equal(cupy.asnumpy(gy), want[1])
        assert np.array_equal(cupy.asnumpy(cs.filter(x, "box:5")), cs.filter(rgb, "box:5"))
    grey = rng.integers(0, 256, (40, 33), dtype=np.uint8)
    assert np.array_equal(cupy.asnumpy(cs.filter(cupy.asarray(grey), "gaussian:7")), cs.filter(grey, "gaussian:7"))
    # Not the fast path's: another dtype of out= is refused in the general path's words.
    with pytest.raises(TypeError):
        cs.canny(cupy.asarray(rgb), 20, 60, out=cupy.empty(rgb.shape[:-1], cupy.int16))


def test_cupy_canny_and_filter_queued_on_two_streams_keep_their_own_workspaces(cupy):
    # As above for CuPy arrays: Canny and a filter whose strategy needs scratch, queued on the null stream and a
    # side stream in turn without a wait, images of three sizes; every result is the host call's, and each stream
    # keeps its own workspace.
    rng = np.random.default_rng(11)
    images = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in [(300, 400), (40, 50), (600, 500)] * 3]
    inputs = [cupy.asarray(rgb) for rgb in images]
    side = cupy.cuda.Stream(non_blocking=True)
    cupy.cuda.get_current_stream().synchronize()
    results = []
    for i, x in enumerate(inputs):
        with side if i % 2 else cupy.cuda.Stream.null:
            results.append((cs.canny(x, 30, 90), cs.filter(x, "gaussian:5", variant="gpu-separable")))
    cupy.cuda.Device().synchronize()
    for rgb, (edges, blurred) in zip(images, results):
        assert isinstance(edges, cupy.ndarray) and edges.dtype == cupy.uint8
        assert np.array_equal(cupy.asnumpy(edges), cs.canny(rgb, 30, 90))
        assert np.array_equal(cupy.asnumpy(blurred), cs.filter(rgb, "gaussian:5"))
    streams = {stream for lib, _, stream, _ in _a._workspaces if lib == "cupy"}
    assert {cupy.cuda.Stream.null.ptr, side.ptr} <= streams


def test_cupy_arrays_on_another_device_than_cupys_current(cupy):
    # CuPy allocates on its current device, not an array's: every result must be on the image's own device.
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    rgb = np.random.default_rng(12).integers(0, 256, (70, 90, 3), dtype=np.uint8)
    with cupy.cuda.Device(1):
        x = cupy.asarray(rgb)
    with cupy.cuda.Device(0):
        results = [cs.sobel(x), cs.canny(x, 30, 90), cs.filter(x, "gaussian:5", variant="gpu-separable"),
                   cs.gradients(x)[0]]
        assert all(r.device.id == 1 for r in results)
        cupy.cuda.Device(1).synchronize()
        assert np.array_equal(cupy.asnumpy(results[0]), cs.sobel(rgb))
        assert np.array_equal(cupy.asnumpy(results[1]), cs.canny(rgb, 30, 90))
        assert np.array_equal(cupy.asnumpy(results[2]), cs.filter(rgb, "gaussian:5"))
        assert np.array_equal(cupy.asnumpy(results[3]), cs.gradients(rgb)[0])


def test_canny_into_an_out_that_starts_at_an_odd_address(torch):
    # `out=` a view one byte into its storage, its rows a multiple of 4 wide: an output may start at any address, and a
    # kernel that stored more than a byte at a time there would fault or shift the bytes.
    rgb = np.random.default_rng(6).integers(0, 256, (64, 80, 3), dtype=np.uint8)
    out = torch.zeros(64 * 80 + 1, dtype=torch.uint8, device="cuda")[1:].view(64, 80)
    assert out.data_ptr() % 4 == 1 and out.is_contiguous()
    got = cs.canny(torch.from_numpy(rgb).cuda(), 40, 120, out=out)
    assert got is out and np.array_equal(out.cpu().numpy(), cs.canny(rgb, 40, 120))


def test_canny_into_out_takes_any_batch_and_refuses_a_wrong_one(torch):
    # A contiguous uint8 `out=` of the result's shape takes the packed-RGB fast path; any other goes on to the general
    # path's checks and their one line.
    batch = np.random.default_rng(8).integers(0, 256, (3, 40, 52, 3), dtype=np.uint8)
    x = torch.from_numpy(batch).cuda()
    out = torch.full((3, 40, 52), 7, dtype=torch.uint8, device="cuda")
    assert cs.canny(x, 30, 90, out=out) is out
    assert np.array_equal(out.cpu().numpy(), cs.canny(batch, 30, 90))
    for wrong, error, words in [(torch.empty((3, 40, 51), dtype=torch.uint8, device="cuda"), ValueError, "shape"),
                                (torch.empty((3, 40, 52), dtype=torch.int16, device="cuda"), TypeError, "dtype"),
                                (torch.empty((3, 40, 52), dtype=torch.uint8), ValueError, "another device")]:
        with pytest.raises(error, match=f"out: .*{words}"):
            cs.canny(x, 30, 90, out=wrong)
    strided = torch.zeros((3, 40, 104), dtype=torch.uint8, device="cuda")[:, :, ::2]
    assert cs.canny(x, 30, 90, out=strided) is strided
    assert np.array_equal(strided.cpu().numpy(), cs.canny(batch, 30, 90))


def test_canny_on_a_side_stream_into_out_and_of_cupy(torch, cupy):
    rgb = np.random.default_rng(5).integers(0, 256, (64, 80, 3), dtype=np.uint8)
    want = cs.canny(rgb, 40, 120)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        out = torch.empty((64, 80), dtype=torch.uint8, device="cuda")
        got = cs.canny(torch.from_numpy(rgb).cuda(), 40, 120, out=out)
        fresh = cs.canny(torch.from_numpy(rgb).cuda(), 40, 120)  # the packed-RGB fast path, on the side stream
    side.synchronize()
    assert got is out and np.array_equal(out.cpu().numpy(), want)
    assert np.array_equal(fresh.cpu().numpy(), want)
    empty = cs.canny(torch.empty((0, 5, 3), dtype=torch.uint8, device="cuda"), 40, 120)
    assert tuple(empty.shape) == (0, 5) and empty.dtype == torch.uint8
    c = cs.canny(cupy.asarray(rgb), 40, 120)
    assert isinstance(c, cupy.ndarray) and np.array_equal(cupy.asnumpy(c), want)
    with pytest.raises(ValueError, match="finite"):
        cs.canny(torch.from_numpy(rgb).cuda(), float("nan"), 1)
