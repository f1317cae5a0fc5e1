#!/usr/bin/env python3
"""Batch mode's PNG unfiltering on the GPU (cuda/unfilter.cu), timed alone: each kernel file given is compiled
with CuPy (NVRTC) and run on the PNGs given, as a slot runs it — unfilter_pad, the wavefront (one block an image),
unfilter_pack — and every result is compared with Pillow's decode of the file. For each file: the wavefront
alone and the three kernels, one image at a time (CUDA events after a warm-up, median of the runs), then N
images at once, each on a stream of its own (the slots' case: the host's clock, images/s of the three kernels).

    python3 scripts/unfilter_bench.py imgs_in/2048x1024.png --kernel cuda/unfilter.cu --kernel old.cu

(`examples/unfilter_time.rs` times the binary's own kernels beside the CPU's decode; this compares versions of
the file in one process, and many images at once. Needs CuPy, Pillow, and OpenCV for gpu_inflate_bench's imports.)
"""

import argparse
import os
import statistics
import struct
import time
import zlib

import cupy as cp
import numpy as np
from PIL import Image

from gpu_inflate_bench import zlib_stream  # (this folder is on the path: the script's own)

CHUNK, MAP_THREADS = 8, 256


def image_data(path):
    """The PNG's inflated image data (rows of a filter byte and width · bpp bytes), width, height, bpp. IHDR is
    the first chunk (the PNG specification); the IDAT data is gpu_inflate_bench's `zlib_stream`."""
    data = open(path, "rb").read()
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    assert data[12:16] == b"IHDR" and depth == 8 and colour in (2, 6), f"{path}: 8-bit RGB or RGBA only"
    return zlib.decompress(zlib_stream(data)), width, height, 3 if colour == 2 else 4


class Kernels:
    def __init__(self, path, max_threads):
        source = open(path).read()
        include = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cuda")
        self.module = cp.RawModule(code=source, options=("-I" + include, "--std=c++17"))
        self.pad = self.module.get_function("unfilter_pad")
        self.wave = {3: self.module.get_function("unfilter_rgb"), 4: self.module.get_function("unfilter_rgba")}
        self.pack = self.module.get_function("unfilter_pack")
        self.max_threads = max_threads


class Image1:
    """One image's buffers on the device."""

    def __init__(self, packed, width, height, bpp):
        self.width, self.height, self.bpp = width, height, bpp
        self.pitch = -(-width // CHUNK) * CHUNK * bpp
        self.packed = cp.asarray(np.frombuffer(packed, np.uint8))
        self.rows = cp.empty(self.pitch * height, np.uint8)
        self.filters = cp.empty(height, np.uint8)
        self.rgb = cp.empty(3 * width * height, np.uint8)

    def run(self, k, stream, wave_only=False):
        w, h, bpp, pitch = np.int32(self.width), np.int32(self.height), np.int32(self.bpp), np.int32(self.pitch)
        # As Unfilter::threads: a thread per chunk of the row, whole warps, at most the file's block.
        chunks = -(-self.width // CHUNK)
        threads = min(-(-chunks // 32) * 32, k.max_threads)
        with stream:
            if not wave_only:
                k.pad((-(-self.pitch // MAP_THREADS), min(self.height, 65535)), (MAP_THREADS,),
                      (self.packed, self.rows, self.filters, w, h, bpp, pitch))
            k.wave[self.bpp]((1,), (threads,), (self.rows, self.filters, h, pitch))
            if not wave_only:
                k.pack((-(-3 * self.width // MAP_THREADS), min(self.height, 65535)), (MAP_THREADS,),
                       (self.rows, self.rgb, w, h, bpp, pitch))


def median_ms(fn, runs, stream=None):
    """Median over `runs` of fn's time: CUDA events on `stream` around it, or the host's clock (fn waits)."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(runs):
        if stream is None:
            t = time.perf_counter()
            fn()
            times.append(1000 * (time.perf_counter() - t))
            continue
        start.record(stream)
        fn()
        end.record(stream)
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pngs", nargs="+")
    ap.add_argument("--kernel", action="append", required=True, help="a version of cuda/unfilter.cu (repeatable)")
    ap.add_argument("--max-threads", type=int, action="append",
                    help="its UNFILTER_MAX_THREADS, in the order of --kernel (default: read from the file)")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--concurrent", type=int, default=8, help="images at once, a stream each (the slots)")
    a = ap.parse_args()
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    for path in a.pngs:
        packed, width, height, bpp = image_data(path)
        expected = np.asarray(Image.open(path).convert("RGB")).reshape(-1)
        print(f"{path}: {width}×{height}, {bpp} bytes a pixel")
        for i, kpath in enumerate(a.kernel):
            text = open(kpath).read()
            max_threads = (a.max_threads[i] if a.max_threads else
                           int(text.split("#define UNFILTER_MAX_THREADS")[1].split()[0]))
            k = Kernels(kpath, max_threads)
            one = Image1(packed, width, height, bpp)
            stream = cp.cuda.Stream(non_blocking=True)
            one.run(k, stream)
            stream.synchronize()
            exact = bool((one.rgb.get() == expected).all())
            # The wavefront undoes its rows in place: later runs undo already-undone bytes (the same work).
            wave = median_ms(lambda: one.run(k, stream, wave_only=True), a.runs, stream)
            whole = median_ms(lambda: one.run(k, stream), a.runs, stream)
            many = [Image1(packed, width, height, bpp) for _ in range(a.concurrent)]
            streams = [cp.cuda.Stream(non_blocking=True) for _ in many]

            def all_at_once():
                for m, s in zip(many, streams):
                    m.run(k, s)
                for s in streams:
                    s.synchronize()

            all_at_once()
            together = median_ms(all_at_once, a.runs)
            print(f"  {kpath} (≤ {max_threads} threads): exact {exact}; wavefront {wave:.3f} ms, pad + wavefront + pack "
                  f"{whole:.3f} ms; {a.concurrent} at once {together:.3f} ms = {1000 * a.concurrent / together:.0f} images/s")


if __name__ == "__main__":
    main()
