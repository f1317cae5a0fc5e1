#!/usr/bin/env bash
# Issue 19's scaling check, on a host with several GPUs (e.g. the device tool's nvidia-h200-x2), with the
# Python package and dask.distributed importable (PYTHONPATH or installed):
#   bash scripts/dask_scaling.sh BINARY [IMAGES]
# Makes IMAGES copies (default 10000) of a generated 2048×1024 PNG, then in one run:
#   cuda_sobel batch --baseline (decode + encode alone, every core), cuda_sobel batch --devices 0,…,n−1,
#   python -m cuda_sobel.dask --gpus with 1, 2, … n workers (each worker one GPU and its share of the cores).
set -euo pipefail
bin=$(realpath "$1") images=${2:-10000}
gpus=$(nvidia-smi -L | wc -l)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" generate 2048x1024 --out "$work/src.png" >/dev/null
python3 - "$work" "$images" <<'PY'
import os, shutil, sys
work, n = sys.argv[1], int(sys.argv[2])
os.makedirs(f"{work}/in")
for i in range(n):
    shutil.copyfile(f"{work}/src.png", f"{work}/in/img{i:06d}.png")
PY
echo "host: $(nproc) cores, $gpus GPUs; $images × 2048x1024 PNG ($(du -sh "$work/in" | cut -f1))"
devices=$(seq -s, 0 $((gpus - 1)))
for run in baseline batch; do
  rm -rf "$work/out"
  if [ $run = baseline ]; then "$bin" batch "$work/in" --out "$work/out" --baseline | head -1
  else "$bin" batch "$work/in" --out "$work/out" --devices "$devices" | head -1; fi
done
for w in $(seq 1 "$gpus"); do
  rm -rf "$work/out"
  echo -n "dask, $w GPU worker(s): "
  python3 -m cuda_sobel.dask "$work/in" --out "$work/out" --gpus --workers "$w" 2>/dev/null | head -1
done
