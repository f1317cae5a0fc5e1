#!/usr/bin/env python3
"""The Python package against its peers, in one process:

    python3 scripts/python_bench.py [--calls 200] [--cli .dev/cuda_sobel] [--only sobel|gradients|canny|filter]

GPU: device-resident RGB8 input → 8-bit edges; each whole Python call timed between two CUDA events on the
current stream, after 10 warm-up calls; median of --calls calls. Peers where installed: kornia
(`filters.sobel` on grey), PyTorch conv2d eager (grey, two 3×3 convolutions, magnitude), cupyx.scipy.ndimage.
Gradients: cuda_sobel.gradients on the same tensors (int16 beside its native launch alone, and float32)
against kornia's `filters.spatial_gradient` (grey float, unnormalised: Gx and Gy as one tensor) and torch conv2d's
two gradients, timed the same way. Filters: cuda_sobel.filter on a grey plane and on packed RGB beside its native
launch alone, against kornia's float blurs and torch conv2d of the same plane. Canny: cuda_sobel.canny beside its
native launches alone, by the events and by the host's clock (what the call costs the CPU).
CPU: cuda_sobel.sobel on a NumPy array (wall clock, median) against the command line's cpu-rayon computation
time for the same image (--cli BINARY --json).
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

import cuda_sobel as cs

SIZES = [("2048x1024", (1, 1024, 2048)), ("7680x4320", (1, 4320, 7680)), ("16384²", (1, 16384, 16384)),
         ("batch 256×224×224", (256, 224, 224)), ("batch 16×1920×1080", (16, 1080, 1920))]


def cuda_median_us(torch, fn, calls):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def cuda_medians_interleaved_us(torch, fns, calls):
    """:func:`cuda_median_us` of each of ``fns``, their calls taken in turn (one of each, then again), so that a
    difference between them is not the GPU's clocks or the host's state drifting between one's calls and the next's."""
    for _ in range(10):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for _ in range(calls):
        for fn, t in zip(fns, times):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            t.append(start.elapsed_time(end) * 1e3)
    return [statistics.median(t) for t in times]


def host_medians_interleaved_us(torch, fns, calls):
    """The host's time in each of ``fns`` (``time.perf_counter`` around the call alone, the GPU drained after it,
    untimed), their calls taken in turn: what a call costs the CPU before its launches are queued, which the events
    above see only while the GPU waits for it."""
    for _ in range(10):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for _ in range(calls):
        for fn, t in zip(fns, times):
            start = time.perf_counter()
            fn()
            t.append((time.perf_counter() - start) * 1e6)
            torch.cuda.synchronize()
    return [statistics.median(t) for t in times]


def peers(torch):
    """name → function of an N×H×W×3 uint8 CUDA tensor giving 8-bit edges."""
    kx = torch.tensor([[-1.0, 0, 1], [-2, 0, 2], [-1, 0, 1]], device="cuda").view(1, 1, 3, 3)
    weights = torch.tensor([0.30, 0.59, 0.11], device="cuda").view(1, 3, 1, 1)

    def conv2d(x):
        g = (x.permute(0, 3, 1, 2).float() * weights).sum(1, keepdim=True)
        g = torch.nn.functional.pad(g, (1, 1, 1, 1), mode="replicate")
        gx = torch.nn.functional.conv2d(g, kx)
        gy = torch.nn.functional.conv2d(g, kx.transpose(2, 3))
        return torch.sqrt(gx * gx + gy * gy).clamp(max=255).to(torch.uint8)

    found = {"torch conv2d, eager": conv2d}
    try:
        import kornia

        def kornia_sobel(x):
            grey = kornia.color.rgb_to_grayscale(x.permute(0, 3, 1, 2).float() / 255)
            return (kornia.filters.sobel(grey, normalized=False) * 255).clamp(max=255).to(torch.uint8)

        found[f"kornia {kornia.__version__} filters.sobel"] = kornia_sobel
    except ImportError:
        pass
    try:
        import cupy
        import cupyx.scipy.ndimage as ndi

        def cupyx_sobel(x):
            g = cupy.asarray(x).astype(cupy.float32) @ cupy.asarray([0.30, 0.59, 0.11], dtype=cupy.float32)
            gx, gy = ndi.sobel(g, axis=-1, mode="nearest"), ndi.sobel(g, axis=-2, mode="nearest")
            return cupy.minimum(cupy.hypot(gx, gy), 255).astype(cupy.uint8)

        found["cupyx.scipy.ndimage.sobel"] = cupyx_sobel
    except ImportError:
        pass
    return found


def gradient_peers(torch):
    """name → function of an N×H×W×3 uint8 CUDA tensor giving Gx and Gy (3×3 Sobel, unnormalised)."""
    kx = torch.tensor([[-1.0, 0, 1], [-2, 0, 2], [-1, 0, 1]], device="cuda").view(1, 1, 3, 3)
    weights = torch.tensor([0.30, 0.59, 0.11], device="cuda").view(1, 3, 1, 1)

    def grey(x):
        return (x.permute(0, 3, 1, 2).float() * weights).sum(1, keepdim=True)

    def conv2d(x):
        g = torch.nn.functional.pad(grey(x), (1, 1, 1, 1), mode="replicate")
        return torch.nn.functional.conv2d(g, kx), torch.nn.functional.conv2d(g, kx.transpose(2, 3))

    found = {"torch conv2d ×2, eager": conv2d}
    try:
        import kornia

        def kornia_gradient(x):
            return kornia.filters.spatial_gradient(grey(x), mode="sobel", order=1, normalized=False)

        found[f"kornia {kornia.__version__} spatial_gradient"] = kornia_gradient
    except ImportError:
        pass
    return found


def gradient_table(torch, a):
    funcs = gradient_peers(torch)
    f16 = cs._arrays.native_filter("sobel", 3, None, "exact", "percent", "l2")
    native, stream = cs._engine(0)._native, torch.cuda.current_stream().cuda_stream
    print("\n| input | cuda_sobel.gradients int16 | float32 | " + " | ".join(funcs) + " |")
    print("|---|---|---|" + "---|" * len(funcs))
    for name, (n, h, w) in SIZES:
        if h == 16384 or (n > 16 and h < 1000):
            continue
        x = torch.randint(0, 256, (n, h, w, 3), dtype=torch.uint8, device="cuda")
        if n == 1:
            x = x[0]
        # The same launch straight through the native module into a preallocated output, as for the edges.
        out = torch.empty((2, n, h, w) if n > 1 else (2, h, w), dtype=torch.int16, device="cuda")
        raw = cuda_median_us(
            torch,
            lambda: cs._native.sobel_device(native, x.data_ptr(), out.data_ptr(), w, h, n, stream, f16, "int16"),
            a.calls,
        )
        row = [f"{cuda_median_us(torch, lambda: cs.gradients(x), a.calls):.1f} µs (native call alone {raw:.1f})",
               f"{cuda_median_us(torch, lambda: cs.gradients(x, dtype='float32'), a.calls):.1f} µs"]
        for f in funcs.values():
            xb = x if n > 1 else x.unsqueeze(0)
            row.append(f"{cuda_median_us(torch, lambda: f(xb), max(20, a.calls // 4)):.1f} µs")
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)
        del x, out
        torch.cuda.empty_cache()


def canny_table(torch, a):
    """cuda_sobel.canny on a device tensor (thresholds 50, 150), into a new tensor and into ``out=``, against the same
    launches straight through the native module into a preallocated output and workspace: what the Python layer adds
    is the difference with ``out=`` (without it, the call also allocates its result)."""
    print("\n| Canny, device-resident RGB8 | cuda_sobel.canny | canny(out=) | native call alone | the Python layer adds "
          "| host's clock: canny(out=) | native call |")
    print("|---|---|---|---|---|---|---|")
    native, stream = cs._engine(0)._native, torch.cuda.current_stream().cuda_stream
    f = cs._arrays.native_filter("sobel", 3, None, "exact", "percent", "l1")
    for name, (n, h, w) in SIZES[:2]:
        x = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, device="cuda")
        out = torch.empty((h, w), dtype=torch.uint8, device="cuda")
        need = cs._native.canny_workspace(native, f, w, h)
        ws = torch.empty((need,), dtype=torch.uint8, device="cuda")
        calls = (
            lambda: cs._native.canny_device(
                native, x.data_ptr(), out.data_ptr(), w, h, 1, stream, f, 50.0, 150.0, (ws.data_ptr(), need)),
            lambda: cs.canny(x, 50, 150),
            lambda: cs.canny(x, 50, 150, out=out))
        raw, new, into = cuda_medians_interleaved_us(torch, calls, a.calls)
        host_raw, host_into = host_medians_interleaved_us(torch, (calls[0], calls[2]), a.calls)
        print(f"| {name} | {new:.1f} µs | {into:.1f} µs | {raw:.1f} µs | {into - raw:+.1f} µs | {host_into:.1f} µs "
              f"| {host_raw:.1f} µs |", flush=True)
        del x, out, ws
        torch.cuda.empty_cache()
    try:
        import cupy as cp
    except ImportError:
        print("(no CuPy: its rows left out)")
        return
    # CuPy's null stream is torch's default stream (both the legacy default stream, handle 0): torch's events time it.
    for name, (n, h, w) in SIZES[:2]:
        x = cp.random.randint(0, 256, (h, w, 3), dtype=cp.uint8)
        out = cp.empty((h, w), cp.uint8)
        need = cs._native.canny_workspace(native, f, w, h)
        ws = cp.empty((need,), cp.uint8)
        calls = (
            lambda: cs._native.canny_device(
                native, x.data.ptr, out.data.ptr, w, h, 1, 0, f, 50.0, 150.0, (ws.data.ptr, need)),
            lambda: cs.canny(x, 50, 150),
            lambda: cs.canny(x, 50, 150, out=out))
        raw, new, into = cuda_medians_interleaved_us(torch, calls, a.calls)
        host_raw, host_into = host_medians_interleaved_us(torch, (calls[0], calls[2]), a.calls)
        print(f"| {name}, CuPy | {new:.1f} µs | {into:.1f} µs | {raw:.1f} µs | {into - raw:+.1f} µs "
              f"| {host_into:.1f} µs | {host_raw:.1f} µs |", flush=True)
        del x, out, ws


def filter_table(torch, a):
    """cuda_sobel.filter on a grey plane and on packed RGB (its grey made on the device) against its native launch
    alone and the peers' float blurs of the same plane (kornia gaussian_blur2d / box_blur, torch conv2d)."""
    try:
        import kornia
    except ImportError:
        kornia = None
    native = cs._engine(0)._native
    print("\n| input, kernel | cuda_sobel.filter, grey plane | from RGB | kornia (float) | torch conv2d (float) |")
    print("|---|---|---|---|---|")
    for name, (h, w) in (("2048x1024", (1024, 2048)), ("7680x4320", (4320, 7680))):
        grey = torch.randint(0, 256, (h, w), dtype=torch.uint8, device="cuda")
        rgb = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, device="cuda")
        out = torch.empty_like(grey)
        plane = grey.float()[None, None]
        for spec, d in (("gaussian:5", 5), ("box:7", 7)):
            k = cs._filter.native_kernel(spec, None, False, None, "auto")
            stream = torch.cuda.current_stream().cuda_stream
            raw = cuda_median_us(torch, lambda: cs._native.filter_device(
                native, k, grey.data_ptr(), out.data_ptr(), w, h, 1, False, (0, 0), stream), a.calls)
            row = [f"{cuda_median_us(torch, lambda: cs.filter(grey, spec), a.calls):.1f} µs (native call alone "
                   f"{raw:.1f})", f"{cuda_median_us(torch, lambda: cs.filter(rgb, spec), a.calls):.1f} µs"]
            if kornia is not None:
                blur = (lambda: kornia.filters.gaussian_blur2d(plane, (d, d), (1.0, 1.0), border_type="replicate")) \
                    if spec.startswith("gaussian") else (lambda: kornia.filters.box_blur(plane, (d, d), "replicate"))
                row.append(f"{cuda_median_us(torch, blur, max(20, a.calls // 4)):.1f} µs")
            else:
                row.append("–")
            taps = torch.ones((1, 1, d, d), device="cuda") / (d * d)
            padded = lambda: torch.nn.functional.conv2d(  # noqa: E731
                torch.nn.functional.pad(plane, (d // 2,) * 4, mode="replicate"), taps)
            row.append(f"{cuda_median_us(torch, padded, max(20, a.calls // 4)):.1f} µs")
            print(f"| {name}, {spec} | " + " | ".join(row) + " |", flush=True)
        del grey, rgb, out, plane
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--cli", default=None, help="the cuda_sobel binary, for the CPU comparison")
    ap.add_argument("--skip-large", action="store_true", help="leave out 16384²")
    ap.add_argument("--only", choices=("sobel", "gradients", "canny", "filter"), help="one table alone")
    a = ap.parse_args()

    import torch

    if a.only is not None:
        {"sobel": sobel_table, "gradients": gradient_table, "canny": canny_table, "filter": filter_table}[a.only](
            torch, a)
        return
    sobel_table(torch, a)
    gradient_table(torch, a)
    canny_table(torch, a)
    filter_table(torch, a)
    if a.cli:
        cli_comparison(a.cli, a.calls)


def sobel_table(torch, a):
    """cuda_sobel.sobel on device tensors against its native launch alone and the peers."""
    funcs = peers(torch)
    print("| input | cuda_sobel.sobel | " + " | ".join(funcs) + " |")
    print("|---|---|" + "---|" * len(funcs))
    for name, (n, h, w) in SIZES:
        if a.skip_large and n == 1 and h == 16384:
            continue
        x = torch.randint(0, 256, (n, h, w, 3), dtype=torch.uint8, device="cuda")
        if n == 1:
            x = x[0]
        out = torch.empty(x.shape[:-1], dtype=torch.uint8, device="cuda")
        ours = cuda_median_us(torch, lambda: cs.sobel(x, out=out), a.calls)
        # The same launch straight through the native module: what the Python layer adds is the difference.
        native, stream = cs._engine(0)._native, torch.cuda.current_stream().cuda_stream
        f = cs._arrays.native_filter("sobel", 3, None, "exact", "percent", "l2")
        hh, ww = x.shape[-3], x.shape[-2]
        raw = cuda_median_us(
            torch,
            lambda: cs._native.sobel_device(native, x.data_ptr(), out.data_ptr(), ww, hh, n, stream, f, "edges"),
            a.calls,
        )
        row = [f"{ours:.1f} µs (native call alone {raw:.1f})"]
        for f in funcs.values():
            xb = x if n > 1 else x.unsqueeze(0)
            try:
                row.append(f"{cuda_median_us(torch, lambda: f(xb), max(20, a.calls // 4)):.1f} µs")
            except Exception as e:  # a peer that cannot take this size (out of memory)
                row.append(f"– ({type(e).__name__})")
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)
        del x, out
        torch.cuda.empty_cache()


def cli_comparison(binary, calls):
    """cuda_sobel.sobel on a NumPy array against the command line's cpu-rayon computation of the same image."""
    rgb = np.random.default_rng(1).integers(0, 256, (1024, 2048, 3), dtype=np.uint8)
    for _ in range(5):
        cs.sobel(rgb)
    times = []
    for _ in range(max(20, calls // 4)):
        t = time.perf_counter()
        cs.sobel(rgb)
        times.append((time.perf_counter() - t) * 1e3)
    with tempfile.TemporaryDirectory() as d:
        from PIL import Image

        path = os.path.join(d, "in.png")
        Image.fromarray(rgb).save(path)
        cli = []
        for _ in range(9):
            r = subprocess.run([binary, path, "--variant", "cpu-rayon", "--json", "--out", os.path.join(d, "o.png")],
                               capture_output=True, check=True)
            cli.append(json.loads(r.stdout)["rows"][0]["compute_ms"])
    py, c = statistics.median(times), statistics.median(cli)
    print(f"\nNumPy 2048×1024 on the CPU: cuda_sobel.sobel {py:.2f} ms (median), the CLI's cpu-rayon "
          f"computation {c:.2f} ms (median of 9) = {100 * (py / c - 1):+.0f} %")


if __name__ == "__main__":
    main()
