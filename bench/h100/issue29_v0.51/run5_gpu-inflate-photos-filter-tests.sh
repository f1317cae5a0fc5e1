# Issue 29 v0.51 candidate (new2): --png-inflate gpu on it, photos, and tests/filter.rs (issue 30's kernels, HEAD) with the GPU required.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
F=.dev/cuda_sobel_final N=.dev/cuda_sobel_new2
CUDA_SOBEL_BIN=$PWD/$N CUDA_SOBEL_REQUIRE_GPU=1 timeout 280 .dev/filter --test-threads=4 -q > /tmp/filter.log 2>&1; echo "filter rc $?" >> /tmp/filter.log
echo "== tests/filter.rs"; grep -E "test result|FAILED|panicked|rc" /tmp/filter.log | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); $(grep -o '[0-9.]* images/s' /tmp/log | tail -1); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-200)"; }
echo "== 2000 PNGs"
for r in 1 2; do
  one "v0.50 --png-inflate gpu" $F "--png-inflate gpu"
  one "new2 --png-inflate gpu " $N "--png-inflate gpu"
  one "new2 gpu inflate q8    " $N "--png-inflate gpu" CUDA_DEVICE_MAX_CONNECTIONS=8
done
rm -rf /dev/shm/o $w
echo "== 300 photos by the clock"
ROUNDS="1 2 3" timeout 200 bash scripts/photos-by-clock.sh 300 $F $N 2>&1 | grep -v "^batched\|^nvJPEG" | head -12
