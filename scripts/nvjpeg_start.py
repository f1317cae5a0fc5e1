#!/usr/bin/env python3
"""What opening nvJPEG costs, handle by handle, in a fresh process: the CUDA context (CuPy), then each handle named
on the command line in that order — `default` (nvjpegCreateSimple), `engine` (nvjpegCreateEx on the GPU's JPEG
engine, NVJPEG_BACKEND_HARDWARE), `engine:FLAGS` (with those nvjpegCreateEx flags) — with `--first-call`, the
engine's first batched call on one photo; with `--sizes FOLDER`, what `nvjpegDecodeBatchedInitialize` costs when a
call's batch size changes (batch mode's slots hand the engine 1–8 photos a call) beside the decode it prepares. For issue 29's question of where a photo folder's first second goes
(docs/performance.md v0.48). Run it once per order, each in its own process:

    python3 scripts/nvjpeg_start.py engine default
    python3 scripts/nvjpeg_start.py default engine --first-call PHOTO.jpg
    python3 scripts/nvjpeg_start.py engine --sizes FOLDER
"""

import ctypes as C
import glob
import sys
import time

import cupy as cp

t0 = time.perf_counter()
cp.zeros(1)
cp.cuda.Device(0).synchronize()
print(f"context {1e3 * (time.perf_counter() - t0):.0f} ms", end="")
lib = C.CDLL("libnvjpeg.so.13")
args = sys.argv[1:]
photo = args[args.index("--first-call") + 1] if "--first-call" in args else None
folder = args[args.index("--sizes") + 1] if "--sizes" in args else None
handles = {}
for what in [a for a in args if a in ("default", "engine") or a.startswith("engine:")]:
    h = C.c_void_p()
    t = time.perf_counter()
    if what == "default":
        r = lib.nvjpegCreateSimple(C.byref(h))
    else:
        flags = int(what.split(":")[1]) if ":" in what else 0
        r = lib.nvjpegCreateEx(C.c_int(3), None, None, C.c_uint(flags), C.byref(h))
    print(f"; {what} {1e3 * (time.perf_counter() - t):.0f} ms (status {r})", end="")
    handles[what.split(":")[0]] = h


class Img(C.Structure):
    _fields_ = [("channel", C.c_void_p * 4), ("pitch", C.c_size_t * 4)]


if photo and "engine" in handles:
    h, s = handles["engine"], C.c_void_p()
    data = open(photo, "rb").read()
    out = cp.empty(4000 * 3000 * 3, cp.uint8)
    img = Img()
    img.channel[0], img.pitch[0] = out.data.ptr, 4000 * 3
    t = time.perf_counter()
    lib.nvjpegJpegStateCreate(h, C.byref(s))
    r1 = lib.nvjpegDecodeBatchedInitialize(h, s, C.c_int(1), C.c_int(1), C.c_int(5))
    ptrs, lens = (C.c_char_p * 1)(data), (C.c_size_t * 1)(len(data))
    r2 = lib.nvjpegDecodeBatched(h, s, ptrs, lens, C.byref(img), None)
    cp.cuda.Device(0).synchronize()
    print(f"; engine's first call {1e3 * (time.perf_counter() - t):.0f} ms (status {r1}, {r2})", end="")
    t = time.perf_counter()
    r2 = lib.nvjpegDecodeBatched(h, s, ptrs, lens, C.byref(img), None)
    cp.cuda.Device(0).synchronize()
    print(f"; second {1e3 * (time.perf_counter() - t):.0f} ms", end="")
print()
if folder and "engine" in handles:
    h, s = handles["engine"], C.c_void_p()
    lib.nvjpegJpegStateCreate(h, C.byref(s))
    datas = [open(f, "rb").read() for f in sorted(glob.glob(folder + "/*.jpg"))[:16]]
    outs = [cp.empty(4000 * 3000 * 3, cp.uint8) for _ in datas]
    imgs = (Img * len(datas))()
    for img, out in zip(imgs, outs):
        img.channel[0], img.pitch[0] = out.data.ptr, 4000 * 3
    ptrs, lens = (C.c_char_p * len(datas))(*datas), (C.c_size_t * len(datas))(*[len(d) for d in datas])
    rows = []
    for n in [8, 8, 7, 8, 3, 8, 1, 8, 16, 16, 8, 4, 4, 2, 2]:
        t = time.perf_counter()
        r1 = lib.nvjpegDecodeBatchedInitialize(h, s, C.c_int(n), C.c_int(1), C.c_int(5))
        t1 = time.perf_counter()
        r2 = lib.nvjpegDecodeBatched(h, s, ptrs, lens, imgs, None)
        cp.cuda.Device(0).synchronize()
        t2 = time.perf_counter()
        rows.append(f"{n}: init {1e3 * (t1 - t):.1f} + decode {1e3 * (t2 - t1):.1f} ms ({r1}, {r2})")
    print("sizes: " + "; ".join(rows))
