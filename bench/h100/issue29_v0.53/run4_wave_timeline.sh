# Issue 29 v0.53 run4: the waves' timeline (CUDA_SOBEL_TRACE) with nvCOMP alone and beside the CPU, 16 queues, v0.52;
# and waves of 128 / 256 PNGs (CUDA_SOBEL_WAVE).
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
for cfg in "CUDA_SOBEL_CPU_LANE=0" "CUDA_SOBEL_CPU_LANE=1" "CUDA_SOBEL_CPU_LANE=0 CUDA_SOBEL_WAVE=128" "CUDA_SOBEL_CPU_LANE=0 CUDA_SOBEL_WAVE=256" "CUDA_SOBEL_CPU_LANE=1 CUDA_SOBEL_WAVE=128"; do
  rm -rf /dev/shm/o; sync; t0=$(date +%s%N)
  env $cfg CUDA_SOBEL_TRACE=1 CUDA_DEVICE_MAX_CONNECTIONS=16 .dev/cuda_sobel_v52 batch $w/in --png-inflate gpu --out /dev/shm/o > /tmp/log 2>&1; t1=$(date +%s%N)
  echo "== $cfg: $(( (t1-t0)/1000000 )) ms"
  grep -v "^batch:" /tmp/log | sed 's/cuda_sobel trace: *//' | cut -c1-150
done
rm -rf /dev/shm/o $w
