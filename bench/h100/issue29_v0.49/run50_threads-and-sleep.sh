# Issue 29, v0.49: does a slot's waiting thread cost the CPU inflate its core? HEAD (041b6cc) with the driver's
# default wait (spinning), asleep (CUDA_SOBEL_SYNC=blocking) and more rayon threads than cores, beside the filed
# release (afbf45c), on 2000 scenes 2048×1024 → PNG edges by the clock; then 300 photos the same ways.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader; nproc
P=.dev/cuda_sobel_pre H=.dev/cuda_sobel_h0
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 dir=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env "$@" batch $dir $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; $(grep -o '[0-9]* of [0-9]* images in [0-9.]* s — [0-9.]* images/s' /tmp/log | head -1); $(grep -o 'thread-seconds.*' /tmp/log | head -1 | cut -c1-200)"; }
$H batch $w/in --out /dev/shm/o0 > /dev/null 2>&1; $P batch $w/in --out /dev/shm/o1 > /dev/null 2>&1
echo "== 2000 PNGs"
for r in 1 2; do
  one "pre (afbf45c)    " $w/in "" $P
  one "HEAD spin, 16 thr" $w/in "" CUDA_SOBEL_TRACE=1 $H
  one "HEAD sleep, 16   " $w/in "" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=blocking $H
  one "HEAD sleep, 24   " $w/in "" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=blocking RAYON_NUM_THREADS=24 $H
  one "HEAD sleep, 32   " $w/in "" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=blocking RAYON_NUM_THREADS=32 $H
  one "HEAD spin, 24    " $w/in "" CUDA_SOBEL_TRACE=1 RAYON_NUM_THREADS=24 $H
  one "HEAD yield, 24   " $w/in "" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=yield RAYON_NUM_THREADS=24 $H
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to the first run's"
echo "== 300 photos"
python3 scripts/make_photos.py --count 300 --out /tmp/p300 > /dev/null 2>&1; ls /tmp/p300 | wc -l
$H batch /tmp/p300 --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2; do
  one "HEAD spin, 16    " /tmp/p300 "" CUDA_SOBEL_TRACE=1 $H
  one "HEAD sleep, 16   " /tmp/p300 "" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=blocking $H
  one "HEAD sleep, 24   " /tmp/p300 "" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_SYNC=blocking RAYON_NUM_THREADS=24 $H
  one "HEAD bmp (no deflate)" /tmp/p300 "--format bmp" CUDA_SOBEL_TRACE=1 $H
  one "HEAD --png-encoder cpu" /tmp/p300 "--png-encoder cpu" CUDA_SOBEL_TRACE=1 $H
  grep "JPEG engine:" /tmp/log | cut -c1-220
done
