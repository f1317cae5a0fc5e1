set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
sw() { local label=$1 bin=$2; shift 2
  local t0=$(date +%s.%N)
  env "$@" $bin bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label ($(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s): $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md)"; }
B=.dev/cuda_sobel_trial
sw "default" $B A=1
sw "MB7" $B CUDA_SOBEL_DEFINES=-DSTRIP_MIN_BLOCKS=7
sw "MB8" $B CUDA_SOBEL_DEFINES=-DSTRIP_MIN_BLOCKS=8
sw "aligned-only" $B CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_ALIGNED_ONLY=1
sw "aligned-only MB8" $B "CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_ALIGNED_ONLY=1 -DSTRIP_MIN_BLOCKS=8"
sw "aligned-only MB7" $B "CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_ALIGNED_ONLY=1 -DSTRIP_MIN_BLOCKS=7"
sw "default again" $B A=1
sw "aligned-only again" $B CUDA_SOBEL_DEFINES=-DSTRIP_TRIAL_ALIGNED_ONLY=1
