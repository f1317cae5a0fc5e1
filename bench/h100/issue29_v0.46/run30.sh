set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
sync
for out in $w/o /dev/shm/o; do
  rm -rf $out; sync
  echo "== where threads wait: --png-inflate gpu → $out"
  CUDA_SOBEL_TRACE=1 python3 scripts/where_threads_wait.py --every-ms 2 -- .dev/cuda_sobel batch $w/in --png-inflate gpu --out $out 2>$w/err | head -1
  grep -o 'GPU.*write [0-9.]* ([0-9.]*)' $w/err | tail -1
  sed -n '/thread-samples/,$p' $w/err | head -32
done
