# Issue 29 v0.51, after batch/handoff.rs was split out (v51b = 9a618c8): tests/batch.rs with the GPU and nvCOMP
# required; 2000 scenes by the clock against v0.50 and the filed release; the Python package's GPU tests and its
# batch call (run_planned: no reads ahead, the handoff) against the command line's outputs.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_pre F=.dev/cuda_sobel_final N=.dev/cuda_sobel_v51b
echo "== tests/batch.rs with the GPU required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 240 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2; shift 2; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" $bin batch $w/in --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); ahead $(grep -o '[0-9]* PNGs read while' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-200)"; }
$F batch $w/in --out /dev/shm/cli > /dev/null 2>&1
echo "== 2000 PNGs by the clock"
for r in 1 2 3; do one "filed release" $P; one "v0.50        " $F; one "v0.51        " $N; done
cmp <(cd /dev/shm/cli && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v0.50's"
echo "== the Python package"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .dev/wheels/*.whl && export PYTHONPATH=/tmp/site
CUDA_SOBEL_REQUIRE_GPU=1 timeout 300 python3 -m pytest -q -x python/tests/test_cpu.py python/tests/test_gpu.py python/tests/test_opencv.py 2>&1 | tail -2
python3 - <<'PY' 2>&1 | cut -c1-220
import time, cupy as cp, numpy as np
import cuda_sobel as cs
from cuda_sobel import _native
from cuda_sobel._arrays import native_filter
f = native_filter("sobel", 3, None, "exact", "percent", "l2")
for r in range(3):
    jobs, _ = _native.plan_batch(["/tmp/w/in"], f"/dev/shm/py{r}")
    t = time.perf_counter(); n, failures, secs, what = _native.batch(jobs, f, "default", "png", False); wall = time.perf_counter() - t
    print(f"round {r}: {n} images, {len(failures)} failures, {n / secs:.0f} images/s by its line, {wall:.2f} s the call; {what}")
x = cp.asarray(np.random.default_rng(1).integers(0, 256, (480, 640, 3), dtype=np.uint8))
e = cs.sobel(x)
print("an array call after the batches:", type(e).__name__, e.shape, "equal to the CPU's:", bool((cp.asnumpy(e) == cs.sobel(cp.asnumpy(x))).all()))
PY
cmp <(cd /dev/shm/cli && md5sum *.png) <(cd /dev/shm/py2 && md5sum *.png) && echo "Python's batch outputs identical to the command line's"
rm -rf /dev/shm/o /dev/shm/cli /dev/shm/py* $w
