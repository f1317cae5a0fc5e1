#!/usr/bin/env bash
# A folder of PNGs (docs/performance.md, "Folders"): IMAGES copies of imgs_in/2048x1024.png → PNG edges with
# `cuda_sobel batch`, for each binary given (a previous build beside this one), each warmed up once then run 3 times;
# each run prints batch's own rate, the images/s by the clock of the whole command, and the CPU time it took against
# its wall time (whether the cores are the limit); then decode + encode alone (`--baseline`, the last binary) and
# OpenCV's imread → Sobel → imwrite through a process pool of every core (scripts/opencv_wait.py, when python3 has
# cv2), on the same files:
#   bash bench/pngs.sh IMAGES BINARY…      (e.g. 2000 /tmp/prev/cuda_sobel .dev/cuda_sobel)
# RUNS adds runs of the last binary, ';'-separated, each options and/or environment settings, e.g.
# RUNS="--slots 8; --png-encoder cpu".
set -euo pipefail
n=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/in"
for i in $(seq -w 1 "$n"); do cp imgs_in/2048x1024.png "$work/in/img$i.png"; done
echo "host: $(nproc) cores; $n × 2048x1024 PNG"
# One batch run: "RATE images/s (CPU U s over W s: C cores busy)".
TIMEFORMAT='%R %U %S'
run() {
  rm -rf "$work/out"
  { time "$@" --out "$work/out" > "$work/log"; } 2> "$work/time"
  read -r wall user sys < <(tail -1 "$work/time")
  rate=$(head -1 "$work/log" | sed -n 's/.* — \([0-9.]*\) images\/s.*/\1/p')
  echo "$rate images/s by batch's line, $(echo "$n $wall" | awk '{printf "%.0f", $1 / $2}') by the clock ($(echo "$user $sys $wall" | awk '{printf "CPU %.1f s (%.1f of it system) over %.2f s: %.1f cores busy", $1 + $2, $2, $3, ($1 + $2) / $3}'))"
}
for bin in "$@"; do
  run "$bin" batch "$work/in" > /dev/null
  for r in 1 2 3; do echo "$bin batch: $(run "$bin" batch "$work/in")"; done
done
last=${*: -1}
IFS=';' read -ra extra <<< "${RUNS:-}"
for spec in "${extra[@]}"; do
  envs=() args=()
  for w in $spec; do if [[ $w == *=* && $w != -* ]]; then envs+=("$w"); else args+=("$w"); fi; done
  for r in 1 2; do echo "$last batch ($spec): $(run env "${envs[@]}" "$last" batch "$work/in" "${args[@]}")"; done
done
for r in 1 2 3; do echo "$last batch --baseline (decode + encode alone): $(run "$last" batch "$work/in" --baseline)"; done
if python3 -c 'import cv2' 2>/dev/null; then
  for r in 1 2; do
    rm -rf "$work/ocv"; mkdir "$work/ocv"
    echo "OpenCV, $(nproc) processes: $(python3 scripts/opencv_wait.py folder "$work/in" "$work/ocv" "$(nproc)")"
  done
else
  echo "OpenCV: not measured (python3 has no cv2)"
fi
