#!/usr/bin/env bash
# Issue 17's batch target, in one run on the GPU machine: images/s of `cuda_sobel batch` for each binary
# given (the previous release beside this one), decode + encode alone (`--baseline`, the last binary), and
# OpenCV's imread → Sobel → imwrite through a process pool of every core (scripts/opencv_wait.py, when
# python3 has cv2):
#   bash scripts/batch-vs.sh IMAGES BINARY…      (e.g. 300 /tmp/prev/cuda_sobel .dev/cuda_sobel)
# IMAGES copies of imgs_in/2048x1024.png at default compression; each binary warms up once, then 3 runs.
set -euo pipefail
n=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/in"
for i in $(seq -w 1 "$n"); do cp imgs_in/2048x1024.png "$work/in/img$i.png"; done
echo "host: $(nproc) cores; $n × 2048x1024 PNG"
rate() { sed -n 's/.* — \([0-9.]*\) images\/s.*/\1/p'; }
for bin in "$@"; do
  runs=()
  for r in 0 1 2 3; do
    rm -rf "$work/out"
    x=$("$bin" batch "$work/in" --out "$work/out" | head -1 | rate)
    [ "$r" -gt 0 ] && runs+=("$x")
  done
  echo "$bin batch: ${runs[*]} images/s"
done
last=${*: -1}
runs=()
for r in 1 2 3; do rm -rf "$work/out"; runs+=("$("$last" batch "$work/in" --out "$work/out" --baseline | head -1 | rate)"); done
echo "$last batch --baseline (decode + encode alone): ${runs[*]} images/s"
if python3 -c 'import cv2' 2>/dev/null; then
  for r in 1 2; do
    rm -rf "$work/ocv"; mkdir "$work/ocv"
    echo "OpenCV, $(nproc) processes: $(python3 scripts/opencv_wait.py folder "$work/in" "$work/ocv" "$(nproc)")"
  done
else
  echo "OpenCV: not measured (python3 has no cv2)"
fi
