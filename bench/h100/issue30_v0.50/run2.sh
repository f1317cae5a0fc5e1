set -u
nvidia-smi --query-gpu=name --format=csv,noheader
sw() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md) NO-rows: $(grep -c 'NO' /tmp/sw/study-filter-sizes.md)"; }
B=.dev/cuda_sobel_trial
sw "default" $B A=1
sw "skip-edges (80 regs)" $B CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_SKIP_EDGES=1
sw "aligned-only (56 regs)" $B CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_ALIGNED_ONLY=1
sw "default again" $B A=1
sw "skip-edges again" $B CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_SKIP_EDGES=1
