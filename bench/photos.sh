#!/usr/bin/env bash
# A folder of photos by the clock (docs/performance.md, "Folders"): N photos of 4000×3000 (scripts/make_photos.py:
# real photos resized with sensor-like noise, quality 90) → PNG edges at default compression, the whole command timed
# (start-up, the batch and teardown: what a user waits for), each binary warmed up once then ROUNDS runs,
# alternating; OpenCV's imread → Sobel → imwrite through a pool of every core on the same files; and nvJPEG's decode
# alone on the GPU's JPEG engine (scripts/nvjpeg_rates.py, when python3 has CuPy):
#   bash bench/photos.sh N BINARY…      (e.g. 1000 .dev/cuda_sobel_prev .dev/cuda_sobel)
# BATCH_ARGS adds options to every batch (e.g. BATCH_ARGS="--output canny --low 50 --high 150"); KEEP=DIR makes
# (or reuses) the photos there instead of a temporary folder, for several runs over the same files.
set -uo pipefail
n=$1; shift
read -ra extra <<< "${BATCH_ARGS:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
photos=${KEEP:-$work/photos}
echo "host: $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); $n photos; batch ${extra[*]}"
[ -n "${KEEP:-}" ] && [ "$(ls "$photos" 2>/dev/null | wc -l)" -ge "$n" ] || python3 scripts/make_photos.py --count "$n" --out "$photos" > /dev/null
sync
clock() { # label, command…: the wall clock of the whole command, and batch's own line
  rm -rf "$work/out"
  local s e
  s=$(date +%s%N); "${@:2}" --out "$work/out" > "$work/log" 2>&1; e=$(date +%s%N)
  echo "$1: $(( (e - s) / 1000000 )) ms = $(( n * 1000000000 / (e - s) )) images/s by the clock; batch says $(head -1 "$work/log" | grep -o '[0-9.]* images/s' | head -1)"
}
for bin in "$@"; do "$bin" batch "$photos" "${extra[@]}" --out "$work/out" > /dev/null 2>&1; done
for r in ${ROUNDS:-1 2 3}; do
  for bin in "$@"; do clock "$bin" "$bin" batch "$photos" "${extra[@]}"; done
done
echo "last summary: $(head -1 "$work/log" | sed 's/.* — //')"
# The peers compute the edges: not with BATCH_ARGS, nor with PEERS=0.
[ -z "${BATCH_ARGS:-}" ] && [ "${PEERS:-1}" = 1 ] || exit 0
if python3 -c 'import cv2' 2>/dev/null; then
  mkdir -p "$work/ocv"
  s=$(date +%s%N); r=$(python3 scripts/opencv_wait.py folder "$photos" "$work/ocv" "$(nproc)"); e=$(date +%s%N)
  echo "OpenCV imread → Sobel → imwrite, $(nproc) processes: $r; whole command $(( (e - s) / 1000000 )) ms = $(( n * 1000000000 / (e - s) )) images/s by the clock"
fi
if python3 -c 'import cupy' 2>/dev/null; then
  echo "nvJPEG decode alone on the JPEG engine ($(( n < 400 ? n : 400 )) photos):"
  python3 scripts/nvjpeg_rates.py "$photos" 400 engine
fi
