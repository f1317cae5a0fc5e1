# Issue 29 v0.54 run3: more slots than the default — on the 32 hardware queues batch asks for above 16 slots, or on the
# driver's 8 (CUDA_DEVICE_MAX_CONNECTIONS=8 set by hand: batch widens only where it is unset) — against the default,
# with the CPU's inflate and with nvCOMP's waves beside it. The committed build db809d6 (cuda_sobel_v54).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader; nproc
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
V=.dev/cuda_sobel_v54
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
sum() { md5sum $1/* | awk '{print $1}' | sort | md5sum | cut -c1-8; }
one() { local label=$1; shift; rm -rf /dev/shm/o; sync; t0=$(date +%s%N); /usr/bin/time -f "%U %S" -o /tmp/time env CUDA_SOBEL_TRACE=1 "$@" --out /dev/shm/o > /tmp/log 2>&1; rc=$?; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: $(( (t1-t0)/1000000 )) ms rc $rc; cpu $(cat /tmp/time); ctx $(m 'GPU context made'); done $(m 'batch done'); $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o '[0-9.]* images/s' /tmp/log | head -1); $(sum /dev/shm/o)"; }
CUDA_SOBEL_CPU_LANE=0 $V batch $w/in --png-inflate gpu --out /dev/shm/warm > /dev/null 2>&1; rm -rf /dev/shm/warm
for r in 1 2 3; do
  one "default            " $V batch $w/in
  one "--slots 24, 32 q   " $V batch $w/in --slots 24
  one "--slots 24, 8 q    " env CUDA_DEVICE_MAX_CONNECTIONS=8 $V batch $w/in --slots 24
  one "--slots 32, 32 q   " $V batch $w/in --slots 32
  one "--slots 32, 8 q    " env CUDA_DEVICE_MAX_CONNECTIONS=8 $V batch $w/in --slots 32
  one "gpu infl 16 slots  " $V batch $w/in --png-inflate gpu
  one "gpu infl 24, 32 q  " $V batch $w/in --png-inflate gpu --slots 24
  one "gpu infl 24, 8 q   " env CUDA_DEVICE_MAX_CONNECTIONS=8 $V batch $w/in --png-inflate gpu --slots 24
done
rm -rf /dev/shm/o $w
