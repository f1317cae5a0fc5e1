#!/usr/bin/env bash
# Issue 29, the GPU's JPEG engine (docs/performance.md v0.30), on the GPU machine in one run:
#   bash scripts/jpeg-engine.sh PREVIOUS_BINARY BINARY [BATCH_TEST_BINARY]
# 1000 photos of 4000×3000 (scripts/make_photos.py) and the awkward files; the awkward files and 50 photos
# through `batch --check` (exact for the RGB their decoder produced; the summary counts the engine's share);
# three rounds of the previous build and this one at their default slots and others, 1000 photos → PNG edges;
# torchvision's nvJPEG decode alone and OpenCV's pool on the same files; tests/batch.rs's binary if given, with
# the GPU required; compute-sanitizer memcheck over 20 photos and the awkward files.
set -u
P=$1 B=$2 T=${3:-}
export CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$B
t0=$(date +%s)
python3 scripts/make_photos.py --count 1000 --out /tmp/p1k > /dev/null 2>&1
python3 scripts/make_photos.py --odd --out /tmp/odd > /dev/null 2>&1
echo "photos made in $(( $(date +%s) - t0 )) s; $(du -sh /tmp/p1k | cut -f1)"
echo "== odd files, --jpeg-decoder gpu --check"; $B batch /tmp/odd --out /tmp/odd-out --jpeg-decoder gpu --check > /tmp/odd.log 2>&1; echo "exit $?"; tail -25 /tmp/odd.log
mkdir -p /tmp/p50; cp /tmp/p1k/photo000[0-4]*.jpg /tmp/p50/
echo "== 50 photos --check"; $B batch /tmp/p50 --out /tmp/p50-out --check 2>&1 | tail -4
rate() { sed -n 's/.* — \([0-9.]*\) images\/s.*/\1/p' | head -1; }
for r in 1 2 3; do
  for cfg in "previous:$P:" "this build (default slots):$B:" "this build --slots 4:$B:--slots 4" "this build --slots 16:$B:--slots 16" "previous --slots 8:$P:--slots 8"; do
    IFS=: read -r label bin args <<< "$cfg"; rm -rf /tmp/o
    x=$( { /usr/bin/time -f "%e s wall %U s user" $bin batch /tmp/p1k --out /tmp/o $args 2>&1; } | tee /tmp/last.log | rate)
    echo "round $r $label: $x images/s ($(tail -1 /tmp/last.log))"
  done
done
grep -i "jpeg\|batch:" /tmp/last.log | head -4; for f in /tmp/o/photo00000_sobel.png; do python3 -c "import cv2,sys; im=cv2.imread(sys.argv[1],0); print(sys.argv[1], im.shape)" $f; done
python3 - <<'PY'
import torch, glob, time
from torchvision.io import decode_jpeg, read_file
ds=[read_file(f) for f in sorted(glob.glob('/tmp/p1k/*.jpg'))]
for r in range(2):
    torch.cuda.synchronize(); t=time.perf_counter()
    for i in range(0,len(ds),16): decode_jpeg(ds[i:i+16],device='cuda')
    torch.cuda.synchronize(); print(f'torchvision decode_jpeg alone, batches of 16: {len(ds)/(time.perf_counter()-t):.0f} images/s')
PY
rm -rf /tmp/ocv; mkdir /tmp/ocv; echo "OpenCV pool: $(timeout 100 python3 scripts/opencv_wait.py folder /tmp/p1k /tmp/ocv $(nproc))"
[ -n "$T" ] && echo "== tests/batch" && timeout 200 "$T" --nocapture 2>&1 | grep -E "^test |test result|JPEGs decoded|panicked" | head -30
mkdir -p /tmp/p20; cp /tmp/p1k/photo0000[0-9].jpg /tmp/p1k/photo0001[0-9].jpg /tmp/p20/
echo "== memcheck, 20 photos through the engine"; timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $B batch /tmp/p20 /tmp/odd --out /tmp/p20-out 2>&1 | tail -4
