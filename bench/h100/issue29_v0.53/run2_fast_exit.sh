# Issue 29 v0.53 run2: what the end of the command costs. cuda_sobel_t1 = 4909f42 + a trial switch never committed
# (CUDA_SOBEL_TRIAL_FAST_EXIT: the engines are not closed and the process leaves by _exit, the driver's own exit
# handlers skipped, the kernel driver releasing the device's files), on 8, 12 and 16 hardware queues; beside the filed
# release (afbf45c) and v0.52 (4909f42). 2000 scenes 2048x1024 -> PNG edges on tmpfs, whole command, alternating.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { # label, env..., binary, args...
  local label=$1; shift
  rm -rf /dev/shm/o; sync; t0=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" batch $w/in --out /dev/shm/o > /tmp/log 2>&1; rc=$?; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: rc $rc; $(( (t1-t0)/1000000 )) ms; ctx $(m 'GPU context made'); ahead $(m 'read while'); done $(m 'batch done'); closed $(m 'engines closed'); main $(m 'main returns'); $(grep -o 'holding one [0-9.]*' /tmp/log)"
}
for r in 1 2 3; do
  one "filed release       " .dev/cuda_sobel_afbf45c
  one "v0.52               " .dev/cuda_sobel_v52
  one "t1 fast exit q8     " CUDA_SOBEL_TRIAL_FAST_EXIT=1 .dev/cuda_sobel_t1
  one "t1 fast exit q16    " CUDA_SOBEL_TRIAL_FAST_EXIT=1 CUDA_DEVICE_MAX_CONNECTIONS=16 .dev/cuda_sobel_t1
  one "t1 normal q8        " .dev/cuda_sobel_t1
  one "t1 fast exit q12    " CUDA_SOBEL_TRIAL_FAST_EXIT=1 CUDA_DEVICE_MAX_CONNECTIONS=12 .dev/cuda_sobel_t1
done
head -5 /tmp/log; grep -c . /tmp/log
md5sum /dev/shm/o/* | awk '{print $1}' | sort | md5sum
rm -rf /dev/shm/o; CUDA_SOBEL_TRIAL_FAST_EXIT=1 .dev/cuda_sobel_t1 batch $w/in --out /dev/shm/o > /dev/null 2>&1; ls /dev/shm/o | wc -l; md5sum /dev/shm/o/* | awk '{print $1}' | sort | md5sum
rm -rf /dev/shm/o; .dev/cuda_sobel_v52 batch $w/in --out /dev/shm/o > /dev/null 2>&1; md5sum /dev/shm/o/* | awk '{print $1}' | sort | md5sum
rm -rf /dev/shm/o $w
