# Issue 29, v0.49: the new defaults beside GPU slots — 16 slots for PNGs too, the workers the cores and half the
# slots more, the slots' waits asleep (src/batch/engines.rs `workers`) — on top of the unfilter's steps (u1), against
# HEAD (041b6cc) and the filed release (afbf45c): 2000 scenes and 300 photos by the clock; tests/batch.rs.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_pre H=.dev/cuda_sobel_h0 U1=.dev/cuda_sobel_u1 U2=.dev/cuda_sobel_u2
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 dir=$2; shift 2; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env "$@" batch $dir --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; $(grep -o '[0-9.]* images/s' /tmp/log | tail -1); $(grep -o '[0-9]* slots each' /tmp/log | head -1); $(grep -o 'thread-seconds.*' /tmp/log | head -1 | cut -c1-170)"; }
$H batch $w/in --out /dev/shm/o0 > /dev/null 2>&1; $P batch $w/in --out /dev/shm/o1 > /dev/null 2>&1
echo "== 2000 PNGs"
for r in 1 2 3; do
  one "pre (afbf45c)" $w/in $P
  one "HEAD         " $w/in CUDA_SOBEL_TRACE=1 $H
  one "u1 (unfilter)" $w/in CUDA_SOBEL_TRACE=1 $U1
  one "u2 (workers) " $w/in CUDA_SOBEL_TRACE=1 $U2
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to HEAD's"
echo "== 300 photos"
python3 scripts/make_photos.py --count 300 --out /tmp/p300 > /dev/null 2>&1; ls /tmp/p300 | wc -l
$H batch /tmp/p300 --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2 3; do
  one "HEAD         " /tmp/p300 CUDA_SOBEL_TRACE=1 $H
  one "u2 (workers) " /tmp/p300 CUDA_SOBEL_TRACE=1 $U2
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "photo outputs identical to HEAD's"
echo "== tests/batch.rs on u2, GPU required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$U2 timeout 200 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
echo "== the unfilter alone again (RGBA, 8 at once)"
python3 - <<'PY'
from PIL import Image
im = Image.open("imgs_in/2048x1024.png"); im.putalpha(200); im.save("/tmp/scene_rgba.png")
PY
python3 scripts/unfilter_bench.py imgs_in/2048x1024.png /tmp/scene_rgba.png --kernel .dev/unfilter_old.cu --kernel cuda/unfilter.cu --concurrent 8
python3 scripts/unfilter_bench.py imgs_in/2048x1024.png /tmp/scene_rgba.png --kernel .dev/unfilter_old.cu --kernel cuda/unfilter.cu --concurrent 16
