#!/usr/bin/env python3
"""cuda/deflate.cu (batch's PNG encoder on the GPU) run on the CPU, without a GPU.

Builds the kernel file for the CPU (scripts/emulate/build.sh with deflate_main.cpp, whole blocks as threads, under
AddressSanitizer: a read or write outside a buffer ends the run), encodes edge images of awkward shapes — 1×1, a row
or a column, rows longer than a segment, all zeros (one long run), noise (no repeats), the tiled test scene's edges
(long repeats, the reason deflate.cu matches strings) — and checks that each stream inflates with zlib (its Adler-32
included) to rows of a filter byte and filtered pixels, and that a PNG of it decodes with Pillow to exactly the
edges. The scene's stream must also stay within 10 % of what the CPU encoder writes at the default level (zlib level
5, every row Sub-filtered: core/src/image_io/png_out.rs).

usage: deflate_check.py      Needs g++, numpy and Pillow, and the cuda_sobel binary (CUDA_SOBEL_BIN).
"""
import io
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np
from PIL import Image

from emulate import BIN, ROOT, build, verdict


def png(zstream, width, height):
    """A grey 8-bit PNG whose image data is `zstream`."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zstream) + chunk(b"IEND", b"")


def cpu_default_size(edges):
    """Bytes of the CPU encoder's image data at the default level: zlib level 5, every row Sub-filtered."""
    sub = edges.astype(np.int16)
    sub[:, 1:] -= edges[:, :-1]
    rows = np.concatenate([np.ones((edges.shape[0], 1), np.uint8), (sub & 255).astype(np.uint8)], axis=1)
    return len(zlib.compress(rows.tobytes(), 5))


def scene_edges(work):
    """cpu-scalar's edges of the tiled test scene (1024×512)."""
    out = os.path.join(work, "scene_edges.png")
    subprocess.run([BIN, os.path.join(ROOT, "imgs_in/1024x512.png"), "--variant", "cpu-scalar", "--out", out],
                   check=True, capture_output=True)
    return np.asarray(Image.open(out).convert("L"))


def main():
    rng = np.random.default_rng(29)
    work = tempfile.mkdtemp()
    exe = os.path.join(work, "deflate")
    build("deflate.cu", exe, ["-DEMU_BLOCK", "-fsanitize=address"], driver="deflate_main.cpp")
    mixed = np.concatenate([rng.integers(0, 256, (200, 1000), dtype=np.uint8),
                            np.tile(rng.integers(0, 8, (10, 50), dtype=np.uint8), (20, 20))])
    repeats = np.tile(rng.integers(0, 256, 700, dtype=np.uint8), 300)[:70_000 * 3].reshape(3, 70_000)
    cases = {
        "1x1": rng.integers(0, 256, (1, 1), dtype=np.uint8),
        "3x2": rng.integers(0, 256, (2, 3), dtype=np.uint8),
        "1x40 (a column)": rng.integers(0, 4, (40, 1), dtype=np.uint8),
        "301x1 (a row)": rng.integers(0, 256, (1, 301), dtype=np.uint8),
        "300x200 zeros": np.zeros((200, 300), np.uint8),
        "257x130 noise": rng.integers(0, 256, (130, 257), dtype=np.uint8),
        "70000x3 (rows longer than a segment, repeats)": repeats,
        "1000x400 (noise above repeats: segments with and without strings)": mixed,
        "scene": scene_edges(work),
    }
    failures = 0
    for name, edges in cases.items():
        h, w = edges.shape
        edges = np.ascontiguousarray(edges)
        edges.tofile(os.path.join(work, "in.raw"))
        out = os.path.join(work, "out.zlib")
        proc = subprocess.run([exe, os.path.join(work, "in.raw"), out, str(w), str(h)], capture_output=True, text=True)
        try:
            stream = open(out, "rb").read() if proc.returncode == 0 else None
            rows = zlib.decompress(stream)  # checks the Adler-32 too
            assert len(rows) == (w + 1) * h, f"{len(rows)} bytes inflated"
            assert all(rows[y * (w + 1)] <= 4 for y in range(h)), "a filter byte over 4"
            decoded = np.asarray(Image.open(io.BytesIO(png(stream, w, h))))
            assert np.array_equal(decoded, edges), f"{int((decoded != edges).sum())} pixels differ"
            note = ""
            if name == "scene":
                cpu = cpu_default_size(edges)
                assert len(stream) <= 1.10 * cpu, f"{len(stream)} bytes against the CPU encoder's {cpu}"
                note = f" ({len(stream)} bytes, the CPU encoder's default {cpu})"
            print(f"exact {name}{note}")
        except Exception as e:  # noqa: BLE001 — every way a case fails is reported the same
            lines = proc.stderr.strip().splitlines()
            why = next((line for line in lines if "ERROR" in line), lines[-1] if lines else "")
            print(f"FAILED {name}: exit {proc.returncode} {why} {e}")
            failures += 1
    verdict(failures)


if __name__ == "__main__":
    main()
