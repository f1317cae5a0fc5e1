#!/usr/bin/env python3
"""Canny on the CPU against OpenCV's, on the same image and the same cores (docs/performance.md, "CPU"):

    python3 scripts/canny_cpu.py [IMAGE] [--runs 30]

`cuda_sobel.canny(rgb, L, H, ksize=K, grey="bt601")` (cpu-rayon, from the RGB image) beside
`cv2.Canny(cv2.cvtColor(bgr, COLOR_BGR2GRAY), L, H, apertureSize=K)` — the same bytes, which the script checks —
for apertures 3, 5 and 7 (thresholds 50/150; 400/1200 for 7, whose gradients OpenCV scales by 1/16), each the median
of RUNS calls after one warm-up, OpenCV on as many threads as the cores. Needs NumPy, Pillow and OpenCV.
"""

import argparse
import os
import time

import cv2
import numpy as np
from PIL import Image

import cuda_sobel


def median_ms(f, runs):
    f()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return sorted(times)[runs // 2] * 1e3


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image", nargs="?", default=os.path.join(root, "imgs_in", "2048x1024.png"))
    ap.add_argument("--runs", type=int, default=30)
    a = ap.parse_args()
    rgb = np.ascontiguousarray(np.asarray(Image.open(a.image).convert("RGB")))
    bgr = np.ascontiguousarray(rgb[..., ::-1])
    cv2.setNumThreads(os.cpu_count() or 1)
    print(f"{a.image}: {rgb.shape[1]}×{rgb.shape[0]}, {os.cpu_count()} cores, OpenCV {cv2.__version__}, "
          f"median of {a.runs}")
    print("| aperture | cuda_sobel.canny | cv2 cvtColor + Canny | ratio |")
    print("|---|---|---|---|")
    for k in (3, 5, 7):
        low, high = (400, 1200) if k == 7 else (50, 150)
        ours = lambda: cuda_sobel.canny(rgb, low, high, ksize=k, grey="bt601")
        theirs = lambda: cv2.Canny(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), low, high, apertureSize=k)
        assert np.array_equal(ours(), theirs()), f"aperture {k}: the bytes differ from cv2.Canny's"
        a_ms, b_ms = median_ms(ours, a.runs), median_ms(theirs, a.runs)
        print(f"| {k} | {a_ms:.2f} ms | {b_ms:.2f} ms | {b_ms / a_ms:.2f}× |")


if __name__ == "__main__":
    main()
