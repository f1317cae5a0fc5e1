#!/usr/bin/env python3
"""Times cuda/deflate.cu's two kernels on one photo's edges (CuPy, CUDA events after a warm-up, median of 20
runs) and checks that the stream they write, put in a PNG, decodes (OpenCV) to the edges it was given. A tool for tuning the kernels; batch's own rate is scripts/jpeg-batch.sh.
Needs CuPy, OpenCV and NumPy (the GPU machine has them).

    python3 scripts/deflate_bench.py [--size 4000x3000] [--photo tests/data/photos/coffee.png]
"""

import argparse
import os
import struct
import zlib

import cupy as cp
import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PLAN_WORDS = 2 + 64 + 257  # deflate.cu's struct Plan


def edges_of_photo(path, width, height):
    """A photo's edges as batch makes them from scripts/make_photos.py's photos (resized, noise σ = 4, q90)."""
    src = cv2.resize(cv2.imread(path, cv2.IMREAD_COLOR), (width, height), interpolation=cv2.INTER_CUBIC)
    noisy = np.clip(src.astype(np.float32) + np.random.default_rng(0).normal(0, 4, src.shape), 0, 255).astype(np.uint8)
    jpeg = cv2.imdecode(cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 90])[1], cv2.IMREAD_COLOR)
    grey = cv2.cvtColor(jpeg, cv2.COLOR_BGR2GRAY)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    return np.minimum(255, np.rint(np.sqrt(gx * gx + gy * gy))).astype(np.uint8)


def as_png(stream, data, width, height):
    """A grey PNG around the raw deflate `stream` (zlib header and the Adler-32 of the inflated `data` added)."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = b"\x78\x01" + stream + struct.pack(">I", zlib.adler32(data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="4000x3000")
    ap.add_argument("--photo", default=os.path.join(HERE, "..", "tests", "data", "photos", "coffee.png"))
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    width, height = map(int, a.size.split("x"))
    edges = edges_of_photo(a.photo, width, height)
    module = cp.RawModule(code=open(os.path.join(HERE, "..", "cuda", "deflate.cu")).read(), options=("-std=c++17",))
    plan_k, write_k = module.get_function("deflate_plan"), module.get_function("deflate_write")
    rows = max(1, 65536 // (width + 1))
    segments = -(-height // rows)
    d_edges = cp.asarray(edges)
    plans = cp.zeros(segments * PLAN_WORDS, cp.uint32)
    bits = cp.zeros(segments, cp.uint64)
    adler = cp.zeros(2 * segments, cp.uint32)
    out = cp.zeros((segments * (32 * 64 + 15) + 15 * (width + 1) * height) // 32 + 2, cp.uint32)
    args = (d_edges, np.int32(width), np.int32(height), np.int32(rows))
    start, mid, end = cp.cuda.Event(), cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(a.runs + 1):
        start.record()
        plan_k((segments,), (256,), args + (plans, bits, adler))
        mid.record()
        out.fill(0)
        write_k((segments,), (256,), args + (plans, bits, out))
        end.record()
        end.synchronize()
        times.append((cp.cuda.get_elapsed_time(start, mid), cp.cuda.get_elapsed_time(mid, end)))
    plan_ms, write_ms = np.median(np.array(times[1:]), axis=0)
    total_bits = int(bits.sum())
    stream = out.get().view(np.uint8)[: (total_bits + 7) // 8].tobytes()
    data = zlib.decompress(stream, -15)
    decoded = cv2.imdecode(np.frombuffer(as_png(stream, data, width, height), np.uint8), cv2.IMREAD_UNCHANGED)
    ok = len(data) == (width + 1) * height and decoded is not None and np.array_equal(decoded, edges)
    filters = np.bincount(plans.get().reshape(segments, PLAN_WORDS)[:, 0], minlength=5)
    mb = (width + 1) * height / 1e6
    print(f"{width}×{height}, {segments} segments: plan {plan_ms:.3f} ms, write {write_ms:.3f} ms "
          f"({mb / (plan_ms + write_ms):.1f} GB/s of image data); stream {len(stream) / 1e6:.3f} MB "
          f"({len(stream) / 1e6 / mb:.3f} of the data); filters None/Sub/Up/Avg/Paeth {filters.tolist()}; "
          f"inflates to the edges: {ok}")


if __name__ == "__main__":
    main()
