#!/usr/bin/env python3
"""gpu-strip's tuning constants, swept quickly on the GPU machine: each setting is a CUDA_SOBEL_DEFINES string
(NVRTC -D options, src/gpu/compile.rs) run in its own process through the Python package on a CuPy array, so no
image file is made or read. Times `cuda_sobel.sobel(x, ksize=k, out=o)` with CUDA events (median of --reps
single calls after a warm-up, Python's call overhead included: ~20 µs, under 5 % at 16384²) and a device copy
of the same bytes in the same process, and prints GB/s and % of that copy's bandwidth.

    PYTHONPATH=site python3 scripts/strip_sweep.py --ksize 5 7 --size 16384 --setting= --setting=-DSTRIP_MIN_BLOCKS=4

It ranks settings; the figures the docs cite come from `cuda_sobel bench` (scripts/stencil-bench.sh).
"""

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, statistics, sys
import cupy as cp, cuda_sobel as cs
k, n, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
x = cp.random.randint(0, 256, (n, n, 3), dtype=cp.uint8)
o = cp.empty((n, n), cp.uint8)
src, dst = cp.empty(2 * n * n, cp.uint8), cp.empty(2 * n * n, cp.uint8)

def median_ms(f):
    f(); cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(); f(); b.record(); b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return statistics.median(times)

kernel = median_ms(lambda: cs.sobel(x, ksize=k, out=o))
copy = median_ms(lambda: dst.__setitem__(slice(None), src))
print(json.dumps({"ms": kernel, "gbs": 4 * n * n / kernel / 1e6, "copy_gbs": 4 * n * n / copy / 1e6}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ksize", type=int, nargs="+", default=[5, 7])
    ap.add_argument("--size", type=int, nargs="+", default=[16384])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--setting", action="append", help="a CUDA_SOBEL_DEFINES string; repeat it (--setting=-D…)")
    a = ap.parse_args()
    print("| ksize | size | setting | µs | GB/s | % of copy |\n|---|---|---|---|---|---|")
    for k in a.ksize:
        for n in a.size:
            for setting in a.setting or [""]:
                env = dict(os.environ, CUDA_SOBEL_DEFINES=setting)
                r = subprocess.run([sys.executable, "-c", CHILD, str(k), str(n), str(a.reps)], env=env,
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"| {k} | {n}² | {setting or 'default'} | failed: {r.stderr.strip().splitlines()[-1:]} |")
                    continue
                m = json.loads(r.stdout)
                print(f"| {k} | {n}² | {setting or 'default'} | {1e3 * m['ms']:.1f} | {m['gbs']:.0f} | "
                      f"{100 * m['gbs'] / m['copy_gbs']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
