set -u
nvidia-smi --query-gpu=name --format=csv,noheader
sw() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study filter-sizes --runs 20 --out $OUT/$label-fs > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label fs: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' $OUT/$label-fs/study-filter-sizes.md | cut -d'|' -f4-8) NO-rows: $(grep -c 'NO' $OUT/$label-fs/study-filter-sizes.md)"
  echo "   pyramid strip: $(grep -E '^\| separable strip \(ours\)' $OUT/$label-fs/study-filter-sizes.md | head -4 | cut -d'|' -f3,4 | tr '\n' ' ')"
  grep -E "^- (3×3|5×5|7×7|9×9|16384)" /tmp/sw.log | cut -c1-200; }
bx() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study box-blur --runs 20 --out $OUT/$label-bx > /tmp/bx.log 2>&1 || { tail -3 /tmp/bx.log; return; }
  echo "$label bx: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| box:15/ {print; exit}' $OUT/$label-bx/study-box-blur.md | cut -d'|' -f4-8) NO-rows: $(grep -c 'NO' $OUT/$label-bx/study-box-blur.md)"
  grep -A14 "^## 4256" $OUT/$label-bx/study-box-blur.md | grep "separable strip (ours) | box:15" | head -1 | cut -c1-120
  grep -E "^- .*16384" /tmp/bx.log | cut -c1-200; }
sw head .dev/cuda_sobel_final A=1
sw v50 .dev/cuda_sobel_v50 A=1
bx head .dev/cuda_sobel_final A=1
bx v50 .dev/cuda_sobel_v50 A=1
echo "== tests/filter.rs, GPU required"
CUDA_SOBEL_BIN=$PWD/.dev/cuda_sobel_v50 CUDA_SOBEL_REQUIRE_GPU=1 timeout 250 .dev/filter --test-threads=4 -q 2>&1 | grep -E "test result|panicked|FAILED|skip" | head -20
