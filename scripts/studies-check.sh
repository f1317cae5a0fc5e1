#!/usr/bin/env bash
# The filter's GPU strategies after a change to one of them, in one device call, from the
# repo root on the GPU machine, with what scripts/build-dev.sh put in .dev/ and, to compare, the previous build's
# binary as .dev/cuda_sobel_prev (optional):
#   1. tests/filter.rs with the GPU required — only the strategies in $STRATEGIES (default gpu-strip; "all": every
#      one), each equal to the scalar reference for every kernel, size and border;
#   2. compute-sanitizer memcheck of `filter --variant $SAN_VARIANT --check` on awkward sizes × four kernels × two
#      borders (grey and RGB): every run exact, no errors;
#   3. `bench --study filter-sizes` and `--study box-blur` with this build and the previous one, one after the
#      other on the same GPU; their tables and JSON packed into $OUT/studies.tgz (the device tool returns 8 files).
# Exits non-zero if a step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
DEV=${DEV:-.dev}
OUT=${OUT:-$(mktemp -d)}
WORK=$(mktemp -d)
STRATEGIES=${STRATEGIES:-gpu-strip}
SAN_VARIANT=${SAN_VARIANT:-gpu-strip}
failed=0
export CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN="$(realpath "$DEV")/cuda_sobel" CUDA_SOBEL_CACHE="$WORK/cache"
mkdir -p "$CUDA_SOBEL_CACHE"
[ -e "$DEV/kernel-cache.tar.xz" ] && tar -C "$CUDA_SOBEL_CACHE" -xJf "$DEV/kernel-cache.tar.xz"
nvidia-smi --query-gpu=name --format=csv,noheader || true

echo "== tests/filter.rs ($STRATEGIES)"
tar -C "$WORK" -xJf "$DEV/tests.tar.xz" ./filter
[ "$STRATEGIES" = all ] && unset STRATEGIES || export CUDA_SOBEL_TEST_STRATEGIES=$STRATEGIES
"$WORK/filter" --test-threads=2 -q || failed=1

echo "== memcheck: filter --variant $SAN_VARIANT --check"
for size in 483x540 1933x61 48x5 7x3 1x1 17x33 264x40; do
  "$DEV/cuda_sobel" generate "$size" --out "$WORK/$size.png" >/dev/null || failed=1
  for k in box:15 box:3 scharr:9 gaussian:5; do
    for b in "replicate" "reflect101 --rgb"; do
      # shellcheck disable=SC2086 # $b is a border and, for the second, --rgb
      compute-sanitizer --tool memcheck --error-exitcode 9 "$DEV/cuda_sobel" filter "$WORK/$size.png" --kernel "$k" \
        --border $b --variant "$SAN_VARIANT" --check --out "$WORK/out.png" > "$WORK/san.log" 2>&1 ||
        { failed=1; echo "FAILED: $size $k $b"; tail -5 "$WORK/san.log"; }
    done
  done
done

for build in cuda_sobel cuda_sobel_prev; do
  [ -x "$DEV/$build" ] || continue
  for study in filter-sizes box-blur; do
    echo "== $build bench --study $study"
    "$DEV/$build" bench --study "$study" --out "$WORK/studies/$build" > "$WORK/$build-$study.log" 2>&1 ||
      { failed=1; tail -5 "$WORK/$build-$study.log"; }
    grep -E "^- " "$WORK/$build-$study.log" || true
  done
done
[ -d "$WORK/studies" ] && tar -C "$WORK" -czf "$OUT/studies.tgz" studies
echo "== $([ $failed = 0 ] && echo "all passed" || echo "FAILED")"
exit $failed
