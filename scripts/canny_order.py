#!/usr/bin/env python3
"""Canny on a device tensor with its result allocated before every launch, or after the first image's first launches
(what `cuda_sobel.canny` does without `out=`), beside the package's own calls:

    python3 scripts/canny_order.py [--calls 2000]

Each call timed between two CUDA events on the current stream, the five calls taken in turn, median of --calls: the
native call into a preallocated result; allocating (`new_empty`) then making every launch; the launches up to the
first image's edges, allocating, then the rest (`canny_device`'s part 1 and 2); `cuda_sobel.canny(x)`; and
`cuda_sobel.canny(x, out=)`. Thresholds 50/150, aperture 3, L1, random RGB8 at 2048×1024 and 7680×4320; both orders'
bytes are checked against `cuda_sobel.canny` first. Needs PyTorch with CUDA.
"""
import argparse
import statistics

import torch

import cuda_sobel as cs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    calls = ap.parse_args().calls
    native, stream = cs._engine(0)._native, torch.cuda.current_stream().cuda_stream
    f = cs._arrays.native_filter("sobel", 3, None, "exact", "percent", "l1")
    for h, w in ((1024, 2048), (4320, 7680)):
        x = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, device="cuda")
        out = torch.empty((h, w), dtype=torch.uint8, device="cuda")
        need = cs._native.canny_workspace(native, f, w, h)
        ws = torch.empty((need,), dtype=torch.uint8, device="cuda")
        workspace = (ws.data_ptr(), need)

        def launch(o, part=0):
            cs._native.canny_device(native, x.data_ptr(), o, w, h, 1, stream, f, 50.0, 150.0, workspace, part)

        def allocate_first():
            o = x.new_empty((h, w))
            launch(o.data_ptr())
            return o

        def allocate_between():
            launch(0, 1)
            o = x.new_empty((h, w))
            launch(o.data_ptr(), 2)
            return o

        calls_of = {"native into out": lambda: launch(out.data_ptr()), "allocate, launch": allocate_first,
                    "launch, allocate, launch": allocate_between, "canny(x)": lambda: cs.canny(x, 50, 150),
                    "canny(x, out=)": lambda: cs.canny(x, 50, 150, out=out)}
        want = cs.canny(x, 50, 150)
        assert torch.equal(allocate_first(), want) and torch.equal(allocate_between(), want)
        for fn in calls_of.values():
            for _ in range(20):
                fn()
        torch.cuda.synchronize()
        times = {k: [] for k in calls_of}
        for _ in range(calls):
            for k, fn in calls_of.items():
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times[k].append(start.elapsed_time(end) * 1e3)
        print(f"{w}x{h}: " + " | ".join(f"{k} {statistics.median(v):.1f} µs" for k, v in times.items()), flush=True)


if __name__ == "__main__":
    main()
