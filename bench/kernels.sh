#!/usr/bin/env bash
# The Sobel kernels (docs/performance.md, "Kernels"), in one call on the GPU machine:
#   GPU: gpu-strip's computation alone at 2048×1024, 7680×4320 and 16384² for ksize 3, 5, 7, device-resident, as a
#        share of the copy bandwidth measured in the same run, beside NPP's Sobel of the same mask where it has one
#        (3×3: grey + GradientVectorSobel; 5×5: grey + FilterSobelHoriz/VertBorder);
#   CPU: cpu-rayon against OpenCV's cvtColor → Sobel ×2 → magnitude → convertScaleAbs with the same ksize on the
#        same cores, at 2048×1024.
# Usage: BIN=.dev/cuda_sobel bash bench/kernels.sh [OUT_DIR] (default bench/out/stencil); each run's results.md goes
# to OUT_DIR/{gpu,cpu}-k<K>.md, and the lines that matter are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.dev/cuda_sobel}
# Computation alone only (--kernel-only); a binary older than that option runs its whole pipeline once as well.
ONLY="--kernel-only"
"$BIN" bench --help | grep -- --kernel-only > /dev/null || ONLY="--runs 1 --wait-runs 0"
OUT=${1:-bench/out/stencil}
mkdir -p "$OUT"
for k in 3 5 7; do
  # shellcheck disable=SC2086
  "$BIN" bench --ksize "$k" --variant gpu-strip --sizes 2048x1024,7680x4320,16384x16384 --peers npp $ONLY \
    --kernel-reps 100 --out "$OUT/run" 2>&1 | grep -E "^Device-to-device|^[0-9]+x[0-9]+ ·|^  Computation alone|^  NPP|^- Peer skipped|times faster" || true
  cp "$OUT/run/results.md" "$OUT/gpu-k$k.md"
  "$BIN" bench --ksize "$k" --variant cpu-rayon --sizes 2048x1024 --runs 3 --kernel-reps 50 --wait-runs 0 \
    --out "$OUT/run" 2>&1 | grep -E "^[0-9]+x[0-9]+ ·|^  Computation alone|^  OpenCV|not measured" || true
  cp "$OUT/run/results.md" "$OUT/cpu-k$k.md"
done
rm -rf "$OUT/run"
