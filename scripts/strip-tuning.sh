#!/usr/bin/env bash
# gpu-strip's tuning constants for each kernel size, measured on the GPU machine without a rebuild: each setting
# is passed to NVRTC through CUDA_SOBEL_DEFINES (core/src/gpu/compile.rs) and timed by `cuda_sobel bench`
# (computation alone, device-resident, median of 100, % of the copy bandwidth measured in the same run).
# Usage: scripts/strip-tuning.sh [KSIZES] [SETTINGS…]   e.g. scripts/strip-tuning.sh "5 7" "" "-DSTRIP_PREFETCH=2"
# (default: ksize 5 and 7 × prefetch 1–3 × 1–3 blocks an SM). Prints one line per (ksize, setting, size).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.dev/cuda_sobel}
# Computation alone only (--kernel-only); a binary older than that option runs its whole pipeline once as well.
ONLY="--kernel-only"
"$BIN" bench --help | grep -- --kernel-only > /dev/null || ONLY="--runs 1 --wait-runs 0"
KSIZES=${1:-5 7}
shift || true
if [ $# -eq 0 ]; then
  set -- "" "-DSTRIP_PREFETCH=2" "-DSTRIP_PREFETCH=3" "-DSTRIP_MIN_BLOCKS=2" "-DSTRIP_MIN_BLOCKS=3" \
    "-DSTRIP_MIN_BLOCKS=3 -DSTRIP_PREFETCH=2" "-DSTRIP_MIN_BLOCKS=2 -DSTRIP_PREFETCH=2"
fi
IMAGES=${IMAGES:-bench/images}
OUT=$(mktemp -d)
for k in $KSIZES; do
  for setting in "$@"; do
    # shellcheck disable=SC2086
    CUDA_SOBEL_DEFINES="$setting" "$BIN" bench --ksize "$k" --variant gpu-strip --sizes 7680x4320,16384x16384 \
      $ONLY --kernel-reps 100 --images "$IMAGES" --out "$OUT" 2>&1 |
      awk -v k="$k" -v s="${setting:-default}" '/^[0-9]+x[0-9]+ · gpu-strip/ {size=$1}
        /Computation alone/ && NF > 10 {print "ksize " k " | " s " | " size " | " $3 " " $4 " | " $(NF-7) " " $(NF-6) " | " $(NF-4) " %"}'
  done
done
rm -rf "$OUT"
