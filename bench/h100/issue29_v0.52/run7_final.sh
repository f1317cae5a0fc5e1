# Issue 29 v0.52 run7, the committed build (v52 = 161557e): tests/batch.rs with the GPU and nvCOMP required,
# tests/safety.rs with the GPU required, the Python package's CPU, GPU and OpenCV tests and its batch call (the
# handoff and the page-locked rows, no reads ahead) against the command line's outputs, the headline command.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
N=.dev/cuda_sobel_v52
echo "== tests/batch.rs with the GPU and nvCOMP required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/$N timeout 300 .dev/batch --test-threads=2 -q > /tmp/t.log 2>&1; echo "rc $?"; grep -E 'test result|FAILED|panicked|error' /tmp/t.log | head
echo "== tests/safety.rs with the GPU required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 200 .dev/safety --test-threads=2 -q > /tmp/t.log 2>&1; echo "rc $?"; grep -E 'test result|FAILED|panicked|error' /tmp/t.log | head
echo "== the headline command"; $N imgs_in/2048x1024.png > /tmp/h.log 2>&1; echo "rc $?"; head -16 /tmp/h.log
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
s=$(date +%s%N); $N batch $w/in --out /dev/shm/cli > /tmp/log 2>&1; e=$(date +%s%N); echo "command line: rc $?; $(( (e-s)/1000000 )) ms; $(head -1 /tmp/log | cut -c1-160)"
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
rm -rf /dev/shm/cli /dev/shm/py* $w
