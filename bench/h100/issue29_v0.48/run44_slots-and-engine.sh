# Issue 29, v0.48: a photo folder's slots against the JPEG engine's calls (new trace line: calls, images a call, time
# in calls, a JPEG's wait for its decode), 1000 photos, 8–32 slots, two rounds.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 scripts/make_photos.py --count 1000 --out /tmp/p1000 > /dev/null 2>&1; sync
N=.dev/cuda_sobel_new
$N batch /tmp/p1000 --out /dev/shm/po > /dev/null 2>&1
for r in 1 2; do for s in 8 12 16 24 32; do
  rm -rf /dev/shm/po; sync; t0=$(date +%s%N); CUDA_SOBEL_TRACE=1 $N batch /tmp/p1000 --out /dev/shm/po --slots $s > /tmp/log 2> /tmp/err; t1=$(date +%s%N)
  echo "slots $s: wall $(( (t1 - t0) / 1000000 )) ms; batch says $(head -1 /tmp/log | grep -o '[0-9.]* s — [0-9.]* images/s')"
  grep "batch: \|JPEG engine:" /tmp/err | sed 's/.*ms  //' | cut -c1-330
done; done
