#!/usr/bin/env python3
"""Times cuda/deflate.cu's five kernels on one image's edges — a photo's (resized, with noise) or, with --scene,
the tiled test scene's (CuPy, CUDA events after a warm-up, median of 20 runs) — and checks that the stream they
write, put in a PNG, decodes (OpenCV) to the edges it was given. A tool for tuning the kernels; batch's own rate is
scripts/batch-vs.sh (PNGs) and scripts/jpeg-batch.sh (photos). Needs CuPy, OpenCV and NumPy (the GPU machine has
them).

    python3 scripts/deflate_bench.py [--size 4000x3000] [--photo tests/data/photos/coffee.png] [--scene]
                                     [--concurrent 1,8,16,32]

--concurrent also runs that many images' kernels at once, each image on a stream of its own (as batch's slots do,
without their host synchronisations), and prints the kernels' rate in images/s: what the GPU deflate alone allows
a batch.
"""

import argparse
import os
import struct
import time
import zlib

import cupy as cp
import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PLAN_WORDS = 3 + 256 + 72 + 286 + 30  # deflate.cu's struct Plan
KERNELS = ("filter", "hash", "chain", "parse", "write")


def edges_of(path, width, height, photo):
    """The edges of a photo as batch makes them from scripts/make_photos.py's photos (resized, noise σ = 4, q90),
    or of an image as it is (`photo` False)."""
    src = cv2.imread(path, cv2.IMREAD_COLOR)
    if photo:
        src = cv2.resize(src, (width, height), interpolation=cv2.INTER_CUBIC)
        noisy = src.astype(np.float32) + np.random.default_rng(0).normal(0, 4, src.shape)
        jpeg = cv2.imencode(".jpg", np.clip(noisy, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 90])[1]
        src = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
    grey = cv2.cvtColor(src, cv2.COLOR_BGR2GRAY)
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
    ap.add_argument("--scene", action="store_true", help="imgs_in/2048x1024.png's edges instead of a photo's")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--concurrent", default="", help="comma-separated counts of images deflated at once")
    a = ap.parse_args()
    width, height = map(int, a.size.split("x"))
    if a.scene:
        edges = edges_of(os.path.join(HERE, "..", "imgs_in", "2048x1024.png"), 0, 0, photo=False)
        height, width = edges.shape
    else:
        edges = edges_of(a.photo, width, height, photo=True)
    cuda = os.path.join(HERE, "..", "cuda")
    module = cp.RawModule(code=open(os.path.join(cuda, "deflate.cu")).read(), options=("-std=c++17", "-I" + cuda))
    k = {name: module.get_function("deflate_" + name) for name in KERNELS}
    rows = max(1, 65536 // (width + 1))
    segments = -(-height // rows)
    n, segment_bytes = (width + 1) * height, (width + 1) * rows
    d_edges = cp.asarray(edges)
    plans = cp.zeros(segments * PLAN_WORDS, cp.uint32)
    bits = cp.zeros(segments, cp.uint64)
    adler = cp.zeros(2 * segments, cp.uint32)
    data = cp.zeros(n, cp.uint8)
    hashes_then_tokens, prev = cp.zeros(n, cp.uint16), cp.zeros(n, cp.uint16)
    out = cp.zeros((segments * (32 * 72 + 15) + 15 * n) // 32 + 2, cp.uint32)
    n64, seg64 = np.int64(n), np.int64(segment_bytes)
    launches = {
        "filter": ((256,), (d_edges, np.int32(width), np.int32(height), np.int32(rows), plans, data, adler)),
        "hash": ((256,), (data, n64, seg64, plans, hashes_then_tokens)),
        "chain": ((32,), (hashes_then_tokens, n64, seg64, plans, prev)),
        "parse": ((256,), (data, n64, seg64, np.int32(width), prev, hashes_then_tokens, plans, bits)),
        "write": ((256,), (data, n64, seg64, hashes_then_tokens, plans, bits, out)),
    }
    def buffers():
        return {
            "plans": cp.zeros(segments * PLAN_WORDS, cp.uint32), "bits": cp.zeros(segments, cp.uint64),
            "adler": cp.zeros(2 * segments, cp.uint32), "data": cp.zeros(n, cp.uint8),
            "ht": cp.zeros(n, cp.uint16), "prev": cp.zeros(n, cp.uint16),
            "out": cp.zeros((segments * (32 * 72 + 15) + 15 * n) // 32 + 2, cp.uint32),
        }

    def enqueue(b):
        k["filter"]((segments,), (256,), (d_edges, np.int32(width), np.int32(height), np.int32(rows), b["plans"],
                                          b["data"], b["adler"]))
        k["hash"]((segments,), (256,), (b["data"], n64, seg64, b["plans"], b["ht"]))
        k["chain"]((segments,), (32,), (b["ht"], n64, seg64, b["plans"], b["prev"]))
        k["parse"]((segments,), (256,), (b["data"], n64, seg64, np.int32(width), b["prev"], b["ht"], b["plans"],
                                         b["bits"]))
        k["write"]((segments,), (256,), (b["data"], n64, seg64, b["ht"], b["plans"], b["bits"], b["out"]))

    rates = []
    for count in [int(c) for c in a.concurrent.split(",") if c]:
        copies = [buffers() for _ in range(count)]
        streams = [cp.cuda.Stream(non_blocking=True) for _ in range(count)]
        reps = max(2, 256 // count)
        for warm in (True, False):
            cp.cuda.runtime.deviceSynchronize()
            t = time.perf_counter()
            for _ in range(1 if warm else reps):
                for b, st in zip(copies, streams):
                    with st:
                        enqueue(b)
            cp.cuda.runtime.deviceSynchronize()
            elapsed = time.perf_counter() - t
        rates.append(f"{count} at once {count * reps / elapsed:.0f} images/s")
        del copies
    events = [cp.cuda.Event() for _ in range(len(KERNELS) + 1)]
    times = []
    for _ in range(a.runs + 1):
        events[0].record()
        for i, name in enumerate(KERNELS):
            if name == "write":
                out.fill(0)
            block, args = launches[name]
            k[name]((segments,), block, args)
            events[i + 1].record()
        events[-1].synchronize()
        times.append([cp.cuda.get_elapsed_time(events[i], events[i + 1]) for i in range(len(KERNELS))])
    ms = np.median(np.array(times[1:]), axis=0)
    total_bits = int(bits.sum())
    stream = out.get().view(np.uint8)[: (total_bits + 7) // 8].tobytes()
    inflated = zlib.decompress(stream, -15)
    decoded = cv2.imdecode(np.frombuffer(as_png(stream, inflated, width, height), np.uint8), cv2.IMREAD_UNCHANGED)
    ok = len(inflated) == n and decoded is not None and np.array_equal(decoded, edges)
    plan = plans.get().reshape(segments, PLAN_WORDS)
    filters, strings = np.bincount(plan[:, 0], minlength=5), int(plan[:, 1].sum())
    mb = n / 1e6
    print(f"{width}×{height}, {segments} segments ({strings} looking for strings): "
          + ", ".join(f"{name} {t:.3f} ms" for name, t in zip(KERNELS, ms))
          + f" ({mb / ms.sum():.1f} GB/s of image data); stream {len(stream) / 1e6:.3f} MB "
          f"({len(stream) / 1e6 / mb:.3f} of the data; zlib level 5 on the same rows: "
          f"{len(zlib.compress(inflated, 5)) / 1e6:.3f} MB); filters None/Sub/Up/Avg/Paeth {filters.tolist()}; "
          f"inflates to the edges: {ok}")
    if rates:
        print("the five kernels, each image on a stream of its own: " + "; ".join(rates))


if __name__ == "__main__":
    main()
