#!/usr/bin/env python3
"""Where a cuda_sobel.gradients call from torch spends its time: host µs a
call of each step on a 16×16 tensor (the kernel negligible), then the 16×1920×1080 and 2048×1024 calls synced per call
and back to back, beside the native launch on a preallocated output. Needs torch with CUDA and the package installed.

    python3 scripts/python_overhead.py
"""
import time, statistics, torch, cuda_sobel as cs
from cuda_sobel import _native, _arrays as _a
import cuda_sobel as pkg
n, h, w = 16, 1080, 1920
x = torch.randint(0, 256, (n, h, w, 3), dtype=torch.uint8, device="cuda")
small = torch.randint(0, 256, (1, 16, 16, 3), dtype=torch.uint8, device="cuda")
def host_us(fn, calls=3000):
    for _ in range(200): fn()
    torch.cuda.synchronize(); t = time.perf_counter_ns()
    for _ in range(calls): fn()
    el = (time.perf_counter_ns() - t) / calls / 1e3; torch.cuda.synchronize(); return el
def each(fn, calls=200):
    for _ in range(10): fn()
    torch.cuda.synchronize(); t = []
    for _ in range(calls):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); t.append(s.elapsed_time(e) * 1e3)
    return statistics.median(t)
def stream(fn, calls=200):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(calls): fn()
    e.record(); e.synchronize(); return s.elapsed_time(e) * 1e3 / calls
f = _a.native_filter("sobel", 3, None, "exact", "percent", "l2")
eng = pkg._engine(0)
def native(img, out):
    sh = img.shape
    return lambda: _native.sobel_device(eng._native, img.data_ptr(), out.data_ptr(), sh[2], sh[1], sh[0], _a.torch_stream(0), f, "int16")
outs = torch.empty((2, 1, 16, 16), dtype=torch.int16, device="cuda")
outx = torch.empty((2, n, h, w), dtype=torch.int16, device="cuda")
const_stream = _a.torch_stream(0)
rows = [
 ("cs.gradients(small)", lambda: cs.gradients(small)),
 ("cs.sobel(small)", lambda: cs.sobel(small)),
 ("native sobel_device small (preallocated)", native(small, outs)),
 ("native, stream/pointers precomputed", lambda: _native.sobel_device(eng._native, small.data_ptr(), outs.data_ptr(), 16, 16, 1, const_stream, f, "int16")),
 ("torch.empty (2,1,16,16) int16", lambda: torch.empty((2, 1, 16, 16), dtype=torch.int16, device=small.device)),
 ("torch_stream(0)", lambda: _a.torch_stream(0)),
 ("native_filter lookup", lambda: _a.native_filter("sobel", 3, None, "exact", "percent", "l2")),
 ("packed_rgb_gpu", lambda: _a.packed_rgb_gpu(small, False, None)),
 ("out[0], out[1]", lambda: (outs[0], outs[1])),
 ("out.unbind(0)", lambda: outs.unbind(0)),
 ("torch empty_like-free: small.new_empty", lambda: small.new_empty((2, 1, 16, 16), dtype=torch.int16)),
]
for name, fn in rows:
    print(f"host µs a call  {host_us(fn):7.2f}  {name}", flush=True)
print(f"16x1080x1920 int16: cs.gradients synced {each(lambda: cs.gradients(x)):.1f} µs, back to back {stream(lambda: cs.gradients(x)):.1f}")
print(f"16x1080x1920 int16: native preallocated synced {each(native(x, outx)):.1f} µs, back to back {stream(native(x, outx)):.1f}")
print(f"16x1080x1920 sobel: synced {each(lambda: cs.sobel(x)):.1f}, back to back {stream(lambda: cs.sobel(x)):.1f}")
y = torch.randint(0, 256, (1024, 2048, 3), dtype=torch.uint8, device="cuda")
outy = torch.empty((2, 1024, 2048), dtype=torch.int16, device="cuda")
ny = lambda: _native.sobel_device(eng._native, y.data_ptr(), outy.data_ptr(), 2048, 1024, 1, const_stream, f, "int16")
print(f"2048x1024 int16: cs.gradients synced {each(lambda: cs.gradients(y)):.1f} µs, back to back {stream(lambda: cs.gradients(y)):.1f}")
print(f"2048x1024 int16: native preallocated synced {each(ny):.1f} µs, back to back {stream(ny):.1f}")
print(f"2048x1024 sobel: synced {each(lambda: cs.sobel(y)):.1f}, back to back {stream(lambda: cs.sobel(y)):.1f}")
print(f"empty event pair synced {each(lambda: None):.1f} µs")
