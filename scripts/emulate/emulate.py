"""What scripts/emulate's checks (conv_strip_check.py, strip_check.py) share: where the repository and the binary
under test are, the border codes, building a kernel file for the CPU, comparing a run's output with the reference,
and the verdict line the tests look for."""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("CUDA_SOBEL_BIN", os.path.join(ROOT, "target/release/cuda_sobel"))
BORDERS = {"replicate": 0, "zero": 1, "reflect101": 2}  # BORDER_* of cuda/sobel.cuh


def build(kernel_file, exe, defines, driver="main.cpp"):
    """cuda/KERNEL_FILE with these -D options and the driver, compiled for the CPU into `exe` (build.sh)."""
    subprocess.run([os.path.join(ROOT, "scripts/emulate/build.sh"), os.path.join(ROOT, "cuda", kernel_file), exe]
                   + defines, check=True, env=dict(os.environ, DRIVER=driver))


def mismatch(label, proc, got, want):
    """1, and a line saying how, if the emulated run `proc` failed (`got` None) or any of its planes `got` differs
    from the reference's `want`; else 0."""
    if got is not None and all(np.array_equal(g, x) for g, x in zip(got, want)):
        return 0
    differ = "-" if got is None else sum(int((g != x).sum()) for g, x in zip(got, want))
    print(f"FAILED {label}: exit {proc.returncode} {proc.stderr.strip()}, {differ} values differ")
    return 1


def verdict(failures):
    print("all exact" if failures == 0 else f"{failures} failed")
    sys.exit(failures > 0)
