set -u
nvidia-smi --query-gpu=name --format=csv,noheader
sw() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md | cut -d'|' -f4-8) NO-rows: $(grep -c 'NO' /tmp/sw/study-filter-sizes.md)"
  echo "   pyramid strip: $(grep -E '^\| separable strip \(ours\)' /tmp/sw/study-filter-sizes.md | head -4 | cut -d'|' -f3,4 | tr '\n' ' ')"; }
bx() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study box-blur --runs 20 --out /tmp/bx > /tmp/bx.log 2>&1 || { tail -3 /tmp/bx.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| box:15/ {print; exit}' /tmp/bx/study-box-blur.md | cut -d'|' -f4-8) NO-rows: $(grep -c 'NO' /tmp/bx/study-box-blur.md)"; }
H=.dev/cuda_sobel_final; B=.dev/cuda_sobel_trial
sw "HEAD" $H A=1
sw "rotated" $B A=1
sw "rotated, skip gather" $B CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_SKIP_GATHER=1
sw "rotated, skip ends" $B CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_SKIP_ENDS=1
bx "box HEAD" $H A=1
bx "box rotated" $B A=1
