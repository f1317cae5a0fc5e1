# Issue 29, v0.49: run50 found 2000 scenes bound by the slots (8 slots × 7.1 ms held an image ≈ 1130 images/s at
# most) rather than the CPU inflate (8.5 ms an image on 16 cores ≈ 1900/s). More slots, with more threads than cores
# (waiting asleep, so that a slot's thread leaves its core to the inflate) and 8 or 16 hardware queues. HEAD's binary.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_pre H=.dev/cuda_sobel_h0
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 extra=$2; shift 2; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env "$@" batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; $(grep -o '[0-9.]* images/s' /tmp/log | tail -1); $(grep -o 'thread-seconds.*' /tmp/log | head -1 | cut -c1-170)"; }
$H batch $w/in --out /dev/shm/o0 > /dev/null 2>&1; $P batch $w/in --out /dev/shm/o1 > /dev/null 2>&1
for r in 1 2; do
  one "pre (afbf45c)            " "" $P
  one "HEAD default             " "" CUDA_SOBEL_TRACE=1 $H
  for q in 8 16; do for s in 12 16 24; do for t in 24 32; do
    one "q $q, $s slots, $t threads" "--slots $s" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=blocking CUDA_DEVICE_MAX_CONNECTIONS=$q RAYON_NUM_THREADS=$t $H
  done; done; done
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to the first run's"
