# Issue 29 v0.51 candidate: slots, hardware queues and read-ahead threads swept, by the clock (2000 PNG scenes).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_pre F=.dev/cuda_sobel_final N=.dev/cuda_sobel_new
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); ahead $(grep -o '[0-9]* PNGs read while' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-200)"; }
$F batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2; do
  one "filed release       " $P ""
  one "v0.50               " $F ""
  one "new                 " $N ""
  one "new 14 thr          " $N "" RAYON_NUM_THREADS=14 CUDA_SOBEL_SYNC=blocking
  one "new 12 thr          " $N "" RAYON_NUM_THREADS=12 CUDA_SOBEL_SYNC=blocking
  one "new q16             " $N "" CUDA_DEVICE_MAX_CONNECTIONS=16
  one "new q32             " $N "" CUDA_DEVICE_MAX_CONNECTIONS=32
  one "new slots24         " $N "--slots 24"
  one "new slots24 q32     " $N "--slots 24" CUDA_DEVICE_MAX_CONNECTIONS=32
  one "new slots32 q32     " $N "--slots 32" CUDA_DEVICE_MAX_CONNECTIONS=32
  one "new slots24 q32 14t " $N "--slots 24" CUDA_DEVICE_MAX_CONNECTIONS=32 RAYON_NUM_THREADS=14 CUDA_SOBEL_SYNC=blocking
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v0.50's"
rm -rf /dev/shm/o /dev/shm/o0 $w
