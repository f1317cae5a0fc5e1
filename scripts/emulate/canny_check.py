#!/usr/bin/env python3
"""Canny's kernels (cuda/canny.cu: the suppression with its warp votes, the link, the edges) run on the CPU against
the scalar reference, without a GPU.

Builds the kernel file for the CPU (scripts/emulate/build.sh with canny_main.cpp and -DEMU_BLOCK: a block's 32×8
threads as CPU threads that meet at each barrier, shuffle and vote, under AddressSanitizer) for aperture 3 in both
norms, runs it on grey images of awkward sizes (1×1, a row, a column, odd sizes, a launch block and one pixel more,
several blocks), noise, a checkerboard, the test scene and a one-pixel spiral whose one chain crosses every seam, at
a threshold pair or two, and compares the edges byte for byte with `cuda_sobel --output canny --variant cpu-scalar`.
It checks the kernels' indexing and their union-find's logic where no GPU is at hand (docs/testing.md); tests/canny.rs
with the GPU required stays the word on the GPU.

usage: canny_check.py      Needs g++, numpy and Pillow, and the cuda_sobel binary (CUDA_SOBEL_BIN).
"""
import os
import subprocess
import tempfile

import numpy as np
from PIL import Image

from emulate import BIN, build, mismatch, verdict

# Aperture 3's words: 16 bits with L1, 32 with L2 (core/src/canny.rs, `Canny::words`; core/src/gpu/build.rs's defines).
NORMS = {"l1": ["-DOUTPUT=4", "-DOUT_GRADIENT_T=1", "-DNORM_L1=1"], "l2": ["-DOUTPUT=4", "-DOUT_GRADIENT_T=2"]}
# Several warps across a row of blocks (65 and 130 wide) and several launch blocks down (34 high).
SIZES = [(1, 1), (2, 9), (9, 2), (33, 17), (65, 17), (130, 34)]
THRESHOLDS = {"noise": [(20, 60), (150, 50)], "checkerboard": [(50, 150)], "scene": [(20, 60), (50, 150)],
              "spiral": [(60, 500)]}  # (150, 50): swapped; the spiral's: every edge hangs on its seed


def images(work, rng):
    """(name, grey) pairs: noise and a checkerboard at every size, the scene and the spiral (cuda_sobel generate)."""
    for w, h in SIZES:
        yield f"noise {w}×{h}", rng.integers(0, 256, (h, w), dtype=np.uint8)
        yield f"checkerboard {w}×{h}", np.where((np.add.outer(np.arange(h), np.arange(w)) % 2) == 0, 200, 10).astype(np.uint8)
    for name, flag in (("scene", []), ("spiral", ["--spiral"])):
        path = os.path.join(work, f"{name}.png")
        subprocess.run([BIN, "generate", "300x200", *flag, "--out", path], check=True, capture_output=True)
        yield f"{name} 300×200", np.asarray(Image.open(path).convert("RGB"))[:, :, 0].copy()


def main():
    rng = np.random.default_rng(11)
    work = tempfile.mkdtemp()
    failures = 0
    cases = list(images(work, rng))
    for norm, defines in NORMS.items():
        runs = 0
        exe = os.path.join(work, f"canny_{norm}")
        build("canny.cu", exe, defines + ["-DEMU_BLOCK", "-fsanitize=address"], driver="canny_main.cpp")
        for name, grey in cases:
            h, w = grey.shape
            png, raw, out, ref = (os.path.join(work, f) for f in ("in.png", "in.raw", "out.raw", "ref.png"))
            Image.fromarray(np.stack([grey] * 3, axis=2)).save(png)  # R = G = B: every grey rule gives `grey`
            grey.tofile(raw)
            pairs = THRESHOLDS[name.split()[0]]
            for low, high in pairs:
                subprocess.run([BIN, png, "--variant", "cpu-scalar", "--output", "canny", "--low", str(low), "--high",
                                str(high), "--norm", norm, "--quiet", "--out", ref], check=True, capture_output=True)
                want = [np.asarray(Image.open(ref))]
                lo, hi = sorted((low, high))  # as Canny::thresholds passes them: swapped, squared for L2
                lo, hi = (lo * lo, hi * hi) if norm == "l2" else (lo, hi)
                p = subprocess.run([exe, raw, out, str(w), str(h), str(lo), str(hi)], capture_output=True, text=True)
                runs += 1
                got = [np.fromfile(out, dtype=np.uint8).reshape(h, w)] if p.returncode == 0 else None
                failures += mismatch(f"{norm}, {name}, {low}/{high}", p, got, want)
        print(f"canny.cu, {norm}: {runs} runs", flush=True)
    verdict(failures)


if __name__ == "__main__":
    main()
