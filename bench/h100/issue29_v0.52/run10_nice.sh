# Issue 29 v0.52 run10 (trial build v52f = v52e + two measuring switches, never committed): run9 found ~6 ms of a
# slot's ~14 ms hold outside its GPU work with 16 slots (host side: the enqueue, the wake-up after the wait) — are
# the GPU threads waiting for a core? The workers niced (CUDA_SOBEL_TRIAL_NICE=n, their threads only) or fewer
# (CUDA_SOBEL_TRIAL_WORKERS=k), against v52 (the committed code), v0.51 and the filed release.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_afbf45c O=.dev/cuda_sobel_v51 C=.dev/cuda_sobel_v52 N=.dev/cuda_sobel_v52f
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); $(grep -o 'TRIAL.*' /tmp/log) $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o 'read + inflate [0-9.]* ([0-9.]*)' /tmp/log)"; }
$C batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2 3; do
  one "filed release      " $P ""
  one "v0.51              " $O ""
  one "v52                " $C ""
  one "v52f nice 5        " $N "" CUDA_SOBEL_TRIAL_NICE=5
  one "v52f nice 10       " $N "" CUDA_SOBEL_TRIAL_NICE=10
  one "v52f nice 19       " $N "" CUDA_SOBEL_TRIAL_NICE=19
  one "v52f 16 workers    " $N "" CUDA_SOBEL_TRIAL_WORKERS=16
  one "v52f 12 workers    " $N "" CUDA_SOBEL_TRIAL_WORKERS=12
  one "v52f 16 w nice 10  " $N "" CUDA_SOBEL_TRIAL_WORKERS=16 CUDA_SOBEL_TRIAL_NICE=10
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v52's"
one "v52f nice 10 + steps" $N "" CUDA_SOBEL_TRIAL_NICE=10 CUDA_SOBEL_TRIAL_STEPS=1
one "v52 + steps (v52f)  " $N "" CUDA_SOBEL_TRIAL_STEPS=1
rm -rf /dev/shm/o /dev/shm/o0 $w
