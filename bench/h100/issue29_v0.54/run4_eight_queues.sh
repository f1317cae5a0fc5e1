# Issue 29 v0.54 run4: the build that leaves the hardware queues to the user (cuda_sobel_v54b) — tests/batch.rs with
# the GPU and nvCOMP required; 2000 PNG scenes: the default, --slots 24 (now on the driver's 8 queues), and 32 queues
# set by the user (CUDA_DEVICE_MAX_CONNECTIONS=32, still honoured), against db809d6 (cuda_sobel_v54: 32 queues above 16
# slots); outputs compared.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader; nproc
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
V=.dev/cuda_sobel_v54; B=.dev/cuda_sobel_v54b
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/$B timeout 300 .dev/t_batch --test-threads=2 -q 2>&1 | tail -2
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
sum() { md5sum $1/* | awk '{print $1}' | sort | md5sum | cut -c1-8; }
one() { local label=$1; shift; rm -rf /dev/shm/o; sync; t0=$(date +%s%N); /usr/bin/time -f "%U %S" -o /tmp/time env CUDA_SOBEL_TRACE=1 "$@" --out /dev/shm/o > /tmp/log 2>&1; rc=$?; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: $(( (t1-t0)/1000000 )) ms rc $rc; cpu $(cat /tmp/time); ctx $(m 'GPU context made'); done $(m 'batch done'); $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o '[0-9.]* images/s' /tmp/log | head -1); $(sum /dev/shm/o)"; }
$B batch $w/in --out /dev/shm/warm > /dev/null 2>&1; rm -rf /dev/shm/warm
for r in 1 2 3; do
  one "v54 default        " $V batch $w/in
  one "v54b default       " $B batch $w/in
  one "v54 --slots 24     " $V batch $w/in --slots 24
  one "v54b --slots 24    " $B batch $w/in --slots 24
  one "v54b --slots 24 q32" env CUDA_DEVICE_MAX_CONNECTIONS=32 $B batch $w/in --slots 24
done
rm -rf /dev/shm/o $w
