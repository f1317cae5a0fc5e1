# Issue 29, v0.49: where the 2000-PNG command's time outside batch's line goes (CUDA_SOBEL_TRACE's marks), v0.49.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
U=.dev/cuda_sobel_u4
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
$U batch $w/in --out /dev/shm/o > /dev/null 2>&1
for r in 1 2; do
  rm -rf /dev/shm/o; sync; s=$(date +%s%N)
  CUDA_SOBEL_TRACE=1 $U batch $w/in --out /dev/shm/o > /tmp/log 2>&1; e=$(date +%s%N)
  echo "== round $r: whole command $(( (e-s)/1000000 )) ms"
  grep -v "^cuda_sobel trace: *[0-9.]* ms  batch: [0-9]* images in" /tmp/log | grep "trace" | cut -c1-200 | head -40
  grep "images/s" /tmp/log | tail -1
done
