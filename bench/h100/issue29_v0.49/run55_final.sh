# Issue 29, v0.49, the committed build (u4 = bf24c33: the unfilter's steps without memory waits; 16 slots, the cores
# and half the slots more as workers, asleep while their slot's GPU work runs) beside HEAD before the session
# (041b6cc) and the filed release (afbf45c): 2000 scenes by the clock; 1000 photos by the clock with OpenCV's pool and nvJPEG's decode alone; the tests with the GPU required.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_pre H=.dev/cuda_sobel_h0 U=.dev/cuda_sobel_u4
echo "== tests with the GPU required, on u4 (nvCOMP not carried: its half of tests/batch.rs skips)"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$U timeout 200 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$U timeout 120 .dev/safety --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 extra=$2; shift 2; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env "$@" batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; $(grep -o '[0-9.]* images/s' /tmp/log | tail -1); $(grep -o '[0-9]* slots each' /tmp/log | head -1)"; }
rm -rf /dev/shm/o0; $H batch $w/in --out /dev/shm/o0 > /dev/null 2>&1; $P batch $w/in --out /dev/shm/o1 > /dev/null 2>&1
echo "== 2000 PNGs by the clock"
for r in 1 2 3; do
  one "filed release (afbf45c)" "" $P
  one "v0.48 (041b6cc)        " "" $H
  one "v0.49 (bf24c33)        " "" $U
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v0.48's"
rm -rf /dev/shm/o /dev/shm/o0 /dev/shm/o1 $w
echo "== 1000 photos by the clock"
bash scripts/photos-by-clock.sh 1000 $H $U
