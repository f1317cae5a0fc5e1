# Issue 29 v0.53 run10: cuda_sobel_w1 = 216fae1 + Wave::finish waiting on its stream asleep before its pageable copies
# back (the one change of runs 5-9 kept). tests/batch.rs with the GPU and nvCOMP required; 2000 scenes, --png-inflate
# gpu beside the CPU and alone, against v0.52 (4909f42, the same code without it) and the default, in one call.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/.dev/cuda_sobel_w1 timeout 300 .dev/batch --test-threads=2 -q 2>&1 | tail -3
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
sum() { md5sum $1/* | awk '{print $1}' | sort | md5sum; }
one() { local label=$1; shift; rm -rf /dev/shm/o; sync; t0=$(date +%s%N); /usr/bin/time -f "%U %S" -o /tmp/time env CUDA_SOBEL_TRACE=1 "$@" --out /dev/shm/o > /tmp/log 2>&1; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: $(( (t1-t0)/1000000 )) ms; cpu $(cat /tmp/time); ctx $(m 'GPU context made'); done $(m 'batch done'); $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o '^[0-9]* PNGs inflated by nvCOMP' /tmp/log); $(sum /dev/shm/o)"; }
# (The first nvCOMP command on a fresh machine loads its kernels cold: one warm-up each.)
CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel_v52 batch $w/in --png-inflate gpu --out /dev/shm/warm > /dev/null 2>&1; rm -rf /dev/shm/warm
for r in 1 2 3; do
  one "v52 default      " .dev/cuda_sobel_v52 batch $w/in
  one "v52 gpu          " .dev/cuda_sobel_v52 batch $w/in --png-inflate gpu
  one "w1 gpu           " .dev/cuda_sobel_w1 batch $w/in --png-inflate gpu
  one "v52 gpu alone    " CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel_v52 batch $w/in --png-inflate gpu
  one "w1 gpu alone     " CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel_w1 batch $w/in --png-inflate gpu
  one "w1 default       " .dev/cuda_sobel_w1 batch $w/in
done
rm -rf /dev/shm/o $w
