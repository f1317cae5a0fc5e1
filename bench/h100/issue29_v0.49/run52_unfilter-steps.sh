# Issue 29, v0.49: the unfilter wavefront's steps without waiting for memory — the chunk above passed through
# shared memory, the thread's own chunk loaded a step early (cuda/unfilter.cu) — against HEAD's kernel
# (.dev/unfilter_old.cu), alone (scripts/unfilter_bench.py) and in batch (2000 scenes by the clock, beside HEAD's
# binary and the filed release); tests/unfilter.rs and tests/batch.rs with the GPU required; compute-sanitizer.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 - <<'PY'
from PIL import Image
im = Image.open("imgs_in/2048x1024.png"); im.putalpha(200); im.save("/tmp/scene_rgba.png")
Image.open("imgs_in/2048x1024.png").resize((9000, 1100)).save("/tmp/wide.png")
PY
python3 scripts/unfilter_bench.py imgs_in/2048x1024.png /tmp/scene_rgba.png /tmp/wide.png imgs_in/512x512.png \
  --kernel .dev/unfilter_old.cu --kernel cuda/unfilter.cu --concurrent 8
echo "== tests/unfilter.rs, GPU required"
CUDA_SOBEL_REQUIRE_GPU=1 timeout 300 .dev/unfilter --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
echo "== compute-sanitizer synccheck / racecheck / memcheck on the wavefront (3 scenes, RGBA, wide)"
mkdir -p /tmp/san; cp imgs_in/2048x1024.png /tmp/scene_rgba.png /tmp/wide.png imgs_in/512x512.png /tmp/san/
for tool in memcheck synccheck racecheck; do
  compute-sanitizer --tool $tool .dev/cuda_sobel_u1 batch /tmp/san --out /tmp/san_o_$tool --check > /tmp/san.log 2>&1
  echo "$tool: exit $?; $(grep -hE '(ERROR|RACECHECK|SYNCCHECK) SUMMARY' /tmp/san.log | head -2 | tr '\n' ' ')"
done
P=.dev/cuda_sobel_pre H=.dev/cuda_sobel_h0 N=.dev/cuda_sobel_u1
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 extra=$2; shift 2; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env "$@" batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; $(grep -o '[0-9.]* images/s' /tmp/log | tail -1); $(grep -o 'thread-seconds.*' /tmp/log | head -1 | cut -c1-170)"; }
$H batch $w/in --out /dev/shm/o0 > /dev/null 2>&1; $P batch $w/in --out /dev/shm/o1 > /dev/null 2>&1
echo "== 2000 PNGs"
for r in 1 2; do
  one "pre (afbf45c)         " "" $P
  one "HEAD                  " "" CUDA_SOBEL_TRACE=1 $H
  one "new                   " "" CUDA_SOBEL_TRACE=1 $N
  one "new, sleep, 24 thr    " "" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=blocking RAYON_NUM_THREADS=24 $N
  one "new, sleep, 24 thr, 16 slots" "--slots 16" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=blocking CUDA_DEVICE_MAX_CONNECTIONS=8 RAYON_NUM_THREADS=24 $N
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to HEAD's"
echo "== tests/batch.rs, GPU required (nvCOMP absent: its half skips)"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 200 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
