#!/usr/bin/env python3
"""gpu-strip's filter kernel (cuda/conv_strip.cu) run on the CPU against the scalar reference, without a GPU.

Builds the kernel file for the CPU (scripts/emulate/build.sh) per kernel and columns a thread, runs it on random RGB
images of awkward sizes (narrower and shorter than the filter included) for every border and several rows a thread,
and compares each output byte for byte with `cuda_sobel filter --rgb --variant cpu-scalar`. This checks the march's
indexing, its three ways of reading a row and its arithmetic where no GPU is at hand (docs/testing.md); the GPU
checks (tests/filter.rs with the GPU required, memcheck: scripts/studies-check.sh) remain the word on the GPU.

usage: conv_strip_check.py [KERNELS [COLUMNS]]   e.g. box:3,box:15,scharr:9 0,8  (0: the file's own)
Needs g++, numpy and Pillow, and target/release/cuda_sobel (CUDA_SOBEL_BIN overrides).
"""
import itertools
import os
import subprocess
import sys
import tempfile
from math import comb

import numpy as np
from PIL import Image

from emulate import BIN, BORDERS, build, mismatch, verdict
SIZES = [(1, 1), (2, 9), (9, 2), (7, 3), (48, 5), (17, 33), (64, 40), (72, 40), (256, 70), (257, 70), (483, 54), (1024, 40),
         (1933, 61)]


def defines(kernel):
    """The -D options src/gpu/conv.rs gives gpu-strip for these named kernels (defines + factor_defines)."""
    kind, d = kernel.split(":")
    d = int(d)
    r = (d - 1) // 2
    ones = [1] * d
    if kind == "box":
        column, row, divisor, extra = ones, ones, d * d, ["-DCONV_NONNEG=1", "-DCONV_FLAT=1"]
    elif kind == "gaussian":
        column = row = [comb(d - 1, i) for i in range(d)]
        divisor, extra = sum(column) ** 2, ["-DCONV_NONNEG=1"]
    elif kind == "scharr":  # the 3×3 Scharr dilated by r: rows −r, 0, +r of columns −r and +r
        column = [3 if i in (0, d - 1) else 10 if i == r else 0 for i in range(d)]
        row = [-1 if i == 0 else 1 if i == d - 1 else 0 for i in range(d)]
        divisor, extra = 1, ["-DCONV_GRADIENT=1"] + ([f"-DCONV_STRIDE={r}"] if r > 1 else [])  # ring_stride: r
    elif kind == "sobel":  # OpenCV's getDerivKernels: ksize 1 is [-1 0 1] with no smoothing across
        row = {1: [-1, 0, 1], 3: [-1, 0, 1], 5: [-1, -2, 0, 2, 1], 7: [-1, -4, -5, 0, 5, 4, 1]}[d]
        column = [0, 1, 0] if d == 1 else [comb(d - 1, i) for i in range(d)]
        r = len(row) // 2
        divisor, extra = 1, ["-DCONV_GRADIENT=1"]
    else:
        sys.exit(f"{kernel}: box, gaussian, scharr or sobel")
    if divisor > 1 and 255 * divisor + divisor // 2 > 2**31 - 1:  # ConvKernel::wide: the sums need 64 bits
        extra.append("-DCONV_WIDE=1")
    if "-DCONV_GRADIENT=1" in extra:  # ConvKernel::bound: 255·Σ|K|, K = column ⊗ row
        extra.append(f"-DCONV_BOUND={255 * sum(map(abs, column)) * sum(map(abs, row))}")
    listed = lambda v: ",".join(map(str, v))
    return [f"-DCONV_R={r}", f"-DCONV_DIVISOR={divisor}", f"-DCONV_COLUMN={listed(column)}",
            f"-DCONV_ROW={listed(row)}"] + extra


def rows_for(w, h, planes, columns, r):
    """core/src/gpu/patterns/conv_strip.rs's rows_for, for images below its WIDE_PIXELS (all this check makes); r is the
    ring's radius in the rows it keeps."""
    strips = -(-w // columns) * h * planes
    rows = max(-(-strips // (1 << 20)), 2 * r + 1, 8) if strips >= 1 << 21 else max(strips >> 18, 1)
    return min(rows, max(h, 1))


def main():
    kernels = sys.argv[1].split(",") if len(sys.argv) > 1 else ["box:3", "box:15", "gaussian:5", "scharr:3", "scharr:9"]
    columns = [int(c) for c in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0]
    rng = np.random.default_rng(5)
    work = tempfile.mkdtemp()
    failures = 0
    for kernel, g in itertools.product(kernels, columns):
        d = defines(kernel)
        r = int(d[0].split("=")[1])
        stride = next((int(o.split("=")[1]) for o in d if o.startswith("-DCONV_STRIDE=")), 1)
        cols = g or (16 if "-DCONV_FLAT=1" in d else 4)
        exe = os.path.join(work, "conv_strip")
        extra = [f"-DSTRIP_G={g}"] if g else []
        build("conv_strip.cu", exe, d + extra)
        runs = 0
        for (w, h), (name, border) in itertools.product(SIZES, BORDERS.items()):
            img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
            png, ref_png, raw, out = (os.path.join(work, f) for f in ("in.png", "ref.png", "in.raw", "out.raw"))
            Image.fromarray(img).save(png)
            subprocess.run([BIN, "filter", png, "--kernel", kernel, "--rgb", "--border", name, "--variant",
                            "cpu-scalar", "--out", ref_png], check=True, capture_output=True)
            want = np.asarray(Image.open(ref_png))
            np.ascontiguousarray(img.transpose(2, 0, 1)).tofile(raw)
            for rows in sorted({rows_for(w, h, 3, cols, r // stride), 2 * r + 1, 3, 1}):
                p = subprocess.run([exe, raw, out, str(w), str(h), "3", str(border), str(rows), str(cols)],
                                   capture_output=True, text=True)
                runs += 1
                got = np.fromfile(out, dtype=np.uint8).reshape(3, h, w).transpose(1, 2, 0) if p.returncode == 0 else None
                failures += mismatch(f"{kernel}, {cols} columns, {w}×{h}, {name}, {rows} rows", p,
                                     None if got is None else [got], [want])
        print(f"{kernel}, {cols} columns a thread: {runs} runs", flush=True)
    verdict(failures)


if __name__ == "__main__":
    main()
