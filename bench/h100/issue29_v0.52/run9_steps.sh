# Issue 29 v0.52 run9 (trial build v52e = 161557e + CUDA events around each step of a slot's run_filtered, never
# committed): where a slot's ~11 ms go — the upload, the unfilter, gpu-strip, the deflate's kernels, the copies back —
# with 1, 8 and 16 slots (each interval is GPU time between two points of the slot's stream, waits for its queue-mate
# included).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
N=.dev/cuda_sobel_v52e
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
mkdir -p $w/few; for i in $(seq -w 1 200); do cp imgs_in/2048x1024.png $w/few/img$i.png; done
for r in 1 2; do
  for s in 1 4 8 16; do
    d=$w/in; [ $s = 1 ] && d=$w/few
    rm -rf /dev/shm/o; t0=$(date +%s%N); CUDA_SOBEL_TRIAL_STEPS=1 CUDA_SOBEL_TRACE=1 CUDA_DEVICE_MAX_CONNECTIONS=8 $N batch $d --slots $s --out /dev/shm/o > /tmp/log 2>&1; t1=$(date +%s%N)
    echo "slots $s: $(( (t1-t0)/1000000 )) ms; $(grep -o 'TRIAL.*' /tmp/log); $(grep -o 'holding one [0-9.]*' /tmp/log)"
  done
  rm -rf /dev/shm/o; CUDA_SOBEL_TRIAL_STEPS=1 CUDA_SOBEL_TRACE=1 CUDA_DEVICE_MAX_CONNECTIONS=16 $N batch $w/in --out /dev/shm/o > /tmp/log 2>&1
  echo "16 slots, 16 queues: $(grep -o 'TRIAL.*' /tmp/log); $(grep -o 'holding one [0-9.]*' /tmp/log)"
done
rm -rf /dev/shm/o $w
