#!/usr/bin/env python3
"""The peer in "what a user waits for": OpenCV's imread → Sobel → imwrite, timed as a user meets it.

  opencv_wait.py one IMAGE [RUNS]        a whole `python3 -c …` process per run (interpreter and cv2 import
                                         included, as `cuda_sobel IMAGE` includes its process start); median
                                         and min…max of RUNS (default 5)
  opencv_wait.py folder DIR OUT [PROCS]  every image of DIR through a process pool of PROCS workers
                                         (default: every core); images/s of the whole folder

The computation is cvtColor → two Sobel (CV_32F) → magnitude → convertScaleAbs, as scripts/opencv_baseline.py;
imwrite at OpenCV's default PNG level. bench/one-image.sh, bench/pngs.sh and bench/photos.sh run it beside
cuda_sobel, so that the numbers sit side by side.
"""
import os
import statistics
import subprocess
import sys
import time

ONE = """
import cv2, sys
img = cv2.imread(sys.argv[1], cv2.IMREAD_COLOR)
grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
cv2.imwrite(sys.argv[2], cv2.convertScaleAbs(cv2.magnitude(gx, gy)))
"""


def edges(job):
    import cv2

    src, dst = job
    img = cv2.imread(src, cv2.IMREAD_COLOR)
    if img is None:
        return False
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.imwrite(dst, cv2.convertScaleAbs(cv2.magnitude(gx, gy)))


def one(image, runs):
    out = "/tmp/opencv_wait_edges.png"
    times = []
    for _ in range(runs + 1):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", ONE, image, out], check=True)
        times.append(time.perf_counter() - t)
    times = times[1:]  # the first run warms the file cache
    print(f"opencv one {image}: {statistics.median(times):.3f} s ({min(times):.3f} … {max(times):.3f}), {runs} runs")


def folder(directory, out, procs):
    from multiprocessing import Pool

    os.makedirs(out, exist_ok=True)
    names = sorted(n for n in os.listdir(directory) if not n.startswith("."))
    jobs = [(os.path.join(directory, n), os.path.join(out, os.path.splitext(n)[0] + "_opencv.png")) for n in names]
    with Pool(procs) as pool:
        pool.map(edges, jobs[: procs * 2])  # warm the workers and the file cache
        t = time.perf_counter()
        ok = sum(pool.map(edges, jobs))
        seconds = time.perf_counter() - t
    print(f"opencv folder {directory}: {ok} of {len(jobs)} images in {seconds:.2f} s = {ok / seconds:.1f} images/s "
          f"({procs} processes)")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "one":
        one(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
    elif len(sys.argv) >= 4 and sys.argv[1] == "folder":
        folder(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else os.cpu_count())
    else:
        sys.exit(__doc__)
