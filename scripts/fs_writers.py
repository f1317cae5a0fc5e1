#!/usr/bin/env python3
"""How fast a folder takes new files, alone: 2000 files of 108 kB (a 2048×1024 scene's GPU-deflated edges) written
from 1, 4 and 16 threads, each as batch writes its outputs (a hidden temporary file, then a rename: 'rename') or
created in place ('direct'). Compare with batch's own write time (`CUDA_SOBEL_TRACE=1`, "encode + write") to see
whether the file system or something else in batch is what a write waits for (docs/performance.md v0.45).

    python3 scripts/fs_writers.py FOLDER...        (e.g. /tmp /dev/shm)
"""

import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

DATA = os.urandom(108_000)


def run(root, mode, threads, n=2000):
    folder = tempfile.mkdtemp(prefix="fs_writers-", dir=root)

    def one(i):
        dest = os.path.join(folder, f"img{i:05d}_sobel.png")
        if mode == "rename":
            fd, tmp = tempfile.mkstemp(prefix=".cuda_sobel-", suffix=".png.tmp", dir=folder)
            os.write(fd, DATA)
            os.close(fd)
            os.rename(tmp, dest)
        else:
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, DATA)
            os.close(fd)

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(n)))
    rate = n / (time.perf_counter() - start)
    print(f"{root} {mode:6s} {threads:2d} threads: {rate:7.0f} files/s", flush=True)
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    os.rmdir(folder)
    os.sync()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for root in sys.argv[1:]:
        for threads in (1, 4, 16):
            for mode in ("rename", "direct"):
                run(root, mode, threads)


if __name__ == "__main__":
    main()
