#!/usr/bin/env bash
# Everything that needs the GPU, in one call on the GPU machine, from the repo root, with the binaries
# that scripts/build-dev.sh put in .dev/:
#   1. every test binary, GPU tests required to run (every variant × border × n, bit-exact);
#   2. the CLI on every imgs_in image × border mode, --gpu-required (exit 0 = every variant identical);
#   3. compute-sanitizer memcheck and racecheck on a small and an odd-sized image, every border;
#   4. how gpu-n1's computation time behaves with n (2048×1024 and 7680×4320);
#   5. the headline command.
# Exits non-zero if any step failed, and lists them.
set -uo pipefail
cd "$(dirname "$0")/.."
DEV=${DEV:-.dev}
WORK=$(mktemp -d)
failures=()
step() {
  local name=$1; shift
  echo "== $name"
  if "$@"; then echo "-- ok: $name"; else echo "-- FAILED ($?): $name"; failures+=("$name"); fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
export CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_CACHE="$WORK/ptx-cache" CUDA_SOBEL_BIN="$(realpath "$DEV")/cuda_sobel"

# 1. Tests.
for t in "$DEV"/tests/*; do
  step "tests: $(basename "$t")" "$t" --test-threads=1 -q
done

# 2. The CLI on every image and border.
cli_all() {
  local ok=0
  for img in imgs_in/*.png; do
    for b in replicate zero reflect101; do
      "$DEV/cuda_sobel" "$img" 3 --border "$b" --gpu-required --quiet --out "$WORK/out.png" || { echo "failed: $img $b"; ok=1; }
    done
  done
  return $ok
}
step "CLI: every imgs_in image × border, all variants identical" cli_all

# 3. Sanitizers.
"$DEV/cuda_sobel" generate 64x64 --out "$WORK/small.png" >/dev/null
"$DEV/cuda_sobel" generate 33x17 --out "$WORK/odd.png" >/dev/null
sanitize() {
  local tool=$1 ok=0
  for img in "$WORK/small.png" "$WORK/odd.png"; do
    for b in replicate zero reflect101; do
      compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 10 \
        "$DEV/cuda_sobel" "$img" 3 --border "$b" --variant gpu-map,gpu-fused-map,gpu-n1,gpu-fused,gpu-const-taps,gpu-separable,gpu-tiled,gpu-vec16,gpu-strip \
        --gpu-required --quiet --out "$WORK/s.png" > "$WORK/san.log" 2>&1 || { ok=1; cat "$WORK/san.log"; }
      grep -hE "(ERROR|RACECHECK) SUMMARY" "$WORK/san.log" | sed "s|^|  $tool $(basename "$img") $b: |"
    done
  done
  return $ok
}
step "compute-sanitizer memcheck" sanitize memcheck
step "compute-sanitizer racecheck" sanitize racecheck

# 4. gpu-n1: time against n.
"$DEV/cuda_sobel" generate 7680x4320 --out "$WORK/7680x4320.png" >/dev/null
n_sweep() {
  for img in imgs_in/2048x1024.png "$WORK/7680x4320.png"; do
    printf '%-16s' "$(basename "$img" .png)"
    for n in 1 2 4 8 16 32 64; do
      "$DEV/cuda_sobel" "$img" "$n" --variant gpu-n1,gpu-fused --json --gpu-required --out "$WORK/n.png" > "$WORK/n.json" || return 1
      python3 -c 'import json,sys; r={x["variant"]:x for x in json.load(open(sys.argv[1]))["rows"]}; print(f" n={sys.argv[2]}: {r["gpu-n1"]["compute_ms"]*1e3:6.1f} µs", end="")' "$WORK/n.json" "$n"
    done
    python3 -c 'import json,sys; r={x["variant"]:x for x in json.load(open(sys.argv[1]))["rows"]}; print(f"   (gpu-fused: {r["gpu-fused"]["compute_ms"]*1e3:.1f} µs)")' "$WORK/n.json"
  done
}
step "gpu-n1 computation time (median of 10) against n" n_sweep

# 5. The headline.
step "headline: cuda_sobel imgs_in/2048x1024.png 4" "$DEV/cuda_sobel" imgs_in/2048x1024.png 4 --gpu-required --out "$WORK/h.png"

rm -rf "$WORK"
if ((${#failures[@]})); then
  printf 'gpu-check FAILED steps:\n'; printf '  %s\n' "${failures[@]}"; exit 1
fi
echo "gpu-check: all steps passed"
