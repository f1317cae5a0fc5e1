#!/usr/bin/env python3
"""Issue 27's Python targets, on the CPU, two builds of the package side by side in one run:

    python3 scripts/python_inputs_bench.py --site prev=/tmp/prev-site --site new= [--size 6000] [--calls 15]

Each --site NAME=DIR runs in its own process with DIR first on sys.path (empty: the installed package), so
that two versions of `cuda_sobel` can be timed on the same machine, alternately, in one run. Times the whole
call (wall clock, median of --calls after 2 warm-ups) on a NumPy image of SIZE² in each layout a user holds —
packed RGB, grey H×W, OpenCV's BGR (`bgr=True`), RGBA, a strided view — and `gradients` on RGB. Prints a
Markdown table: ms per call, and each layout's time over packed RGB's.
"""

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1]) if sys.argv[1] else None
import numpy as np, cuda_sobel as cs
n, calls = int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
rgb = rng.integers(0, 256, (n, n, 3), dtype=np.uint8)
wide = rng.integers(0, 256, (n, n + 64, 3), dtype=np.uint8)
cases = {
    "rgb": lambda: cs.sobel(rgb),
    "grey": (lambda g: lambda: cs.sobel(g))(np.ascontiguousarray(rgb[:, :, 1])),
    "bgr": lambda: cs.sobel(rgb, bgr=True),
    "rgba": (lambda a: lambda: cs.sobel(a))(np.concatenate([rgb, np.full((n, n, 1), 255, np.uint8)], axis=2)),
    "strided": lambda: cs.sobel(wide[:, 32:32 + n]),
    "gradients": lambda: cs.gradients(rgb),
}
out = {}
for name, f in cases.items():
    try:
        for _ in range(2):
            f()
        times = []
        for _ in range(calls):
            t = time.perf_counter(); f(); times.append(time.perf_counter() - t)
        out[name] = 1e3 * statistics.median(times)
    except Exception as e:  # a layout the build does not take
        out[name] = f"{type(e).__name__}: {e}"[:60]
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", action="append", required=True, help="NAME=DIR (DIR empty: the installed package)")
    ap.add_argument("--size", type=int, default=6000)
    ap.add_argument("--calls", type=int, default=15)
    a = ap.parse_args()
    results = {}
    for spec in a.site:
        name, _, site = spec.partition("=")
        r = subprocess.run([sys.executable, "-c", CHILD, site, str(a.size), str(a.calls)], capture_output=True,
                           text=True, check=True)
        results[name] = json.loads(r.stdout)
    names = list(results)
    cases = list(results[names[0]])
    print(f"{a.size}×{a.size}, NumPy in, wall clock per call, median of {a.calls} (ms; × = over packed RGB's)\n")
    print("| layout | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for case in cases:
        cells = []
        for n in names:
            v, base = results[n][case], results[n]["rgb"]
            cells.append(f"{v:.1f} ({v / base:.2f}×)" if isinstance(v, float) else str(v))
        print(f"| {case} | " + " | ".join(cells) + " |")
    if len(names) == 2 and all(isinstance(results[n]["gradients"], float) for n in names):
        print(f"\ngradients: {results[names[0]]['gradients'] / results[names[1]]['gradients']:.2f}× faster in {names[1]}")


if __name__ == "__main__":
    main()
