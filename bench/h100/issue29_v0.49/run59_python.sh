# Issue 29, v0.49: the Python package (this build's abi3 wheel) on the GPU machine — its array and CPU tests with the
# GPU required, then its batch call (what Dask's tasks run: `_native.batch`, the same run_planned with the new workers
# and slots) on 2000 scenes, its outputs against the command line's, and an array call after it (the context's waits
# given back).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .dev/wheels/*.whl && export PYTHONPATH=/tmp/site
CUDA_SOBEL_REQUIRE_GPU=1 timeout 400 python3 -m pytest -q -x python/tests/test_cpu.py python/tests/test_gpu.py python/tests/test_opencv.py 2>&1 | tail -3
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
.dev/cuda_sobel_u5 batch $w/in --out /dev/shm/cli > /dev/null 2>&1
CUDA_SOBEL_TRACE=1 python3 - <<'PY' 2>&1 | grep -v "^cuda_sobel trace: .*\(GPU\|kernels\|context\)" | cut -c1-220
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
