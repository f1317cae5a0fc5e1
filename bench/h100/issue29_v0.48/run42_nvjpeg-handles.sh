# Issue 29, v0.48: what each nvJPEG handle costs alone and in either order (scripts/nvjpeg_start.py, a fresh process
# each), and where a photo batch's threads spend their time (CUDA_SOBEL_TRACE's account).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 scripts/make_photos.py --count 200 --out /tmp/p200 > /dev/null 2>&1; sync
for r in 1 2; do
  for order in "engine" "default" "default engine" "engine default" "engine:1" "engine:2" "engine:8"; do
    echo "$order: $(python3 scripts/nvjpeg_start.py $order --first-call /tmp/p200/photo00000.jpg 2>&1 | tail -1)"
  done
done
for r in 1 2; do
  rm -rf /dev/shm/po; CUDA_SOBEL_TRACE=1 .dev/cuda_sobel_x batch /tmp/p200 --out /dev/shm/po > /tmp/log 2> /tmp/err
  head -1 /tmp/log; grep "batch: \|slots:" /tmp/err | cut -c1-900
done
for s in 4 16; do rm -rf /dev/shm/po; CUDA_SOBEL_TRACE=1 .dev/cuda_sobel_x batch /tmp/p200 --out /dev/shm/po --slots $s > /tmp/log 2> /tmp/err; echo "slots $s: $(head -1 /tmp/log | cut -c1-100)"; grep "batch: \|slots:" /tmp/err | cut -c1-900; done
