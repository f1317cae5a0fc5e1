#!/usr/bin/env bash
# gpu-strip at widths that are not a multiple of 16, in one call on the GPU machine:
#   memcheck  compute-sanitizer memcheck of `--variant gpu-strip --check` (every output against cpu-scalar) on
#             awkward sizes — narrower than a group, one group inside a row, several — × ksize 1/3/5/7 × outputs
#             that store 1, 2 and 4 bytes × the borders; one line each, and a count of failing runs;
#   time      the computation alone (`bench --kernel-only`: device-resident, median of KERNEL_REPS, checked against
#             cpu-scalar, % of the copy bandwidth measured in the same run) at each unaligned width beside the
#             nearest multiple of 16, for this build and PREV (the previous release) one after the other.
# Usage: scripts/strip-widths.sh [memcheck] [time]   (default both); BIN (.dev/cuda_sobel), PREV
# (.dev/cuda_sobel_prev, skipped if absent), KSIZES (3 5 7), SIZES, KERNEL_REPS (200), MEMCHECK_SIZES, OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.dev/cuda_sobel}
PREV=${PREV:-.dev/cuda_sobel_prev}
KSIZES=${KSIZES:-3 5 7}
SIZES=${SIZES:-1366x768,1376x768,3000x2000,3008x2000,7679x4320,7680x4320}
KERNEL_REPS=${KERNEL_REPS:-200}
OUT=${OUT:-bench/out/strip-widths}
WORK=$(mktemp -d)
mkdir -p "$OUT"
PARTS=" ${*:-memcheck time} "
failed=0

if [[ $PARTS == *" memcheck "* ]]; then
  errors=0
  for size in ${MEMCHECK_SIZES:-1x1 15x4 33x17 100x9 257x21 1366x77 4097x49}; do
    "$BIN" generate "$size" --out "$WORK/s$size.png" > /dev/null
    for extra in "--ksize 3" "--ksize 3 --border zero" "--ksize 3 --border reflect101" \
      "--ksize 1 --output gx --border reflect101" "--ksize 3 --output gx --border zero" "--ksize 3 --output direction" \
      "--ksize 5 --border reflect101" "--ksize 5 --output gy --border zero" "--ksize 7 --border reflect101" \
      "--operator scharr --output l1 --border zero"; do
      # shellcheck disable=SC2086
      compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 "$BIN" "$WORK/s$size.png" $extra \
        --variant gpu-strip --check --reps 1 --gpu-required --quiet --out "$WORK/o.npy" > "$WORK/san.log" 2>&1
      rc=$?
      echo "memcheck $size $extra: exit $rc, $(grep -hE "ERROR SUMMARY" "$WORK/san.log")"
      if [ $rc -ne 0 ]; then errors=$((errors + 1)); cat "$WORK/san.log"; fi
    done
  done
  echo "memcheck: $errors failing runs"
  [ $errors -eq 0 ] || failed=1
fi

if [[ $PARTS == *" time "* ]]; then
  for k in $KSIZES; do
    for bin in "$BIN" "$PREV"; do
      [ -x "$bin" ] || { echo "($bin absent: skipped)"; continue; }
      name=$(basename "$bin")
      "$bin" bench --ksize "$k" --variant gpu-strip --sizes "$SIZES" --kernel-only --kernel-reps "$KERNEL_REPS" \
        --images "$WORK" --out "$WORK/run" > "$WORK/bench.log" 2>&1 || { failed=1; cat "$WORK/bench.log"; }
      cp "$WORK/run/results.md" "$OUT/$name-k$k.md" 2> /dev/null
      grep -E "^Device-to-device" "$WORK/bench.log" | sed "s|^|$name ksize $k: |"
      awk -v n="$name" -v k="$k" '/^[0-9]+x[0-9]+ · gpu-strip/ {size=$1}
        /Computation alone/ && NF > 10 {print n " | ksize " k " | " size " | " $3 " " $4 " | " $(NF-7) " " $(NF-6) " | " $(NF-4) " %"}' \
        "$WORK/bench.log"
    done
  done
fi
rm -rf "$WORK"
exit $failed
