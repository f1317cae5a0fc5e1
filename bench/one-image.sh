#!/usr/bin/env bash
# One image, what a user waits for (docs/performance.md, "One image"): wall clock of whole commands, process start
# included, cold (empty kernel cache and the driver's JIT cache off, as on a fresh machine) and warm (caches filled
# by a first run), for each binary given, side by side in one run: `bash bench/one-image.sh IMAGE RUNS BINARY…` (e.g.
# the previous build's binary and this one). Prints median and min…max per (binary, variant, cache state).
# VARIANTS="gpu-strip cpu-rayon auto" picks the --variant values (default: gpu-strip cpu-rayon).
# FLOOR=BINARY first times a process that only opens the GPU and exits (examples/gpu_floor.rs): the least
# any GPU command waits for on this machine, driver start-up and teardown included.
set -euo pipefail
img=$1 runs=$2
shift 2
median_range() { sort -n | awk '{a[NR]=$1} END {printf "%.3f s (%.3f … %.3f)", a[int((NR+1)/2)], a[1], a[NR]}'; }
now() { date +%s.%N; }
if [ -n "${FLOOR:-}" ]; then
  # The floor: a process that only opens the GPU and exits (examples/gpu_floor.rs), timed the same way.
  "$FLOOR" 2>/dev/null
  times=()
  for _ in $(seq "$runs"); do
    t0=$(now); "$FLOOR" 2>/dev/null; t1=$(now)
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
  done
  printf '%-28s %-10s %-5s %s\n' "$FLOOR" "(floor)" warm "$(printf '%s\n' "${times[@]}" | median_range)"
fi
for bin in "$@"; do
  for variant in ${VARIANTS:-gpu-strip cpu-rayon}; do
    for state in cold warm; do
      times=()
      warm_cache=$(mktemp -d)
      [ "$state" = warm ] && CUDA_SOBEL_CACHE=$warm_cache "$bin" "$img" --variant "$variant" -q --out /tmp/wait.png
      for _ in $(seq "$runs"); do
        if [ "$state" = cold ]; then
          cache=$(mktemp -d); export CUDA_CACHE_DISABLE=1
        else
          cache=$warm_cache; unset CUDA_CACHE_DISABLE
        fi
        t0=$(now); CUDA_SOBEL_CACHE=$cache "$bin" "$img" --variant "$variant" -q --out /tmp/wait.png; t1=$(now)
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
        [ "$state" = cold ] && rm -rf "$cache"
      done
      unset CUDA_CACHE_DISABLE
      printf '%-28s %-10s %-5s %s\n' "$bin" "$variant" "$state" "$(printf '%s\n' "${times[@]}" | median_range)"
      rm -rf "$warm_cache"
    done
  done
done
