#!/usr/bin/env python3
"""JPEG photos for the folder benchmarks (bench/photos.sh, bench/scale_out.py): the real photos of tests/data/photos
resized to 4000×3000 with sensor-like noise (Gaussian, σ = 4 levels, a new seed each file), quality 90 — not
flat synthetic images that compress to nothing. With --odd, the awkward files instead: grey, 4:4:4, 4:2:2,
progressive, an odd size, a restart-interval file, CMYK and an EXIF-rotated one (Pillow), cut and hostile
ones. Needs OpenCV (cv2) and NumPy; Pillow for the CMYK and EXIF files.

    python3 scripts/make_photos.py --count 300 --out /tmp/photos
    python3 scripts/make_photos.py --odd --out /tmp/odd
"""

import argparse
import glob
import os
from multiprocessing import Pool

import cv2
import numpy as np

SOURCES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "tests", "data", "photos", "*.png")))


def photo(args):
    i, out = args
    src = cv2.imread(SOURCES[i % len(SOURCES)], cv2.IMREAD_COLOR)
    big = cv2.resize(src, (4000, 3000), interpolation=cv2.INTER_CUBIC).astype(np.float32)
    big += np.random.default_rng(i).normal(0, 4, big.shape).astype(np.float32)
    path = os.path.join(out, f"photo{i:05d}.jpg")
    cv2.imwrite(path, np.clip(big, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 90])
    return os.path.getsize(path)


def odd(out):
    src = cv2.imread(SOURCES[0], cv2.IMREAD_COLOR)
    q = [cv2.IMWRITE_JPEG_QUALITY, 90]
    cv2.imwrite(f"{out}/grey.jpg", cv2.cvtColor(src, cv2.COLOR_BGR2GRAY), q)
    cv2.imwrite(f"{out}/s444.jpg", src, q + [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444])
    cv2.imwrite(f"{out}/s422.jpg", src, q + [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422])
    cv2.imwrite(f"{out}/progressive.jpg", src, q + [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    cv2.imwrite(f"{out}/restarts.jpg", src, q + [cv2.IMWRITE_JPEG_RST_INTERVAL, 3])
    cv2.imwrite(f"{out}/odd_1001x777.jpg", cv2.resize(src, (1001, 777)), q)
    cv2.imwrite(f"{out}/tiny_1x1.jpg", src[:1, :1], q)
    cv2.imwrite(f"{out}/tiny_3x2.jpg", src[:2, :3], q)
    whole = open(f"{out}/s444.jpg", "rb").read()
    open(f"{out}/cut_half.jpg", "wb").write(whole[: len(whole) // 2])
    open(f"{out}/garbage_after_header.jpg", "wb").write(whole[:600] + bytes(range(256)) * 40 + b"\xff\xd9")
    try:
        from PIL import Image

        pil = Image.fromarray(cv2.cvtColor(src, cv2.COLOR_BGR2RGB))
        pil.convert("CMYK").save(f"{out}/cmyk.jpg", quality=90)
        exif = Image.Exif()
        exif[0x0112] = 6  # rotate 90° clockwise to view
        pil.save(f"{out}/exif_rotated.jpg", quality=90, exif=exif)
    except ImportError:
        print("make_photos: no Pillow, so no CMYK or EXIF-rotated file")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--out", required=True)
    ap.add_argument("--odd", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.odd:
        odd(a.out)
        return
    with Pool() as pool:
        total = sum(pool.map(photo, [(i, a.out) for i in range(a.count)]))
    print(f"make_photos: {a.count} JPEGs of 4000×3000, {total / 1e6:.0f} MB, in {a.out}")


if __name__ == "__main__":
    main()
