# Issue 29 v0.51, the committed code (v51 = this version's last build): tests/batch.rs with the GPU required; bench
# --kernel-only with the poisoned output; 2000 scenes by the clock against v0.50 and the filed release; nvCOMP waves on
# 16 slots (exploration); the headline command.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_pre F=.dev/cuda_sobel_final N=.dev/cuda_sobel_v51
echo "== tests/batch.rs with the GPU required (nvCOMP on the loader path)"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 240 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
echo "== bench --kernel-only"
timeout 120 $N bench --kernel-only --sizes 2048x1024,4096x4096 --kernel-reps 50 --out /tmp/bk > /tmp/bk.log 2>&1; echo "rc $?"; grep -i -E "mismatch|differ|gpu-strip|gpu-n1 |error" /tmp/bk.log | head -8
echo "== the headline command"; $N imgs_in/2048x1024.png > /tmp/h.log 2>&1; echo "rc $?"; head -20 /tmp/h.log
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); ahead $(grep -o '[0-9]* PNGs read while' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); $(grep -o '[0-9]* PNGs inflated by nvCOMP' /tmp/log | head -1); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-200)"; }
$F batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
echo "== 2000 PNGs by the clock"
for r in 1 2 3; do
  one "filed release  " $P ""
  one "v0.50          " $F ""
  one "v0.51          " $N ""
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v0.50's"
for r in 1 2; do
  one "v0.51 nvCOMP 16 slots q8            " $N "--png-inflate gpu --slots 16" CUDA_DEVICE_MAX_CONNECTIONS=8
  one "v0.51 nvCOMP 16 slots q32           " $N "--png-inflate gpu --slots 16"
  one "v0.51 nvCOMP 16 slots q8 lane16     " $N "--png-inflate gpu --slots 16" CUDA_DEVICE_MAX_CONNECTIONS=8 CUDA_SOBEL_CPU_LANE=16
  one "v0.51 nvCOMP 16 slots q8 lane16 w256" $N "--png-inflate gpu --slots 16" CUDA_DEVICE_MAX_CONNECTIONS=8 CUDA_SOBEL_CPU_LANE=16 CUDA_SOBEL_WAVE=256
  one "v0.51 nvCOMP 24 slots q32 lane16    " $N "--png-inflate gpu" CUDA_SOBEL_CPU_LANE=16
done
rm -rf /dev/shm/o /dev/shm/o0 $w
