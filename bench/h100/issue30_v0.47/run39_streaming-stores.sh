set -u
nvidia-smi --query-gpu=name --format=csv,noheader
bx() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study box-blur --runs 20 --out /tmp/bx > /tmp/bx.log 2>&1 || { tail -3 /tmp/bx.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| box:15/ {print; exit}' /tmp/bx/study-box-blur.md) exact-no: $(grep -c '| no |' /tmp/bx/study-box-blur.md)"
  grep -A12 "^## 4256" /tmp/bx/study-box-blur.md | grep "separable strip (ours) | box:15" | head -1; }
sw() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md) exact-no: $(grep -c '| no |' /tmp/sw/study-filter-sizes.md)"
  grep -E "^\| separable strip \(ours\)" /tmp/sw/study-filter-sizes.md | head -4 | cut -c1-90; }
for r in 1 2; do
  bx "box prev" .dev/cuda_sobel_prev A=1
  bx "box streaming stores" .dev/cuda_sobel CUDA_SOBEL_DEFINES=-DCONV_STORE_STREAMING=1
done
for r in 1 2; do
  sw "scharr prev" .dev/cuda_sobel_prev A=1
  sw "scharr streaming stores" .dev/cuda_sobel CUDA_SOBEL_DEFINES=-DCONV_STORE_STREAMING=1
done
