#!/usr/bin/env bash
# Issue 29's JPEG measurements on the GPU machine, in one run:
#   bash scripts/jpeg-batch.sh N PREVIOUS_BINARY BINARY      (e.g. 300 .dev/cuda_sobel_prev .dev/cuda_sobel)
# 1. the awkward files (scripts/make_photos.py --odd) through `batch --jpeg-decoder gpu --check`: every file
#    that decodes is exact against cpu-scalar on the RGB its decoder produced; cut and hostile ones fail with
#    one line; the batch goes on;
# 2. N photos of 4000×3000 (make_photos.py): images/s of the previous release's batch and this one's — as it
#    runs by default (nvJPEG, PNGs deflated on the GPU), with the CPU's PNG encoder, with the CPU's JPEG
#    decoder — at default and fast PNG compression (each warmed up once, then 2 runs), OpenCV's imread →
#    Sobel → imwrite through a pool of every core, and nvJPEG's decode alone through torchvision when it is
#    installed;
# 3. how far apart the decoders are: edges from nvJPEG's RGB against the CPU decoder's, and (with torchvision
#    and Pillow) nvJPEG's RGB against the CPU decoder's (zune-jpeg, what `cuda_sobel.read` uses) and
#    libjpeg-turbo's (Pillow, OpenCV).
set -uo pipefail
n=$1 prev=$2 bin=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "host: $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
grep -n "pitch\[NVJPEG_MAX_COMPONENT\]" /usr/local/cuda/include/nvjpeg.h || echo "nvjpeg.h: pitch declaration not found"

echo "== 1. awkward files, --jpeg-decoder gpu --check"
python3 scripts/make_photos.py --odd --out "$work/odd"
"$bin" batch "$work/odd" --out "$work/odd-out" --jpeg-decoder gpu --check
echo "exit $? (2: some files failed, as the cut and hostile ones must)"
ls "$work/odd-out"

echo "== 2. $n photos, 4000×3000, quality 90"
python3 scripts/make_photos.py --count "$n" --out "$work/photos"
rate() { sed -n 's/.* — \([0-9.]*\) images\/s.*/\1/p' | head -1; }
run() { # label, binary, args…
  local label=$1 b=$2; shift 2
  local runs=()
  for r in 0 1 2; do
    rm -rf "$work/out"
    x=$("$b" batch "$work/photos" --out "$work/out" "$@" 2>&1 | tee "$work/last.log" | rate)
    [ "$r" -gt 0 ] && runs+=("$x")
  done
  echo "$label: ${runs[*]} images/s — $(head -1 "$work/last.log" | sed 's/.* — //')"
}
run "previous release, default compression" "$prev"
run "this build, default compression (nvJPEG, PNGs deflated on the GPU)" "$bin"
run "this build, default compression, --png-encoder cpu" "$bin" --png-encoder cpu
run "this build, default compression, --jpeg-decoder cpu" "$bin" --jpeg-decoder cpu
run "previous release, --png-compression fast" "$prev" --png-compression fast
run "this build, --png-compression fast" "$bin" --png-compression fast
run "this build, --png-compression fast, --png-encoder cpu" "$bin" --png-compression fast --png-encoder cpu
if python3 -c 'import cv2' 2>/dev/null; then
  for r in 1 2; do
    rm -rf "$work/ocv"; mkdir "$work/ocv"
    echo "OpenCV imread → Sobel → imwrite, $(nproc) processes: $(python3 scripts/opencv_wait.py folder "$work/photos" "$work/ocv" "$(nproc)")"
  done
  rm -rf "$work/ocv"
fi
rm -rf "$work/gpu" "$work/cpu"
"$bin" batch "$work/photos" --out "$work/gpu" --jpeg-decoder gpu --png-compression fast >/dev/null
"$bin" batch "$work/photos" --out "$work/cpu" --jpeg-decoder cpu --png-compression fast >/dev/null

echo "== 3. the decoders against each other"
python3 - "$work" <<'EOF'
import glob, os, sys, time
import cv2, numpy as np
work = sys.argv[1]
names = sorted(os.listdir(f"{work}/gpu"))[:20]
diff = [np.count_nonzero(cv2.imread(f"{work}/gpu/{f}", 0) != cv2.imread(f"{work}/cpu/{f}", 0)) for f in names]
px = 4000 * 3000
print(f"edges, nvJPEG's RGB vs the CPU decoder's, {len(names)} photos: {100 * np.mean(diff) / px:.2f} % of pixels differ "
      f"(max {100 * max(diff) / px:.2f} %)")
try:
    import torch, torchvision
    from torchvision.io import decode_jpeg
    from PIL import Image
    sys.path.insert(0, os.environ.get("SITE", ""))
    import cuda_sobel
except ImportError as e:
    print(f"RGB comparison skipped: {e}")
    sys.exit(0)
files = sorted(glob.glob(f"{work}/photos/*.jpg"))
data = [torchvision.io.read_file(f) for f in files]
for batch in (data[:16], data[:16]):
    decode_jpeg(batch, device="cuda"); torch.cuda.synchronize()
t = time.perf_counter()
for i in range(0, len(data), 16):
    decode_jpeg(data[i:i + 16], device="cuda")
torch.cuda.synchronize()
print(f"nvJPEG decode alone (torchvision, batches of 16): {len(data) / (time.perf_counter() - t):.0f} images/s")
stats = {"nvJPEG vs CPU decoder (zune-jpeg)": [], "nvJPEG vs libjpeg-turbo (Pillow)": [], "CPU decoder vs libjpeg-turbo": []}
for f in files[:10]:
    nv = decode_jpeg(torchvision.io.read_file(f), device="cuda").permute(1, 2, 0).cpu().numpy().astype(int)
    zune = cuda_sobel.read(f).astype(int)
    turbo = np.asarray(Image.open(f).convert("RGB")).astype(int)
    for k, (a, b) in zip(stats, [(nv, zune), (nv, turbo), (zune, turbo)]):
        d = np.abs(a - b).max(axis=2)
        stats[k].append((d.max(), np.count_nonzero(d) / d.size))
for k, v in stats.items():
    print(f"RGB, {k}, 10 photos: max {max(m for m, _ in v)} levels, {100 * np.mean([s for _, s in v]):.1f} % of pixels differ")
EOF
