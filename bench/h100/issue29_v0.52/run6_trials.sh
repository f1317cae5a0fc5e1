# Issue 29 v0.52 run6 (trial build v52d, measuring switches never committed as they are): with the slots the limit,
# (a) a worker decodes a PNG whole on the CPU (and runs it through a slot as RGB, no unfilter on the GPU) when N
# inflated PNGs already wait for the GPU threads (CUDA_SOBEL_TRIAL_DECODE=N); (b) the engines left to the process's
# exit (CUDA_SOBEL_TRIAL_LEAK). Against v52c (= the committed code), v0.51 and the filed release.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_afbf45c O=.dev/cuda_sobel_v51 C=.dev/cuda_sobel_v52c N=.dev/cuda_sobel_v52d
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); main $(grep -o '[0-9.]* ms  main returns' /tmp/log | head -1 | cut -d' ' -f1); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-150)"; }
$O batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2 3; do
  one "filed release   " $P ""
  one "v0.51           " $O ""
  one "v52c            " $C ""
  one "v52d decode@16  " $N "" CUDA_SOBEL_TRIAL_DECODE=16
  one "v52d decode@12  " $N "" CUDA_SOBEL_TRIAL_DECODE=12
  one "v52d decode@8   " $N "" CUDA_SOBEL_TRIAL_DECODE=8
  one "v52d leak       " $N "" CUDA_SOBEL_TRIAL_LEAK=1
  one "v52d decode@12 + leak" $N "" CUDA_SOBEL_TRIAL_DECODE=12 CUDA_SOBEL_TRIAL_LEAK=1
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v0.51's"
rm -rf /dev/shm/o /dev/shm/o0 $w
