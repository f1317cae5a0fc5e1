# Run1 and run2 (after the lock was mended). Issue 29, v0.51 candidate: PNGs read while the GPU opens + workers hand inflated PNGs to GPU threads (one a slot).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_pre F=.dev/cuda_sobel_final N=.dev/cuda_sobel_new
echo "== tests/batch.rs with the GPU required, on the new build"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 240 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked|skip' | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2; shift 2; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env "$@" $bin batch $w/in --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; $(grep -o '[0-9.]* images/s' /tmp/log | tail -1)"; }
$F batch $w/in --out /dev/shm/o0 > /dev/null 2>&1; $P batch $w/in --out /dev/shm/o1 > /dev/null 2>&1; rm -rf /dev/shm/o1
echo "== 2000 PNGs by the clock"
for r in 1 2 3; do
  one "filed release (afbf45c)" $P
  one "v0.49/v0.50 (50ce4c8)  " $F
  one "new                    " $N
  one "new, 16 workers asleep " $N RAYON_NUM_THREADS=16 CUDA_SOBEL_SYNC=blocking
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v0.49's"
echo "== traces"
for r in 1 2; do
  rm -rf /dev/shm/o; sync; s=$(date +%s%N)
  CUDA_SOBEL_TRACE=1 $N batch $w/in --out /dev/shm/o > /tmp/log 2>&1; e=$(date +%s%N)
  echo "-- new, round $r: whole command $(( (e-s)/1000000 )) ms"; grep "trace" /tmp/log | cut -c1-330
  rm -rf /dev/shm/o; sync; s=$(date +%s%N)
  CUDA_SOBEL_TRACE=1 $F batch $w/in --out /dev/shm/o > /tmp/log 2>&1; e=$(date +%s%N)
  echo "-- v0.50, round $r: whole command $(( (e-s)/1000000 )) ms"; grep "thread-seconds" /tmp/log | cut -c1-330
done
rm -rf /dev/shm/o /dev/shm/o0 $w
echo "== 300 photos by the clock"
ROUNDS="1 2" timeout 200 bash scripts/photos-by-clock.sh 300 $F $N 2>&1 | grep -v "^nvJPEG\|engine" | head -12
