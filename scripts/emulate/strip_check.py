#!/usr/bin/env python3
"""gpu-strip's and gpu-vec16's Sobel kernel files (cuda/strip.cu, cuda/vec16.cu) run on the CPU against the scalar
reference, without a GPU.

For each build in CASES (a JSON list that tests/ksize.rs writes from `Build::defines`, so the -D options are the
ones the host gives NVRTC: [{"cli": [...], "defines": [...], "planes": [[OUTPUT, DTYPE], ...]}, ...]), builds both
files for the CPU (scripts/emulate/build.sh with strip_main.cpp; strip.cu's blocks with their threads together), runs them on random RGB images of awkward sizes
(narrower and shorter than the stencil, widths a multiple of 16 for the aligned forms, inputs starting off a 16-byte
boundary for the general form's shifted loads) for every border, gpu-strip with several rows a thread, and compares
every output plane byte for byte with `cuda_sobel --variant cpu-scalar --output OUTPUT` and the case's other options. It checks the kernels' indexing and arithmetic where no GPU is at
hand (docs/testing.md); tests/gpu.rs with the GPU required stays the word on the GPU.

usage: strip_check.py CASES.json      Needs g++, numpy and Pillow, and the cuda_sobel binary (CUDA_SOBEL_BIN).
"""
import itertools
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

from emulate import BIN, BORDERS, build, mismatch, verdict
SIZES = [(1, 1), (2, 9), (9, 2), (16, 1), (32, 3), (7, 6), (48, 5), (17, 33), (64, 40), (257, 21), (256, 22),
         (100, 9), (203, 14), (100, 50), (512, 6), (1024, 5), (768, 5)]
# (100, 50): two warps of edge groups; 512 and 1024 wide: warps of 32 groups inside one band, which store their rows
# together (strip.cu's stage_of); 768 (48 groups): warps across two bands, which do not.
# Where the input starts past a 16-byte boundary, for the widths that are not a multiple of 16 and one that is: the
# general form's groups inside a row read their bytes shifted into place from the aligned address below.
SHIFTS = {257: [5], 256: [11], 100: [3, 15], 203: [7]}
MIN_ROWS = 4  # core/src/gpu/patterns/strip.rs: the host never marches fewer rows a thread


def main():
    cases = json.load(open(sys.argv[1]))
    rng = np.random.default_rng(7)
    work = tempfile.mkdtemp()
    failures = 0
    for case in cases:
        exes = {}
        for kernel in ("strip", "vec16"):
            exes[kernel] = os.path.join(work, kernel)
            block = ["-DEMU_BLOCK"] if kernel == "strip" else []  # strip's warps vote and store together
            build(f"{kernel}.cu", exes[kernel], case["defines"] + block, driver="strip_main.cpp")
        runs = 0
        for (w, h), (name, border) in itertools.product(SIZES, BORDERS.items()):
            img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
            png, raw, out = (os.path.join(work, f) for f in ("in.png", "in.raw", "out.raw"))
            Image.fromarray(img).save(png)
            img.tofile(raw)
            want = []
            for output, dtype in case["planes"]:
                ref = os.path.join(work, f"ref_{output}.npy")
                subprocess.run([BIN, png, "--variant", "cpu-scalar", "--output", output, "--border", name, "--quiet",
                                "--out", ref] + case["cli"], check=True, capture_output=True)
                want.append(np.load(ref).astype(np.dtype(dtype)).reshape(h, w))
            dtype = np.dtype(case["planes"][0][1])
            runs_here = [("vec16", 0, 0)] + [("strip", r, 0) for r in sorted({MIN_ROWS, 5, 7, max(h, MIN_ROWS)})]
            runs_here += [(k, MIN_ROWS if k == "strip" else 0, s) for s in SHIFTS.get(w, []) for k in exes]
            for kernel, rows, shift in runs_here:
                p = subprocess.run([exes[kernel], kernel, raw, out, str(w), str(h), str(border), str(rows), str(shift)],
                                   capture_output=True, text=True)
                runs += 1
                got = np.fromfile(out, dtype=dtype).reshape(len(want), h, w) if p.returncode == 0 else None
                what = f"{kernel}, {w}×{h}, {name}, {rows} rows, input {shift} bytes past 16"
                failures += mismatch(f"{' '.join(case['cli'])} {case['planes']}: {what}", p, got, want)
        print(f"{' '.join(case['cli'])} {[o for o, _ in case['planes']]}: {runs} runs", flush=True)
    verdict(failures)


if __name__ == "__main__":
    main()
