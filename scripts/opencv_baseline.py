#!/usr/bin/env python3
"""OpenCV's Sobel pipeline on the same image, timed like `cuda_sobel bench` times the CPU variants:
cvtColor → two Sobel (CV_32F) → magnitude → convertScaleAbs, median of many runs after a warm-up.
(The numbers compared are times, not bytes: OpenCV's grey weights are 0.299/0.587/0.114 and its
border is BORDER_REFLECT_101.) Also the whole pipeline, like `cuda_sobel bench`'s: imread, the same
computation, imwrite of a PNG (default compression), mean of the runs after one warm-up.
KSIZE is Sobel's (1, 3, 5 or 7; `cuda_sobel bench --ksize` passes its own).
Usage: opencv_baseline.py IMAGE [THREADS] [RUNS] [KSIZE]"""
import os
import statistics
import sys
import tempfile
import time

import cv2

path = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 50
ksize = int(sys.argv[4]) if len(sys.argv) > 4 else 3
cv2.setNumThreads(threads)
bgr = cv2.imread(path, cv2.IMREAD_COLOR)
if bgr is None:
    sys.exit(f"{path}: cannot decode")


def pipeline():
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=ksize)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=ksize)
    return cv2.convertScaleAbs(cv2.magnitude(gx, gy))


for _ in range(5):
    pipeline()
times = []
for _ in range(runs):
    t = time.perf_counter()
    pipeline()
    times.append((time.perf_counter() - t) * 1e3)
h, w = bgr.shape[:2]
print(f"opencv {cv2.__version__} {w}x{h} ksize={ksize} threads={threads}: median {statistics.median(times):.3f} ms "
      f"(min {min(times):.3f}, max {max(times):.3f}, {runs} runs)")


# Whole pipeline: decode, compute, encode (what the report's "total" measured), like cuda_sobel's rows.
out = os.path.join(tempfile.mkdtemp(), "edges.png")


def whole():
    t0 = time.perf_counter()
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    t1 = time.perf_counter()
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=ksize)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=ksize)
    edges = cv2.convertScaleAbs(cv2.magnitude(gx, gy))
    t2 = time.perf_counter()
    cv2.imwrite(out, edges)
    t3 = time.perf_counter()
    return (t1 - t0 + t3 - t2) * 1e3, (t2 - t1) * 1e3, (t3 - t0) * 1e3


whole()
rows = [whole() for _ in range(max(3, runs // 5))]
io, comp, total = (statistics.mean(r[i] for r in rows) for i in range(3))
print(f"opencv whole pipeline {w}x{h}: I/O {io:.1f} ms + computation {comp:.2f} ms = total {total:.1f} ms "
      f"(mean of {len(rows)} runs)")
