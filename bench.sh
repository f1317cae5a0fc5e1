#!/usr/bin/env bash
# bench.sh — the report's experiments on this machine: ten-run averages of the whole pipeline per image
# size and variant, the n:1 sweep, computation-only medians against the device's copy bandwidth.
# Results land in bench/out/: results.{md,csv,json} and SVG plots.
#
#   bash bench.sh                 the report's four sizes (imgs_in/)
#   bash bench.sh --large         also 7680x4320 and 16384x16384 (drawn on demand into bench/images/; 3 runs)
#   bash bench.sh --quick         a smoke run: two tiny sizes, 2 runs (what CI runs)
#   bash bench.sh [cuda_sobel bench flags…]   e.g. --runs 20 --variant gpu-fused,cpu-rayon
#
# Builds the release binary first, unless CUDA_SOBEL_BIN names one (e.g. a binary carried to a GPU machine).
set -euo pipefail
cd "$(dirname "$0")"

bin=${CUDA_SOBEL_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  # Where cargo put it: CARGO_TARGET_DIR (or a config's build.target-dir) moves the target folder.
  bin=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/cuda_sobel
fi

args=()
for a in "$@"; do
  case "$a" in
    --large) args+=(--sizes 512x512,1024x512,1024x1024,2048x1024,7680x4320,16384x16384 --runs 3) ;;
    *) args+=("$a") ;;
  esac
done
exec "$bin" bench "${args[@]}"
