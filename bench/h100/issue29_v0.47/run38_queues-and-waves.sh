set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; local s=$(date +%s%N); env "$@" --out $out > $w/log 2>$w/err; local e=$(date +%s%N)
  echo "$label: wall $(( (e - s) / 1000000 )) ms; batch says $(head -1 $w/log | grep -o '[0-9.]* s — [0-9.]* images/s'); ctx $(grep -o '[0-9.]* ms  GPU context made' $w/err)"; }
N=.dev/cuda_sobel
$N batch $w/in --out /dev/shm/o > /dev/null 2>&1
for r in 1 2; do
  one "default (cpu inflate)" /dev/shm/o CUDA_SOBEL_TRACE=1 $N batch $w/in
  for q in 32 24 16 8; do for wv in 512 256; do
    one "gpu inflate, queues $q, wave $wv" /dev/shm/o CUDA_SOBEL_TRACE=1 CUDA_DEVICE_MAX_CONNECTIONS=$q CUDA_SOBEL_WAVE=$wv $N batch $w/in --png-inflate gpu
  done; done
done
