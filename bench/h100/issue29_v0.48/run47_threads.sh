# Issue 29, v0.48: does the JPEG engine get fuller calls with more workers than cores? 300 photos, v0.48, calls in
# whole rounds; 16 / 24 / 32 rayon threads with 16 / 23 / 30 slots on 8 hardware queues; two rounds each.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 scripts/make_photos.py --count 300 --out /tmp/p300 > /dev/null 2>&1; sync
export CUDA_DEVICE_MAX_CONNECTIONS=8
N=.dev/cuda_sobel_v048
$N batch /tmp/p300 --out /dev/shm/po > /dev/null 2>&1
for r in 1 2; do for ts in "16 16" "24 23" "32 30" "16 23"; do set -- $ts
  rm -rf /dev/shm/po; sync; t0=$(date +%s%N); RAYON_NUM_THREADS=$1 CUDA_SOBEL_TRACE=1 $N batch /tmp/p300 --out /dev/shm/po --slots $2 > /tmp/log 2> /tmp/err; t1=$(date +%s%N)
  echo "threads $1 slots $2: wall $(( (t1 - t0) / 1000000 )) ms; batch says $(head -1 /tmp/log | grep -o '[0-9.]* s — [0-9.]* images/s'); $(grep -o 'JPEG engine: .*' /tmp/err | cut -c1-200)"
done; done
