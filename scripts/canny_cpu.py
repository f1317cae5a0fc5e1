#!/usr/bin/env python3
"""Canny on the CPU against OpenCV's, on the same image and the same cores (docs/performance.md, "CPU"):

    python3 scripts/canny_cpu.py [IMAGE] [--runs 30]

`cuda_sobel.canny(rgb, L, H, ksize=K, grey="bt601")` (cpu-rayon, from the RGB image) beside
`cv2.Canny(cv2.cvtColor(bgr, COLOR_BGR2GRAY), L, H, apertureSize=K)` — the same bytes, which the script checks —
for apertures 3, 5 and 7 (thresholds 50/150; 400/1200 for 7, whose gradients OpenCV scales by 1/16), each the median
of RUNS calls after one warm-up, OpenCV on as many threads as the cores. Each library is timed alone in a process of
its own, as a user runs it: with OpenCV's thread pool in the same process, this Canny took up to 15 % longer on 16 cores
(H200 host, 2048×1024). Needs NumPy, Pillow and OpenCV.
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np
from PIL import Image

APERTURES = {3: (50, 150), 5: (50, 150), 7: (400, 1200)}


def median_ms(f, runs):
    f()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return sorted(times)[runs // 2] * 1e3


def calls(side, rgb):
    """The call of `side` ("ours" or "cv2") for each aperture, importing only that side's library."""
    if side == "ours":
        import cuda_sobel

        return {k: (lambda k=k, t=t: cuda_sobel.canny(rgb, *t, ksize=k, grey="bt601")) for k, t in APERTURES.items()}
    import cv2

    cv2.setNumThreads(os.cpu_count() or 1)
    bgr = np.ascontiguousarray(rgb[..., ::-1])
    return {k: (lambda k=k, t=t: cv2.Canny(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), *t, apertureSize=k))
            for k, t in APERTURES.items()}


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image", nargs="?", default=os.path.join(root, "imgs_in", "2048x1024.png"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--time", choices=("ours", "cv2"), help=argparse.SUPPRESS)  # one side, in its own process
    a = ap.parse_args()
    rgb = np.ascontiguousarray(np.asarray(Image.open(a.image).convert("RGB")))
    if a.time:
        for k, f in calls(a.time, rgb).items():
            print(k, median_ms(f, a.runs))
        return
    import cv2

    ours, theirs = calls("ours", rgb), calls("cv2", rgb)
    for k in APERTURES:
        assert np.array_equal(ours[k](), theirs[k]()), f"aperture {k}: the bytes differ from cv2.Canny's"
    del ours, theirs

    def timed(side):
        run = [sys.executable, os.path.abspath(__file__), a.image, "--runs", str(a.runs), "--time", side]
        lines = subprocess.run(run, check=True, capture_output=True, text=True).stdout.split()
        return {int(k): float(ms) for k, ms in zip(lines[::2], lines[1::2])}

    mine, opencv = timed("ours"), timed("cv2")
    print(f"{a.image}: {rgb.shape[1]}×{rgb.shape[0]}, {os.cpu_count()} cores, OpenCV {cv2.__version__}, "
          f"median of {a.runs}, each library alone in its process")
    print("| aperture | cuda_sobel.canny | cv2 cvtColor + Canny | ratio |")
    print("|---|---|---|---|")
    for k in APERTURES:
        print(f"| {k} | {mine[k]:.2f} ms | {opencv[k]:.2f} ms | {opencv[k] / mine[k]:.2f}× |")


if __name__ == "__main__":
    main()
