# Issue 29, v0.49: run53's 300 photos' outputs from u2 were not byte-identical to HEAD's. Which files, by bytes and
# by pixels; HEAD against itself; HEAD with 24 threads; u3 (= u2 + a comment) with --check (the GPU's edges
# against cpu-scalar on the RGB the decoder produced).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
H=.dev/cuda_sobel_h0 U=.dev/cuda_sobel_u3
python3 scripts/make_photos.py --count 300 --out /tmp/p300 > /dev/null 2>&1; ls /tmp/p300 | wc -l
cmpdirs() { python3 - "$1" "$2" <<'PY'
import sys, os, numpy as np
from PIL import Image
a, b = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(a)); assert names == sorted(os.listdir(b)), "names differ"
by_bytes = [n for n in names if open(f"{a}/{n}", "rb").read() != open(f"{b}/{n}", "rb").read()]
by_pixels = [n for n in by_bytes if not np.array_equal(np.asarray(Image.open(f"{a}/{n}")), np.asarray(Image.open(f"{b}/{n}")))]
print(f"  {len(names)} files: {len(by_bytes)} differ in bytes, {len(by_pixels)} in pixels {by_pixels[:5]}")
for n in by_pixels[:3]:
    x = np.asarray(Image.open(f"{a}/{n}")).astype(int); y = np.asarray(Image.open(f"{b}/{n}")).astype(int)
    d = np.abs(x - y); print(f"    {n}: {int((d > 0).sum())} pixels differ, by up to {d.max()}")
PY
}
run() { rm -rf $2; env "${@:3}" batch /tmp/p300 --out $2 > /tmp/log_$(basename $2) 2>&1; echo "$1: rc $?; $(grep -o '[0-9.]* images/s' /tmp/log_$(basename $2) | tail -1); $(grep -h 'JPEGs decoded by nvJPEG on the GPU' /tmp/log_$(basename $2))"; }
run "HEAD a" /dev/shm/ha $H
run "HEAD b" /dev/shm/hb $H
run "HEAD 24 threads" /dev/shm/h24 RAYON_NUM_THREADS=24 $H
run "u3 a" /dev/shm/ua $U
run "u3 b" /dev/shm/ub $U
run "u3 16 threads" /dev/shm/u16 RAYON_NUM_THREADS=16 $U
run "u3 --check" /dev/shm/uc $U --check
echo "HEAD a vs HEAD b"; cmpdirs /dev/shm/ha /dev/shm/hb
echo "HEAD a vs HEAD 24 threads"; cmpdirs /dev/shm/ha /dev/shm/h24
echo "HEAD a vs u3 a"; cmpdirs /dev/shm/ha /dev/shm/ua
echo "u3 a vs u3 b"; cmpdirs /dev/shm/ua /dev/shm/ub
echo "HEAD a vs u3 16 threads"; cmpdirs /dev/shm/ha /dev/shm/u16
echo "HEAD a vs u3 --check"; cmpdirs /dev/shm/ha /dev/shm/uc
tail -3 /tmp/log_uc
