#!/usr/bin/env bash
# Folders over several GPUs (docs/scale-out.md), on a host with several GPUs, with the Python package and
# dask.distributed importable (PYTHONPATH or installed):
#   bash bench/dask.sh BINARY [IMAGES]
# Makes IMAGES copies (default 10000) of a generated 2048×1024 PNG, then in one run:
#   cuda_sobel batch --baseline (decode + encode alone, every core), cuda_sobel batch --devices 0,…,n−1,
#   python -m cuda_sobel.dask --gpus with 1, 2, … n workers (each worker one GPU and its share of the cores).
# PHOTOS=1: IMAGES 4000×3000 JPEG photos from scripts/make_photos.py instead (decoded by nvJPEG in every
# worker), no --baseline run, and first a run of 2 workers with --check over 40 of them (every image's edges
# against cpu-scalar on the RGB its decoder gave).
set -euo pipefail
bin=$(realpath "$1") images=${2:-10000}
gpus=$(nvidia-smi -L | wc -l)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# python -m cuda_sobel.dask IN --out OUT --gpus [OPTIONS…], its first LINES lines, or FAILED and its error's end.
dask_run() {
  local in=$1 out=$2; shift 2
  python3 -m cuda_sobel.dask "$in" --out "$out" --gpus "$@" 2>"$work/err" | head -"$lines" ||
    { echo "FAILED"; tail -5 "$work/err"; }
}
if [ -n "${PHOTOS:-}" ]; then
  python3 "$(dirname "$0")/../scripts/make_photos.py" --count "$images" --out "$work/in" >/dev/null
  what="4000x3000 JPEG photos" runs=batch lines=3
  mkdir "$work/few" && cp $(find "$work/in" -name '*.jpg' | sort | head -40) "$work/few/"
  echo -n "dask, 2 GPU workers, --check over 40 photos: "
  dask_run "$work/few" "$work/few-out" --workers 2 --check
else
  "$bin" generate 2048x1024 --out "$work/src.png" >/dev/null
  python3 - "$work" "$images" <<'PY'
import os, shutil, sys
work, n = sys.argv[1], int(sys.argv[2])
os.makedirs(f"{work}/in")
for i in range(n):
    shutil.copyfile(f"{work}/src.png", f"{work}/in/img{i:06d}.png")
PY
  what="2048x1024 PNG" runs="baseline batch" lines=1
fi
echo "host: $(nproc) cores, $gpus GPUs; $images × $what ($(du -sh "$work/in" | cut -f1))"
devices=$(seq -s, 0 $((gpus - 1)))
for run in $runs; do
  rm -rf "$work/out"
  if [ $run = baseline ]; then "$bin" batch "$work/in" --out "$work/out" --baseline | head -1
  else "$bin" batch "$work/in" --out "$work/out" --devices "$devices" | head -1; fi
done
for w in $(seq 1 "$gpus"); do
  rm -rf "$work/out"
  echo -n "dask, $w GPU worker(s): "
  dask_run "$work/in" "$work/out" --workers "$w"
done
