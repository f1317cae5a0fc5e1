# Issue 29 v0.52 run11 (trial build v52g = 67a23bf + a switch never committed, CUDA_SOBEL_TRIAL_NOEVENTS: cudarc's
# per-buffer event tracking off for batch's contexts — every use of a device buffer otherwise adds a
# cuStreamWaitEvent and a cuEventRecord, from 16 GPU threads at once). Outputs compared; against v52, v0.51 and the
# filed release.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_afbf45c O=.dev/cuda_sobel_v51 C=.dev/cuda_sobel_v52 N=.dev/cuda_sobel_v52g
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o 'read + inflate [0-9.]* ([0-9.]*)' /tmp/log)"; }
$C batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2 3; do
  one "filed release       " $P ""
  one "v0.51               " $O ""
  one "v52                 " $C ""
  one "v52g no events      " $N "" CUDA_SOBEL_TRIAL_NOEVENTS=1
  one "v52g no events q12  " $N "" CUDA_SOBEL_TRIAL_NOEVENTS=1 CUDA_DEVICE_MAX_CONNECTIONS=12
  one "v52g no events 24 s " $N "--slots 24" CUDA_SOBEL_TRIAL_NOEVENTS=1 CUDA_DEVICE_MAX_CONNECTIONS=8
done
one "v52g no events --check" $N "--check" CUDA_SOBEL_TRIAL_NOEVENTS=1
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs (--check) identical to v52's"
rm -rf /dev/shm/o; CUDA_SOBEL_TRIAL_NOEVENTS=1 $N batch $w/in --out /dev/shm/o > /dev/null 2>&1
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs (no events) identical to v52's"
rm -rf /dev/shm/o /dev/shm/o0 $w
