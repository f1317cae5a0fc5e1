#!/usr/bin/env bash
# Where a filter strategy's time goes, on the GPU machine: Nsight Compute (ncu) on one launch of `filter
# --variant $VARIANT` for each kernel spec, on a generated grey image (16384² by default): speed of light (DRAM,
# L1, L2 and issue as shares of their peaks), pipe utilisation, instruction mix, warp stall reasons, occupancy.
# Usage (repo root, after scripts/build-dev.sh): scripts/profile-filter.sh [SPECS] [SIZE]
#   e.g. VARIANT=gpu-strip scripts/profile-filter.sh "box:15 scharr:9" 16384x16384
# CUDA_SOBEL_DEFINES passes extra -D options to NVRTC (a tuning to try, core/src/gpu/compile.rs). Reports go to
# $OUT/profile-<spec>.txt when $OUT is set (the device tool returns them), else to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.dev/cuda_sobel}
VARIANT=${VARIANT:-gpu-strip}
SPECS=${1:-box:15 scharr:9}
SIZE=${2:-16384x16384}
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN" generate "$SIZE" --out "$work/in.png" > /dev/null
for spec in $SPECS; do
  report=${OUT:+$OUT/profile-${spec/:/-}.txt}
  # The first launch of the filter's kernel (conv_*, not the grey conversion), every section named below.
  "$NCU" --kernel-name regex:'^conv' --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section InstructionStats --section WarpStateStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis --metrics \
    sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,lts__t_bytes.sum,dram__bytes.sum \
    "$BIN" filter "$work/in.png" --kernel "$spec" --variant "$VARIANT" --out "$work/out.png" \
    > "${report:-/dev/stdout}" 2>&1 || { echo "profile-filter: ncu failed for $spec"; tail -5 "${report:-/dev/null}"; }
  if [ -n "$report" ]; then echo "$spec: $report"; fi
done
