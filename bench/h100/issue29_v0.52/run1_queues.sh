# Issue 29 v0.52 run1 (exploration, HEAD ffba4c1 = v0.51): the default batch on 8 / 12 / 16 hardware queues (context
# time against slot hold time), and nvCOMP's waves on 16 queues; 2000 scenes, outputs on tmpfs, traces.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader; nproc; lscpu | grep -E "Thread|Core|Socket|Model name"
N=.dev/cuda_sobel_v51
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); ahead $(grep -o '[0-9]* PNGs read while' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); closed $(grep -o '[0-9.]* ms  engines closed' /tmp/log | cut -d' ' -f1); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-220)"; }
$N batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2; do
  one "q8 (default)       " $N ""
  one "q12                " $N "" CUDA_DEVICE_MAX_CONNECTIONS=12
  one "q16                " $N "" CUDA_DEVICE_MAX_CONNECTIONS=16
  one "q16 24 slots       " $N "--slots 24" CUDA_DEVICE_MAX_CONNECTIONS=16
  one "nvCOMP q16 16 slots" $N "--png-inflate gpu --slots 16" CUDA_DEVICE_MAX_CONNECTIONS=16
done
grep -E "ms  " /tmp/log | head -30
rm -rf /dev/shm/o /dev/shm/o0 $w
