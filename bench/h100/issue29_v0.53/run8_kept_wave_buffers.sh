# Issue 29 v0.53 run8: each wave stream keeps its large device buffers from wave to wave (cuda_sobel_t5 = t4 +
# CUDA_SOBEL_TRIAL_KEEP: no stream-ordered pool allocation a wave for the compressed streams, the rows and nvCOMP's
# scratch), with the staging and the pool made early (CUDA_SOBEL_TRIAL_EARLY); waves alone and beside the CPU.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
sum() { md5sum $1/* | awk '{print $1}' | sort | md5sum; }
one() { local label=$1; shift; rm -rf /dev/shm/o; sync; t0=$(date +%s%N); /usr/bin/time -f "%U %S" -o /tmp/time env CUDA_SOBEL_TRACE=1 "$@" --out /dev/shm/o > /tmp/log 2>&1; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: $(( (t1-t0)/1000000 )) ms; cpu $(cat /tmp/time); ctx $(m 'GPU context made'); done $(m 'batch done'); $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o '^[0-9]* PNGs inflated by nvCOMP' /tmp/log); files $(ls /dev/shm/o | wc -l)"; }
for r in 1 2 3; do
  one "v52 default                 " .dev/cuda_sobel_v52 batch $w/in
  one "t5 alone keep+early         " CUDA_SOBEL_CPU_LANE=0 CUDA_SOBEL_TRIAL_KEEP=1 CUDA_SOBEL_TRIAL_EARLY=1 .dev/cuda_sobel_t5 batch $w/in --png-inflate gpu
  cp /tmp/log /tmp/log_alone_$r
  one "t5 alone keep+early r12     " CUDA_SOBEL_CPU_LANE=0 CUDA_SOBEL_TRIAL_KEEP=1 CUDA_SOBEL_TRIAL_EARLY=1 CUDA_SOBEL_TRIAL_READERS=12 .dev/cuda_sobel_t5 batch $w/in --png-inflate gpu
  one "t5 beside keep+early        " CUDA_SOBEL_TRIAL_KEEP=1 CUDA_SOBEL_TRIAL_EARLY=1 .dev/cuda_sobel_t5 batch $w/in --png-inflate gpu
  one "t5 beside keep+early q16    " CUDA_SOBEL_TRIAL_KEEP=1 CUDA_SOBEL_TRIAL_EARLY=1 CUDA_DEVICE_MAX_CONNECTIONS=16 .dev/cuda_sobel_t5 batch $w/in --png-inflate gpu
done
echo "t5 (last run) outputs $(sum /dev/shm/o)"; rm -rf /dev/shm/o; .dev/cuda_sobel_v52 batch $w/in --out /dev/shm/o > /dev/null 2>&1; echo "v52 outputs $(sum /dev/shm/o)"
echo "== timeline, alone keep+early (round 3)"; grep -v "^batch:" /tmp/log_alone_3 | sed 's/cuda_sobel trace: *//' | cut -c1-140
rm -rf /dev/shm/o $w
