#!/usr/bin/env python3
"""gpu-strip's Canny (cuda/strip.cu's Canny build, then cuda/canny.cu's link and edges) run on the CPU against the
scalar reference, without a GPU.

For each build in CASES (a JSON list that tests/canny.rs writes from `Build::canny`, so the -D options are the ones the
host gives NVRTC: [{"cli": [...], "defines": [...], "ksize": K, "norm": "l1"|"l2"}, ...]), builds both kernel files into
one program for the CPU (scripts/emulate/build.sh with canny_main.cpp), runs it on random RGB images of awkward sizes
(1×1, narrower and shorter than the aperture, odd sizes, widths a multiple of 16 for the aligned form, inputs starting
off a 16-byte boundary for the general form's shifted loads) and on a one-pixel spiral, for every border, several
rows a thread and threshold pairs (swapped, zero, negative), and compares the edges byte for byte with
`cuda_sobel --variant cpu-scalar --output canny` and the case's other options. It checks the kernels' indexing and
arithmetic where no GPU is at hand (docs/testing.md); tests/canny.rs with the GPU required stays the word on the GPU.

usage: canny_check.py CASES.json      Needs g++, numpy and Pillow, and the cuda_sobel binary (CUDA_SOBEL_BIN).
"""
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

from emulate import BIN, BORDERS, ROOT, build, mismatch, verdict

SIZES = [(1, 1), (2, 9), (9, 2), (3, 3), (16, 2), (32, 5), (7, 6), (48, 7), (17, 33), (64, 40), (257, 21), (256, 22),
         (100, 9), (203, 14), (100, 50)]  # (100, 50): two warps of edge groups
SHIFTS = {257: [5], 256: [11], 100: [3], 203: [7]}
MIN_ROWS = 4  # core/src/gpu/patterns/strip.rs: the host never marches fewer rows a thread


def thresholds(low, high, ksize, norm):
    """`Canny::thresholds` (core/src/canny.rs), clamped to int as `Thresholds::of` does."""
    low, high = (high, low) if low > high else (low, high)
    if ksize == 7:
        low, high = low / 16, high / 16
    if norm == "l2":
        def square(t):
            t = min(t, 32767.0)
            return t * t if t > 0 else t
        low, high = square(low), square(high)
    clamp = lambda t: max(-2**31, min(2**31 - 1, math.floor(t)))
    return clamp(low), clamp(high)


def spiral(w, h):
    """A one-pixel line winding inwards (as `cuda_sobel generate --spiral`): one chain through every band."""
    out = os.path.join(tempfile.mkdtemp(), "spiral.png")
    subprocess.run([BIN, "generate", f"{w}x{h}", "--spiral", "--out", out], check=True, capture_output=True)
    return np.asarray(Image.open(out).convert("RGB"))


def main():
    cases = json.load(open(sys.argv[1]))
    rng = np.random.default_rng(11)
    work = tempfile.mkdtemp()
    both = os.path.join(work, "both.cu")
    with open(both, "w") as f:  # the two kernel files in one program, as build.sh inlines their headers once
        f.write(f'#include "{ROOT}/cuda/strip.cu"\n#include "{ROOT}/cuda/canny.cu"\n')
    failures = 0
    for case in cases:
        exe = os.path.join(work, "canny")
        build(both, exe, case["defines"], driver="canny_main.cpp")
        k, norm = case["ksize"], case["norm"]
        pairs = [(20.0 * k * k / 9, 60.0 * k * k / 9), (150.0, 50.0), (0.0, 0.0), (-5.0, 400.0)]
        if k == 7:
            pairs = [(lo * 16, hi * 16) for lo, hi in pairs]
        images = [((w, h), rng.integers(0, 256, (h, w, 3), dtype=np.uint8) // (1 + (w * h) % 3)) for w, h in SIZES]
        images += [((96, 200), spiral(96, 200)), ((80, 64), spiral(80, 64))]
        runs = 0
        for ((w, h), img), (name, border) in itertools.product(images, BORDERS.items()):
            png, raw, out = (os.path.join(work, f) for f in ("in.png", "in.raw", "out.raw"))
            Image.fromarray(img).save(png)
            img.tofile(raw)
            for p, (low, high) in enumerate(pairs):
                if (w, h) in ((96, 200), (80, 64)):
                    low, high = (60.0, 500.0) if k != 7 else (960.0, 8000.0)
                    if p > 0:
                        break
                ref = os.path.join(work, "ref.npy")
                subprocess.run([BIN, png, "--variant", "cpu-scalar", "--output", "canny", "--low", str(low), "--high",
                                str(high), "--norm", norm, "--border", name, "--quiet", "--out", ref] + case["cli"],
                               check=True, capture_output=True)
                want = [np.load(ref).astype(np.uint8).reshape(h, w)]
                t_low, t_high = thresholds(low, high, k, norm)
                rows_here = sorted({MIN_ROWS, 6, max(h + h % 2, MIN_ROWS)})
                runs_here = [(r, 0) for r in rows_here] + [(MIN_ROWS, s) for s in SHIFTS.get(w, [])]
                for rows, shift in runs_here:
                    proc = subprocess.run([exe, raw, out, str(w), str(h), str(border), str(rows), str(shift),
                                           str(t_low), str(t_high)], capture_output=True, text=True)
                    runs += 1
                    got = [np.fromfile(out, dtype=np.uint8).reshape(h, w)] if proc.returncode == 0 else None
                    what = f"{w}×{h}, {name}, {low}/{high}, {rows} rows, input {shift} bytes past 16"
                    failures += mismatch(f"{' '.join(case['cli'])} {norm}: {what}", proc, got, want)
        print(f"{' '.join(case['cli'])} --norm {norm}: {runs} runs", flush=True)
    verdict(failures)


if __name__ == "__main__":
    main()
