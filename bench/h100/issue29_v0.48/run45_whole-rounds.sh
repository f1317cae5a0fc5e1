# Issue 29, v0.48: the JPEG engine's calls in whole rounds of its decoders (cuda_sobel_cap) against any size
# (cuda_sobel_new), 1000 photos, 8 / 14 / 16 slots on the driver's default 8 queues, two rounds, whole command.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 scripts/make_photos.py --count 1000 --out /tmp/p1000 > /dev/null 2>&1; sync
export CUDA_DEVICE_MAX_CONNECTIONS=8
.dev/cuda_sobel_new batch /tmp/p1000 --out /dev/shm/ref > /dev/null 2>&1
for r in 1 2; do for b in new cap; do for s in 8 14 16; do
  rm -rf /dev/shm/po; sync; t0=$(date +%s%N); CUDA_SOBEL_TRACE=1 .dev/cuda_sobel_$b batch /tmp/p1000 --out /dev/shm/po --slots $s > /tmp/log 2> /tmp/err; t1=$(date +%s%N)
  echo "$b slots $s: wall $(( (t1 - t0) / 1000000 )) ms; batch says $(head -1 /tmp/log | grep -o '[0-9.]* s — [0-9.]* images/s'); $(grep -o 'JPEG engine: .*' /tmp/err | cut -c1-200)"
done; done; done
grep "decoder(s)" /tmp/err
echo "outputs differing from the reference: $(for f in $(ls /dev/shm/ref); do cmp -s /dev/shm/ref/$f /dev/shm/po/$f || echo x; done | wc -l) of $(ls /dev/shm/ref | wc -l)"
