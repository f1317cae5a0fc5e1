# Issue 29 v0.53 run11: the committed code (37019a4; .dev/cuda_sobel built from it) on the GPU: tests/batch.rs,
# tests/safety.rs and tests/bad_input.rs with the GPU (and nvCOMP) required; the headline command (every variant
# identical); compute-sanitizer memcheck over the changed path (--png-inflate gpu --check, nvCOMP alone, scenes and a
# cut file).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
export CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/.dev/cuda_sobel
for t in batch safety bad_input; do echo "== tests/$t.rs"; timeout 300 .dev/t_$t --test-threads=2 -q 2>&1 | tail -2; done
echo "== headline"; timeout 120 .dev/cuda_sobel imgs_in/2048x1024.png > /tmp/h.log 2>&1; echo "exit $?"; tail -4 /tmp/h.log
m=/tmp/m; mkdir -p $m; for i in 1 2 3 4; do cp imgs_in/512x512.png $m/s$i.png; done
head -c 70000 imgs_in/512x512.png > $m/cut.png
echo "== memcheck, --png-inflate gpu --check"
CUDA_SOBEL_CPU_LANE=0 timeout 300 compute-sanitizer --tool memcheck --print-limit 5 .dev/cuda_sobel batch $m --png-inflate gpu --check --out /tmp/mo 2>&1 | tail -6
rm -rf $m /tmp/mo
