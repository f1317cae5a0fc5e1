set -u
nvidia-smi --query-gpu=name --format=csv,noheader
sw() { local label=$1 bin=$2; shift 2
  local t0=$(date +%s)
  env "$@" $bin bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md) [$(($(date +%s)-t0)) s] exact-no: $(grep -c '| no |' /tmp/sw/study-filter-sizes.md)"
  grep -E "^\| (separable strip|rolling window) \(ours\)" /tmp/sw/study-filter-sizes.md | head -4 | cut -c1-100; grep -i "overlapped" /tmp/sw/study-filter-sizes.md | grep -i "strip" | head -2 | cut -c1-120; }
sw "prev" .dev/cuda_sobel_prev A=1
sw "shared ring" .dev/cuda_sobel A=1
sw "prev" .dev/cuda_sobel_prev A=1
sw "shared ring" .dev/cuda_sobel A=1
cp /tmp/sw/study-filter-sizes.md $OUT/shared-default.md
sw "shared ring rows 28" .dev/cuda_sobel CUDA_SOBEL_STRIP_ROWS=28
