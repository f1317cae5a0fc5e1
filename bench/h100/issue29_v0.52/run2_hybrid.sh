# Issue 29 v0.52 run2: nvCOMP's waves taken from the back of the order and handed to the same GPU threads as the
# workers' PNGs (first build, v52a) — tests/batch.rs with the GPU and nvCOMP required; 2000 scenes by the clock
# against the filed release and v0.51, in several wave settings; outputs against v0.51's.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_afbf45c O=.dev/cuda_sobel_v51 N=.dev/cuda_sobel_v52a
echo "== tests/batch.rs with the GPU and nvCOMP required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/$N timeout 240 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked|error' | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); ahead $(grep -o '[0-9]* PNGs read while' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); nvcomp $(grep -o '[0-9]* PNGs inflated by nvCOMP' /tmp/log | tail -1 | cut -d' ' -f1); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-200)"; }
$O batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
echo "== 2000 PNGs by the clock"
for r in 1 2 3; do
  one "filed release        " $P ""
  one "v0.51                " $O ""
  one "v52a cpu             " $N ""
  one "v52a gpu 384/512     " $N "--png-inflate gpu"
  one "v52a gpu 256/512     " $N "--png-inflate gpu" CUDA_SOBEL_WAVE=256
  one "v52a gpu 512/256     " $N "--png-inflate gpu" CUDA_SOBEL_WAVE=512 CUDA_SOBEL_WAVE_LEAST=256
  one "v52a gpu 256/256     " $N "--png-inflate gpu" CUDA_SOBEL_WAVE=256 CUDA_SOBEL_WAVE_LEAST=256
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v0.51's"
one "v52a gpu q32         " $N "--png-inflate gpu" CUDA_DEVICE_MAX_CONNECTIONS=32
echo "== the last run's trace"; grep -E "ms  " /tmp/log | head -40; grep -i summary -A3 /tmp/log | head; tail -5 /tmp/log
rm -rf /dev/shm/o /dev/shm/o0 $w
