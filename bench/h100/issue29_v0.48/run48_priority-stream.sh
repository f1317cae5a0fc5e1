# Issue 29, v0.48: the JPEG engine's calls on a stream of the highest priority (cuda_sobel_prio with XX_PRIO=1, a
# trial switch) so that nvJPEG's own kernels go before the slots' deflate kernels; 300 photos, three rounds.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 scripts/make_photos.py --count 300 --out /tmp/p300 > /dev/null 2>&1; sync
.dev/cuda_sobel_v048 batch /tmp/p300 --out /dev/shm/ref > /dev/null 2>&1
for r in 1 2 3; do for v in "v048" "prio" "prio XX_PRIO=1"; do set -- $v
  rm -rf /dev/shm/po; sync; t0=$(date +%s%N); env ${2:-} CUDA_SOBEL_TRACE=1 .dev/cuda_sobel_$1 batch /tmp/p300 --out /dev/shm/po > /tmp/log 2> /tmp/err; t1=$(date +%s%N)
  echo "$v: wall $(( (t1 - t0) / 1000000 )) ms; batch says $(head -1 /tmp/log | grep -o '[0-9.]* s — [0-9.]* images/s'); $(grep -o 'JPEG engine: .*' /tmp/err | cut -c1-200)"
done; done
grep XX /tmp/err
echo "outputs differing from v0.48's: $(for f in $(ls /dev/shm/ref); do cmp -s /dev/shm/ref/$f /dev/shm/po/$f || echo x; done | wc -l) of $(ls /dev/shm/ref | wc -l)"
