#!/usr/bin/env python3
"""Folders over several GPUs, by the clock (docs/scale-out.md): the table of `cuda_sobel batch --devices` and
`python -m cuda_sobel.dask --gpus` over 1, 2, … G GPUs, in one run on one host.

    python3 bench/scale_out.py BINARY [--images 2000] [--repeats 2] [--gpus G] [--out results.md] [--outputs DIR]

Over IMAGES 4000×3000 JPEG photos (scripts/make_photos.py: real photos, resized, with sensor noise) and IMAGES
2048×1024 PNGs (copies of one generated scene), each command is timed whole — start-up, the run, teardown: what a
user waits for — REPEATS times, the inputs in the page cache (each set is read once before); and
`cuda_sobel.dask.sobel_files` alone on a local cluster already running, its engines open (started and warmed
untimed), as a cluster kept for many runs serves each. The table gives the best
rate of the repeats (all of them beside it), the rate each command's own summary line gives (its work without the
fixed costs), and each rate's ratio to one GPU; Dask's also to batch on the same GPUs. Before the timings, Dask with
two workers runs `--check` over 40 photos (every image's edges against cpu-scalar on the RGB its decoder gave).
Needs the Python package and dask.distributed importable, OpenCV for the photos.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, out):
    """Wall clock of `cmd` (its outputs in `out`, emptied first) and the rate its first line reports."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"scale_out: {' '.join(cmd)} exited {run.returncode}:\n{run.stderr[-2000:]}")
    said = re.search(r"([0-9.]+) images/s", run.stdout)
    return seconds, float(said.group(1)) if said else float("nan"), run.stdout.splitlines()[0]


RUNNING = """
import sys, time, shutil, cuda_sobel.dask as d
folder, few, out, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
client = d._local_client(k, True)
d.sobel_files(few, out + "-warm", client=client, gpus=True)  # the workers' engines open
start = time.perf_counter()
s = d.sobel_files(folder, out, client=client, gpus=True)
print(str(s).splitlines()[0].replace(f"in {s.seconds:.2f} s", f"in {time.perf_counter() - start:.2f} s"))
"""
"""`sobel_files` on a cluster already running, its workers' engines open (what a cluster kept for many runs does):
the call alone timed, from the client."""


def on_running_cluster(folder, few, out, k):
    """The call's seconds and rate on a running local cluster of `k` GPU workers (started and warmed untimed)."""
    shutil.rmtree(out, ignore_errors=True)
    run = subprocess.run([sys.executable, "-c", RUNNING, folder, few, out, str(k)], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"scale_out: the running-cluster call exited {run.returncode}:\n{run.stderr[-2000:]}")
    line = run.stdout.strip().splitlines()[-1]
    seconds = float(re.search(r"in ([0-9.]+) s", line).group(1))
    return seconds, float(re.search(r"([0-9.]+) images/s", line).group(1)), line


def inputs(binary, work, images):
    photos, pngs = os.path.join(work, "photos"), os.path.join(work, "pngs")
    made = [os.path.isdir(d) and len(os.listdir(d)) == images for d in (photos, pngs)]
    if all(made):  # --keep's folder from an earlier run: the same inputs again
        return [("4000×3000 JPEG photos", photos), ("2048×1024 PNGs", pngs)]
    shutil.rmtree(photos, ignore_errors=True)
    shutil.rmtree(pngs, ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_photos.py"), "--count", str(images), "--out",
                    photos], check=True, stdout=subprocess.DEVNULL)
    os.makedirs(pngs)
    scene = os.path.join(work, "scene.png")
    subprocess.run([binary, "generate", "2048x1024", "--out", scene], check=True, stdout=subprocess.DEVNULL)
    for i in range(images):
        shutil.copyfile(scene, os.path.join(pngs, f"img{i:06d}.png"))
    for folder in (photos, pngs):  # into the page cache
        for name in os.listdir(folder):
            with open(os.path.join(folder, name), "rb") as f:
                while f.read(1 << 24):
                    pass
    return [("4000×3000 JPEG photos", photos), ("2048×1024 PNGs", pngs)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--cluster-repeats", type=int, default=1, help="repeats of the running-cluster call")
    ap.add_argument("--tools", default="batch,dask,running", help="which rows: batch, dask (the whole command), "
                    "running (sobel_files on a running cluster)")
    ap.add_argument("--gpus", type=int, help="at most this many (default: every GPU)")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--keep", help="make the inputs in this folder and leave them there, or take them from it where an "
                    "earlier run left them (default: a temporary folder)")
    ap.add_argument("--outputs", help="write the outputs here, e.g. a tmpfs, to leave the disk out of the figures "
                    "(default: beside the inputs)")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    import cuda_sobel

    gpus = a.gpus or cuda_sobel.device_count()
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        gpu = "no GPU (the CPU engines)"
    work = a.keep or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    try:
        sets = inputs(binary, work, a.images)
        out = os.path.abspath(a.outputs) if a.outputs else os.path.join(work, "out")
        dask = [sys.executable, "-m", "cuda_sobel.dask"]
        few = os.path.join(work, "few")
        shutil.rmtree(few, ignore_errors=True)
        os.makedirs(few)
        for name in sorted(os.listdir(sets[0][1]))[:40]:
            shutil.copyfile(os.path.join(sets[0][1], name), os.path.join(few, name))
        _, _, line = timed(dask + [few, "--out", out, "--gpus", "--workers", str(min(2, gpus)), "--check"], out)
        checked = f"Dask, {min(2, gpus)} GPU worker(s), --check over {len(os.listdir(few))} photos: {line}"
        print(checked, flush=True)
        rows = []
        for what, folder in sets:
            rates = {}
            for tool in a.tools.split(","):
                for k in range(1, gpus + 1):
                    if tool == "batch":
                        cmd = [binary, "batch", folder, "--out", out, "--devices", ",".join(map(str, range(k)))]
                    else:
                        cmd = dask + [folder, "--out", out, "--gpus", "--workers", str(k)]
                    if tool == "running":
                        runs = [on_running_cluster(folder, few, out, k) for _ in range(a.cluster_repeats)]
                    else:
                        runs = [timed(cmd, out) for _ in range(a.repeats)]
                    clock = [a.images / t for t, _, _ in runs]
                    own = max(r for _, r, _ in runs)
                    rates[tool, k] = max(clock)
                    one = rates[tool, 1]
                    versus = f"{rates[tool, k] / rates['batch', k]:.2f}" if tool != "batch" and ("batch", k) in rates else ""
                    command = {"batch": f"batch, {k} GPU(s)", "dask": f"python -m cuda_sobel.dask --gpus, {k} worker(s)",
                               "running": f"sobel_files on a running cluster, {k} worker(s)"}[tool]
                    row = (f"| {what} | {command} "
                           f"| {max(clock):.0f} ({', '.join(f'{c:.0f}' for c in clock)}) | {own:.0f} "
                           f"| {rates[tool, k] / one:.2f}× | {versus} |")
                    rows.append(row)
                    print(row, flush=True)
        where = f"; outputs in {a.outputs}" if a.outputs else ""
        head = [f"{gpus} × {gpu}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; {a.images} images a set, "
                f"best of {a.repeats} by the clock{where}", "",
                "| images | command | images/s by the clock (each run) | its own line | ÷ one GPU | Dask ÷ batch |",
                "|---|---|---|---|---|---|"]
        table = "\n".join(head + rows + ["", checked])
        print("\n" + table)
        if a.out:
            with open(a.out, "w") as f:
                f.write(table + "\n")
    finally:
        if a.outputs:
            shutil.rmtree(os.path.abspath(a.outputs), ignore_errors=True)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
