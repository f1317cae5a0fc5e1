# Issue 29 v0.52 run5: with the CPU no longer the limit (v52c: user time 16.5 s against v0.51's 20.6 s, the clock
# unchanged, the slots held ~11 ms each), the hardware queues and slots again: 8 / 12 / 16 queues, 16 / 24 slots.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_afbf45c O=.dev/cuda_sobel_v51 N=.dev/cuda_sobel_v52c
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); ahead $(grep -o '[0-9]* PNGs read while' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); main $(grep -o '[0-9.]* ms  main returns' /tmp/log | head -1 | cut -d' ' -f1); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-130)"; }
$N batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2 3; do
  one "filed release      " $P ""
  one "v0.51              " $O ""
  one "v52c q8 16 slots   " $N ""
  one "v52c q12 16 slots  " $N "" CUDA_DEVICE_MAX_CONNECTIONS=12
  one "v52c q16 16 slots  " $N "" CUDA_DEVICE_MAX_CONNECTIONS=16
  one "v52c q8 24 slots   " $N "--slots 24" CUDA_DEVICE_MAX_CONNECTIONS=8
  one "v52c q12 24 slots  " $N "--slots 24" CUDA_DEVICE_MAX_CONNECTIONS=12
  one "v52c q8 12 slots   " $N "--slots 12" CUDA_DEVICE_MAX_CONNECTIONS=8
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical"
rm -rf /dev/shm/o /dev/shm/o0 $w
