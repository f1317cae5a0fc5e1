# Issue 29, v0.49: RGBA rows' alpha left filtered (unfilter_pack drops it): the kernel file against the one before
# (850e4a3) and v0.48's, alone; tests/unfilter.rs with the GPU required (RGBA at every size and filter); RGBA scenes
# through batch --check and against the previous binary's outputs.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 - <<'PY'
from PIL import Image
im = Image.open("imgs_in/2048x1024.png"); im.putalpha(200); im.save("/tmp/scene_rgba.png")
PY
python3 scripts/unfilter_bench.py /tmp/scene_rgba.png imgs_in/2048x1024.png --kernel .dev/unfilter_old.cu --kernel .dev/unfilter_v049a.cu --kernel cuda/unfilter.cu --concurrent 8
echo "== tests/unfilter.rs, GPU required"
CUDA_SOBEL_REQUIRE_GPU=1 timeout 300 .dev/unfilter --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
mkdir -p /tmp/ra; for i in $(seq -w 1 300); do cp /tmp/scene_rgba.png /tmp/ra/s$i.png; done
.dev/cuda_sobel_u6 batch /tmp/ra --out /tmp/ra_check --check | head -1
for b in .dev/cuda_sobel_u5 .dev/cuda_sobel_u6 .dev/cuda_sobel_u5 .dev/cuda_sobel_u6; do rm -rf /dev/shm/o_$(basename $b); $b batch /tmp/ra --out /dev/shm/o_$(basename $b) | head -1 | cut -c1-80; done
cmp <(cd /dev/shm/o_cuda_sobel_u5 && md5sum *.png) <(cd /dev/shm/o_cuda_sobel_u6 && md5sum *.png) && echo "RGBA outputs identical to the previous build's"
compute-sanitizer --tool racecheck .dev/cuda_sobel_u6 batch /tmp/scene_rgba.png --out /tmp/ra_san --check 2>&1 | grep -E "SUMMARY" 
