#!/usr/bin/env bash
# Canny on the GPU (docs/performance.md, "Canny"), in one call on the GPU machine:
#   1. gpu-strip's gradients then cuda/canny.cu, RGB in, device-resident, computation alone, beside NPP's Canny on
#      the device-resident grey (nppiFilterCannyBorder, NPP given its grey), thresholds 50/150, apertures 3 and 5,
#      L1 and L2, at 2048×1024, 7680×4320 and 16384²; every output checked against the definition;
#   2. the hysteresis's hardest case: a one-pixel spiral at 4096×4096 whose every edge hangs on one seed, against the
#      scene of the same size (the image command's computation, median of its runs).
# Usage: BIN=.dev/cuda_sobel [NORMS="l1 l2"] bash bench/canny.sh [OUT_DIR] (default bench/out/canny); each run's results.md goes to
# OUT_DIR/k<K>-<norm>.md, and the lines that matter are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.dev/cuda_sobel}
OUT=${1:-bench/out/canny}
mkdir -p "$OUT"
for k in 3 5; do
  for norm in ${NORMS:-l1 l2}; do
    "$BIN" bench --canny 50,150 --canny-norm "$norm" --ksize "$k" --variant gpu-strip --peers npp \
      --sizes 2048x1024,7680x4320,16384x16384 --kernel-reps 100 --out "$OUT/run" 2>&1 |
      grep -E "^Device-to-device|^[0-9]+x[0-9]+ ·|^  Computation alone|^  NPP|^- Peer skipped|times faster" || true
    cp "$OUT/run/results.md" "$OUT/k$k-$norm.md"
  done
done
rm -rf "$OUT/run"
for image in spiral scene; do
  flag=""
  [ "$image" = spiral ] && flag="--spiral"
  "$BIN" generate 4096x4096 $flag --out "$OUT/$image.png" > /dev/null
  echo "$image 4096×4096:"
  "$BIN" "$OUT/$image.png" --output canny --low 60 --high 500 --variant gpu-strip --out "$OUT/${image}_canny.png" |
    grep -E "^gpu-strip"
done
