set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
H=.dev/cuda_sobel_prev P=.dev/cuda_sobel_pre
$H batch $w/in --out /dev/shm/o > /dev/null 2>&1; rm -rf /dev/shm/o
for args in "--png-inflate gpu" "--png-inflate gpu --jpeg-decoder cpu" "" "--jpeg-decoder cpu"; do
  rm -rf /dev/shm/o; s=$(date +%s.%N)
  CUDA_SOBEL_TRACE=1 $H batch $w/in --out /dev/shm/o $args > $w/log 2> $w/err
  e=$(date +%s.%N); echo "== HEAD $args: wall $(echo "$e - $s" | bc) s; $(head -1 $w/log | grep -o '[0-9.]* s — [0-9.]* images/s')"
  grep -v "^ *[0-9]* images" $w/err | head -25
done
rm -rf /dev/shm/o; s=$(date +%s.%N); $P batch $w/in --out /dev/shm/o > $w/log 2>&1; e=$(date +%s.%N)
echo "== pre-issue: wall $(echo "$e - $s" | bc) s; $(head -1 $w/log | grep -o '[0-9.]* s — [0-9.]* images/s')"
