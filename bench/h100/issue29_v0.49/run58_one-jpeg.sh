# Issue 29, v0.49: one 4000×3000 JPEG, the single-image command with --variant gpu-strip, whole command, cold and
# warm, against the GPU floor (a process that only opens the GPU) — v0.48 (041b6cc) beside v0.49 (HEAD, u5).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 scripts/make_photos.py --count 1 --out /tmp/one > /dev/null 2>&1; ls /tmp/one
FLOOR=.dev/gpu_floor VARIANTS=gpu-strip bash scripts/wait-times.sh /tmp/one/$(ls /tmp/one | head -1) 9 .dev/cuda_sobel_h0 .dev/cuda_sobel_u5
CUDA_SOBEL_TRACE=1 .dev/cuda_sobel_u5 /tmp/one/$(ls /tmp/one | head -1) --variant gpu-strip --out /tmp/one.png 2>&1 | grep trace | cut -c1-160
