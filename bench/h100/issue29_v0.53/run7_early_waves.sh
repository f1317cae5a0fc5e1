# Issue 29 v0.53 run7: the waves' gathering made cheaper (cuda_sobel_t4 = t3 + CUDA_SOBEL_TRIAL_EARLY: the pinned
# staging allocated and the device memory pool grown for four waves on threads of their own as the producer starts;
# finer trace marks in Nvcomp::inflate) and more readers (CUDA_SOBEL_TRIAL_READERS); waves alone and beside the CPU.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1; shift; rm -rf /dev/shm/o; sync; t0=$(date +%s%N); /usr/bin/time -f "%U %S" -o /tmp/time env CUDA_SOBEL_TRACE=1 "$@" --out /dev/shm/o > /tmp/log 2>&1; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: $(( (t1-t0)/1000000 )) ms; cpu $(cat /tmp/time); ctx $(m 'GPU context made'); done $(m 'batch done'); $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o '^[0-9]* PNGs inflated by nvCOMP' /tmp/log)"; }
for r in 1 2; do
  one "v52 default               " .dev/cuda_sobel_v52 batch $w/in
  one "t4 alone                  " CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel_t4 batch $w/in --png-inflate gpu
  one "t4 alone early            " CUDA_SOBEL_CPU_LANE=0 CUDA_SOBEL_TRIAL_EARLY=1 .dev/cuda_sobel_t4 batch $w/in --png-inflate gpu
  cp /tmp/log /tmp/log_alone_early_$r
  one "t4 alone early r16        " CUDA_SOBEL_CPU_LANE=0 CUDA_SOBEL_TRIAL_EARLY=1 CUDA_SOBEL_TRIAL_READERS=16 .dev/cuda_sobel_t4 batch $w/in --png-inflate gpu
  cp /tmp/log /tmp/log_alone_early16_$r
  one "t4 alone early r16 w256   " CUDA_SOBEL_CPU_LANE=0 CUDA_SOBEL_TRIAL_EARLY=1 CUDA_SOBEL_TRIAL_READERS=16 CUDA_SOBEL_WAVE=256 .dev/cuda_sobel_t4 batch $w/in --png-inflate gpu
  one "t4 beside early           " CUDA_SOBEL_TRIAL_EARLY=1 .dev/cuda_sobel_t4 batch $w/in --png-inflate gpu
  one "t4 beside early q16       " CUDA_SOBEL_TRIAL_EARLY=1 CUDA_DEVICE_MAX_CONNECTIONS=16 .dev/cuda_sobel_t4 batch $w/in --png-inflate gpu
done
echo "== timeline, alone early (round 2)"; grep -v "^batch:" /tmp/log_alone_early_2 | sed 's/cuda_sobel trace: *//' | cut -c1-140
echo "== timeline, alone early r16 (round 2)"; grep -v "^batch:" /tmp/log_alone_early16_2 | sed 's/cuda_sobel trace: *//' | cut -c1-140
rm -rf /dev/shm/o $w
