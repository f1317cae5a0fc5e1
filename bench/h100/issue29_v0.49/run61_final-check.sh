# Issue 29, v0.49: the final commit's binary (b018104): tests/batch.rs and tests/safety.rs with the GPU required,
# 2000 scenes (RGB) and 300 RGBA scenes against run55's build (u4) by the clock, outputs compared.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
F=.dev/cuda_sobel_final U=.dev/cuda_sobel_u4
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$F timeout 200 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$F timeout 120 .dev/safety --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
for r in 1 2; do for b in $U $F; do rm -rf /dev/shm/o_$(basename $b); sync; s=$(date +%s%N); $b batch $w/in --out /dev/shm/o_$(basename $b) > /tmp/log 2>&1; e=$(date +%s%N); echo "$b: $(( (e-s)/1000000 )) ms; $(grep -o '[0-9.]* images/s' /tmp/log | head -1)"; done; done
cmp <(cd /dev/shm/o_cuda_sobel_u4 && md5sum *.png) <(cd /dev/shm/o_cuda_sobel_final && md5sum *.png) && echo "2000 outputs identical"
