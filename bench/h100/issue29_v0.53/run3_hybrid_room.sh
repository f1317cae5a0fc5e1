# Issue 29 v0.53 run3: would nvCOMP's waves beside the CPU go faster if the slots' GPU chain were lighter? v0.52
# (4909f42) only: the CPU inflate and the waves beside it, writing PNG (the chain: unfilter, gpu-strip, deflate) or
# PGM (no deflate: a lighter chain), on 8 and 16 hardware queues. 2000 scenes -> tmpfs, whole command.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { # label, env..., binary, args...
  local label=$1; shift
  rm -rf /dev/shm/o; sync; t0=$(date +%s%N)
  /usr/bin/time -f "%U %S" -o /tmp/time env CUDA_SOBEL_TRACE=1 "$@" --out /dev/shm/o > /tmp/log 2>&1; rc=$?; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: rc $rc; $(( (t1-t0)/1000000 )) ms; user+sys $(cat /tmp/time); ctx $(m 'GPU context made'); done $(m 'batch done'); $(grep -o 'holding one [0-9.]*' /tmp/log); waves $(grep -c "wave inflated" /tmp/log), $(grep "wave of .* taken" /tmp/log | grep -o "of [0-9]*" | awk "{s+=\$2} END {print s}") PNGs"
}
for r in 1 2; do
  for q in 8 16; do
    one "cpu inflate png q$q   " CUDA_DEVICE_MAX_CONNECTIONS=$q .dev/cuda_sobel_v52 batch $w/in
    one "waves+cpu png q$q     " CUDA_DEVICE_MAX_CONNECTIONS=$q .dev/cuda_sobel_v52 batch $w/in --png-inflate gpu
    one "cpu inflate pgm q$q   " CUDA_DEVICE_MAX_CONNECTIONS=$q .dev/cuda_sobel_v52 batch $w/in --format pgm
    one "waves+cpu pgm q$q     " CUDA_DEVICE_MAX_CONNECTIONS=$q .dev/cuda_sobel_v52 batch $w/in --png-inflate gpu --format pgm
  done
  one "waves alone png q16    " CUDA_SOBEL_CPU_LANE=0 CUDA_DEVICE_MAX_CONNECTIONS=16 .dev/cuda_sobel_v52 batch $w/in --png-inflate gpu
  one "waves alone pgm q16    " CUDA_SOBEL_CPU_LANE=0 CUDA_DEVICE_MAX_CONNECTIONS=16 .dev/cuda_sobel_v52 batch $w/in --png-inflate gpu --format pgm
done
grep -i "wave\|nvcomp" /tmp/log | head -5
rm -rf /dev/shm/o $w
