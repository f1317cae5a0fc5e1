# Issue 29 v0.54 run1: can nvCOMP take a small share of a PNG folder without holding the slots back?
# v0.52-v0.53 measured the waves taking ~800 of 2000 scenes (slower than the CPU alone: the slots' hold grows from
# ~11 to 14-16 ms). Here the existing knobs limit the share: CUDA_SOBEL_WAVE (images a wave) and CUDA_SOBEL_WAVE_LEAST
# (jobs that must be left beyond a wave for the producer to take it), so that one or two early waves go to nvCOMP.
# Also: an explicit `--slots 16` (today: 32 hardware queues) against the default 16 slots (8 queues).
# Binaries: cuda_sobel_v53 (HEAD 3c87b04), cuda_sobel_afbf45c (the release before issue 29).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader; nproc
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
sum() { md5sum $1/* | awk '{print $1}' | sort | md5sum | cut -c1-8; }
one() { local label=$1; shift; rm -rf /dev/shm/o; sync; t0=$(date +%s%N); /usr/bin/time -f "%U %S" -o /tmp/time env CUDA_SOBEL_TRACE=1 "$@" --out /dev/shm/o > /tmp/log 2>&1; rc=$?; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: $(( (t1-t0)/1000000 )) ms rc $rc; cpu $(cat /tmp/time); ctx $(m 'GPU context made'); done $(m 'batch done'); $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o '^[0-9]* PNGs inflated by nvCOMP' /tmp/log); $(sum /dev/shm/o)"; }
V=.dev/cuda_sobel_v53; R=.dev/cuda_sobel_afbf45c
# nvCOMP's kernels load cold on a fresh machine's first use: one warm-up.
CUDA_SOBEL_CPU_LANE=0 $V batch $w/in --png-inflate gpu --out /dev/shm/warm > /dev/null 2>&1; rm -rf /dev/shm/warm
for r in 1 2 3; do
  one "release        " $R batch $w/in
  one "v53 default    " $V batch $w/in
  one "v53 --slots 16 " $V batch $w/in --slots 16
  one "share 1x128    " env CUDA_SOBEL_WAVE=128 CUDA_SOBEL_WAVE_LEAST=1850 $V batch $w/in --png-inflate gpu
  one "share 1x256    " env CUDA_SOBEL_WAVE=256 CUDA_SOBEL_WAVE_LEAST=1700 $V batch $w/in --png-inflate gpu
  one "share 2x192    " env CUDA_SOBEL_WAVE=192 CUDA_SOBEL_WAVE_LEAST=1500 $V batch $w/in --png-inflate gpu
  one "share 1x384    " env CUDA_SOBEL_WAVE=384 CUDA_SOBEL_WAVE_LEAST=1600 $V batch $w/in --png-inflate gpu
  one "share 1x256 q16" env CUDA_DEVICE_MAX_CONNECTIONS=16 CUDA_SOBEL_WAVE=256 CUDA_SOBEL_WAVE_LEAST=1700 $V batch $w/in --png-inflate gpu
done
rm -rf /dev/shm/o $w
