# Issue 29 v0.52 run12: after the review commits (360a022, d423a37: Ahead::order, hand_on): tests/batch.rs with the
# GPU and nvCOMP required, and 2000 scenes' outputs (CPU inflate and --png-inflate gpu) against v52's.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
N=.dev/cuda_sobel_v52r
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/$N timeout 300 .dev/batch --test-threads=2 -q > /tmp/t.log 2>&1; echo "tests/batch.rs rc $?"; grep -E 'test result|FAILED|panicked' /tmp/t.log | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
.dev/cuda_sobel_v52 batch $w/in --out /dev/shm/a > /dev/null 2>&1
for m in "" "--png-inflate gpu"; do rm -rf /dev/shm/b; s=$(date +%s%N); $N batch $w/in $m --out /dev/shm/b > /tmp/log 2>&1; rc=$?; e=$(date +%s%N)
  echo "v52r ${m:-default}: rc $rc $(( (e-s)/1000000 )) ms; $(head -1 /tmp/log | cut -c1-90)"
  cmp <(cd /dev/shm/a && md5sum *.png) <(cd /dev/shm/b && md5sum *.png) && echo "  outputs identical to v52's"; done
rm -rf /dev/shm/a /dev/shm/b $w
