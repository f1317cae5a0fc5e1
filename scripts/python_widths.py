#!/usr/bin/env python3
"""gpu-strip's outputs at widths that are not a multiple of 16, from torch: for each
output (edges, int16 and float32 gradients, direction) and each width beside the nearest multiple of 16, the call's
time back to back (the kernel's pace: CUDA events around --calls calls, the median of 5 such rounds), each result
first checked against the same call on the CPU (NumPy, cpu-rayon: the reference's bytes; exit status 1 if any
differs). Needs torch with CUDA and the package installed.

    python3 scripts/python_widths.py [--calls 50] [--sizes 1366x768,1376x768,…]
"""
import argparse
import statistics

import numpy as np
import torch

import cuda_sobel as cs

OUTPUTS = {
    "edges": lambda x: cs.sobel(x),
    "gradients int16": lambda x: cs.gradients(x, dtype="int16"),
    "gradients float32": lambda x: cs.gradients(x, dtype="float32"),
    "direction": lambda x: cs.direction(x),
}


def back_to_back_us(fn, calls):
    for _ in range(5):
        fn()
    rounds = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        rounds.append(start.elapsed_time(end) * 1e3 / calls)
    return statistics.median(rounds)


def same(gpu, cpu):
    gpu = gpu if isinstance(gpu, (tuple, list)) else (gpu,)
    cpu = cpu if isinstance(cpu, (tuple, list)) else (cpu,)
    return all(np.array_equal(g.cpu().numpy(), c) for g, c in zip(gpu, cpu))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--sizes", default="1366x768,1376x768,3000x2000,3008x2000,7679x4320,7680x4320")
    a = ap.parse_args()
    differ = 0
    print("| output | size | µs a call, back to back | equals the CPU's |")
    print("|---|---|---:|---|")
    for name, fn in OUTPUTS.items():
        for size in a.sizes.split(","):
            w, h = map(int, size.split("x"))
            host = np.random.default_rng(w * h).integers(0, 256, (h, w, 3), dtype=np.uint8)
            x = torch.from_numpy(host).cuda()
            ok = same(fn(x), fn(host))
            differ += not ok
            print(f"| {name} | {size} | {back_to_back_us(lambda: fn(x), a.calls):.1f} | {'yes' if ok else 'NO'} |", flush=True)
            del x
            torch.cuda.empty_cache()
    if differ:
        raise SystemExit(f"python_widths: {differ} case(s) differ from the CPU's")


if __name__ == "__main__":
    main()
