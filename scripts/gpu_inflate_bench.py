#!/usr/bin/env python3
"""Issue 29, PNG input: inflating PNG data on the GPU with nvCOMP (batched deflate decompression) against the
CPU's inflate on every core, on the same PNGs — the measurement behind keeping batch's CPU inflate + GPU
unfilter (docs/performance.md v0.32). For each kind of PNG (the test scene batch is timed on, and photos), the
images' IDAT data is taken out whole (one zlib stream an image, as PNG has it: a raw deflate stream after a
2-byte header) and inflated
  - on the CPU by zlib in a pool of one process a core (Python's zlib; batch uses zlib-rs, as fast or faster),
  - on the GPU by nvCOMP's batched deflate decompression, the compressed streams already on the device
    (CUDA events, median of the runs), then with their upload from pinned memory counted,
and every GPU output is compared with zlib's. Needs CuPy, OpenCV, NumPy and the nvidia-nvcomp-cu13 wheel.

    python3 scripts/gpu_inflate_bench.py --scene imgs_in/2048x1024.png --photos tests/data/photos
"""

import argparse
import glob
import os
import statistics
import struct
import time
import zlib
from multiprocessing import Pool

import cupy as cp
import cv2
import numpy as np


def zlib_stream(png_bytes):
    """The concatenated IDAT data of a PNG: one zlib stream."""
    pos, data = 8, []
    while pos < len(png_bytes):
        (length,) = struct.unpack(">I", png_bytes[pos:pos + 4])
        kind = png_bytes[pos + 4:pos + 8]
        if kind == b"IDAT":
            data.append(png_bytes[pos + 8:pos + 8 + length])
        pos += 12 + length
    return b"".join(data)


def photo_pngs(folder, count, size):
    """`count` PNGs of photos resized to `size` with sensor-like noise (as scripts/make_photos.py makes JPEGs)."""
    sources = sorted(glob.glob(os.path.join(folder, "*.png")))
    out = []
    for i in range(count):
        src = cv2.resize(cv2.imread(sources[i % len(sources)], cv2.IMREAD_COLOR), size, interpolation=cv2.INTER_CUBIC)
        noisy = np.clip(src.astype(np.float32) + np.random.default_rng(i).normal(0, 4, src.shape), 0, 255)
        out.append(cv2.imencode(".png", noisy.astype(np.uint8))[1].tobytes())
    return out


def inflate_raw(stream):
    return len(zlib.decompress(stream, -15))


def cpu_rate(raws, repeat, processes):
    work = raws * repeat
    with Pool(processes) as pool:
        pool.map(inflate_raw, raws)  # warm-up: every process started
        t = time.perf_counter()
        pool.map(inflate_raw, work, chunksize=4)
        return len(work) / (time.perf_counter() - t)


def gpu_rates(nvcomp, raws, expected, batch, runs):
    """images/s of nvCOMP's batched inflate, streams on the device; and with their upload from pinned memory."""
    codec = nvcomp.Codec(algorithm="Deflate", bitstream_kind=nvcomp.BitstreamKind.RAW)
    items = (raws * (batch // len(raws) + 1))[:batch]
    device = [cp.asarray(np.frombuffer(r, np.uint8)) for r in items]
    arrays = nvcomp.as_arrays(device)  # one BatchArray: the batched call
    out = codec.decode(arrays)
    cp.cuda.runtime.deviceSynchronize()
    for i in range(min(len(raws), batch)):
        got = cp.asnumpy(cp.asarray(out[i]).view(cp.uint8)).tobytes()
        if got != expected[i]:
            raise SystemExit(f"nvCOMP's output differs from zlib's for stream {i} ({len(got)} against {len(expected[i])} bytes)")
    times = []
    for _ in range(runs):
        cp.cuda.runtime.deviceSynchronize()
        t = time.perf_counter()
        codec.decode(arrays)
        cp.cuda.runtime.deviceSynchronize()
        times.append(time.perf_counter() - t)
    on_device = batch / statistics.median(times)
    pinned = [cp.cuda.alloc_pinned_memory(len(r)) for r in items]
    hosts = [np.frombuffer(p, np.uint8, len(r)) for p, r in zip(pinned, items)]
    for h, r in zip(hosts, items):
        h[:] = np.frombuffer(r, np.uint8)
    times = []
    for _ in range(runs):
        cp.cuda.runtime.deviceSynchronize()
        t = time.perf_counter()
        for d, h in zip(device, hosts):
            d.set(h)
        codec.decode(arrays)
        cp.cuda.runtime.deviceSynchronize()
        times.append(time.perf_counter() - t)
    return on_device, batch / statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="imgs_in/2048x1024.png")
    ap.add_argument("--photos", default="tests/data/photos")
    ap.add_argument("--count", type=int, default=32, help="distinct photo PNGs")
    ap.add_argument("--batches", default="16,64,256")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    from nvidia import nvcomp

    print(f"nvCOMP {nvcomp.__version__}; {os.cpu_count()} cores; {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    kinds = {"scene 2048x1024": [open(a.scene, "rb").read()], "photos 2048x1024": photo_pngs(a.photos, a.count, (2048, 1024))}
    for name, pngs in kinds.items():
        raws = [zlib_stream(p)[2:-4] for p in pngs]
        expected = [zlib.decompress(r, -15) for r in raws]
        mb = statistics.mean(len(r) for r in raws) / 1e6
        print(f"\n{name}: {len(pngs)} distinct, {mb:.2f} MB compressed → {len(expected[0]) / 1e6:.2f} MB an image")
        rate = cpu_rate(raws, max(1, 512 // len(raws)), os.cpu_count())
        print(f"  CPU zlib inflate, {os.cpu_count()} processes: {rate:.0f} images/s")
        for batch in map(int, a.batches.split(",")):
            try:
                dev, up = gpu_rates(nvcomp, raws, expected, batch, a.runs)
                print(f"  nvCOMP batched inflate, {batch} a call: {dev:.0f} images/s on the device, {up:.0f} with the upload")
            except Exception as e:  # report and go on: the measurement is the point
                print(f"  nvCOMP, {batch} a call: failed: {str(e)[:300]}")


if __name__ == "__main__":
    main()
