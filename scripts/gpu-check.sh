#!/usr/bin/env bash
# Everything that needs the GPU, in one call on the GPU machine, from the repo root, with the binaries
# that scripts/build-dev.sh put in .dev/:
#   1. every test binary, GPU tests required to run (every variant × filter × n × mapping, bit-exact);
#   2. the CLI on every imgs_in image × border mode, and with --operator scharr, --compat report and
#      --mapping report, --gpu-required (exit 0 = every variant identical);
#   3. compute-sanitizer memcheck and racecheck on 1×1, 1×7, 7×1, 33×17, 64×64, 1025×3, 1024×1029,
#      4097×2049 (every border; Scharr, the report's arithmetic and the report's n:1 mapping on the odd
#      sizes) and on Canny's kernels (every aperture, the same sizes and a spiral); memcheck of gpu-strip at
#      unaligned widths (scripts/strip-widths.sh); memcheck and synccheck on batch mode's PNG unfiltering (RGB and
#      RGBA, the same sizes);
#   4. no GPU visible; damaged and forged kernel cache entries; an image far larger than free device memory;
#   5. how gpu-n1's computation time behaves with n (2048×1024 and 7680×4320);
#   6. the headline command;
#   7. with --huge: a 40000×40000 image (bands: its buffers pass 2^31 bytes), bit-exact;
#   8. the Python package's tests on the GPU (torch and CuPy arrays: edges, gradients, direction), and every output
#      from torch at unaligned widths against the CPU's (scripts/python_widths.py).
# Step 2 and 3 also run ksize 5 and 7 (every output, OpenCV's grey, the L1 norm).
# Sections by name, to fit the device tool's 10 minutes a call: `gpu-check.sh tests python` runs those only
# (tests python cli sanitize limits sweep headline huge); no names: all but huge; --huge: all.
# .dev/kernel-cache.tar.xz (scripts/build-dev.sh) seeds the kernel cache: the machine code of every build the
# steps ask for, so the minutes go to testing, not to NVRTC.
# Exits non-zero if any step failed, and lists them.
set -uo pipefail
cd "$(dirname "$0")/.."
DEV=${DEV:-.dev}
WORK=$(mktemp -d)
failures=()
SECTIONS=" $* "
[ "$SECTIONS" = "  " ] && SECTIONS=" tests python cli sanitize limits sweep headline "
[ "$SECTIONS" = " --huge " ] && SECTIONS=" tests python cli sanitize limits sweep headline huge "
want() { [[ $SECTIONS == *" $1 "* ]]; }
step() {
  local name=$1; shift
  echo "== $name"
  if "$@"; then echo "-- ok: $name"; else echo "-- FAILED ($?): $name"; failures+=("$name"); fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
export CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_CACHE="$WORK/ptx-cache" CUDA_SOBEL_BIN="$(realpath "$DEV")/cuda_sobel"
mkdir -p "$CUDA_SOBEL_CACHE"
# nvCOMP for --png-inflate gpu (not on the GPU machine: carry the nvidia-libnvcomp-cu13 wheel's libnvcomp.so.6 in
# $DEV/nvcomp/); where it is carried, tests/batch.rs's nvCOMP test must run, not skip.
if [ -e "$DEV/nvcomp/libnvcomp.so.6" ]; then
  export LD_LIBRARY_PATH="$(realpath "$DEV/nvcomp"):${LD_LIBRARY_PATH:-}" CUDA_SOBEL_REQUIRE_NVCOMP=1
fi
if [ -e "$DEV/kernel-cache.tar.xz" ]; then
  tar -C "$CUDA_SOBEL_CACHE" -xJf "$DEV/kernel-cache.tar.xz" && echo "kernel cache seeded: $(ls "$CUDA_SOBEL_CACHE" | wc -l) entries"
fi

# 1. Tests.
if want tests; then
  mkdir -p "$WORK/tests" && tar -C "$WORK/tests" -xJf "$DEV/tests.tar.xz"
  for t in "$WORK"/tests/*; do
    step "tests: $(basename "$t")" "$t" --include-ignored --test-threads=1 -q
  done
fi

# 8. The Python package on the GPU, from the wheel build-dev.sh made (abi3: this machine's Python 3.12 runs it).
python_tests() {
  local site="$WORK/site"
  python3 -m pip install -q --no-index --no-deps --target "$site" "$DEV"/wheels/cuda_sobel-*.whl || return 1
  PYTHONPATH="$site" python3 -m pytest -q -p no:cacheprovider python/tests -rs
}
if want python; then step "python tests (torch, CuPy on the GPU)" python_tests; fi
# Every output from torch at widths that are not a multiple of 16 (rows stored shifted), against the CPU's.
if want python; then step "python: every output at unaligned widths" env PYTHONPATH="$WORK/site" python3 scripts/python_widths.py --calls 3; fi

# 2. The CLI on every image and border.
cli_all() {
  local ok=0
  for img in imgs_in/*.png; do
    for b in replicate zero reflect101; do
      "$DEV/cuda_sobel" "$img" 3 --border "$b" --gpu-required --quiet --out "$WORK/out.png" || { echo "failed: $img $b"; ok=1; }
    done
    for extra in "--operator scharr" "--compat report" "--compat report --operator scharr --mapping report"; do
      # shellcheck disable=SC2086
      "$DEV/cuda_sobel" "$img" 3 $extra --gpu-required --quiet --out "$WORK/out.png" || { echo "failed: $img $extra"; ok=1; }
    done
  done
  return $ok
}
# Larger stencils, every output, OpenCV's grey and the L1 norm: every variant that takes them, identical.
cli_sizes() {
  local ok=0 img=imgs_in/1024x512.png
  for k in 1 5 7; do
    for b in replicate zero reflect101; do
      "$DEV/cuda_sobel" "$img" --ksize "$k" --border "$b" --gpu-required --quiet --out "$WORK/k.png" || { echo "failed: k$k $b"; ok=1; }
    done
    for o in l1 gx gy direction direction4; do
      "$DEV/cuda_sobel" "$img" --ksize "$k" --output "$o" --grey bt601 --border reflect101 --gpu-required --quiet \
        --out "$WORK/k.npy" || { echo "failed: k$k --output $o"; ok=1; }
    done
  done
  return $ok
}
if want cli; then
  step "CLI: every imgs_in image × border, all variants identical" cli_all
  step "CLI: ksize 1, 5, 7 × border × output, all variants identical" cli_sizes
fi

# 3. Sanitizers, one timed run per variant (--reps 1) to keep them short.
GPU_VARIANTS=gpu-map,gpu-fused-map,gpu-n1,gpu-fused,gpu-constant,gpu-separable,gpu-tiled,gpu-vec16,gpu-strip
for size in 1x1 1x7 7x1 33x17 64x64 48x5 1025x3 1024x1029 4097x2049; do
  "$DEV/cuda_sobel" generate "$size" --out "$WORK/s$size.png" >/dev/null
done
sanitize() {
  local tool=$1 ok=0
  for size in 1x1 1x7 7x1 33x17 64x64 1025x3 1024x1029 4097x2049; do
    for b in replicate zero reflect101; do
      [ "$size" = 4097x2049 ] && [ "$b" != replicate ] && continue
      compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 10 \
        "$DEV/cuda_sobel" "$WORK/s$size.png" 3 --border "$b" --variant "$GPU_VARIANTS" --reps 1 \
        --gpu-required --quiet --out "$WORK/s.png" > "$WORK/san.log" 2>&1 || { ok=1; cat "$WORK/san.log"; }
      grep -hE "(ERROR|RACECHECK) SUMMARY" "$WORK/san.log" | sed "s|^|  $tool $size $b: |"
    done
    case $size in 1x7|33x17|1025x3) ;; *) continue ;; esac
    for extra in "--operator scharr --border reflect101" "--compat report --mapping report"; do
      # shellcheck disable=SC2086
      compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 10 \
        "$DEV/cuda_sobel" "$WORK/s$size.png" 3 $extra --variant "$GPU_VARIANTS" --reps 1 \
        --gpu-required --quiet --out "$WORK/s.png" > "$WORK/san.log" 2>&1 || { ok=1; cat "$WORK/san.log"; }
      grep -hE "(ERROR|RACECHECK) SUMMARY" "$WORK/san.log" | sed "s|^|  $tool $size $extra: |"
    done
  done
  return $ok
}
# ksize 5 and 7 (the strip's wider march, the tiles' wider halos), and the outputs that write wider values, on
# the sizes narrower and shorter than the stencil; 64x64 and 48x5 (widths a multiple of 16) take gpu-strip's
# aligned form, whose wider stencils and gradients copy rows through a ring in shared memory.
sanitize_sizes() {
  local tool=$1 ok=0
  for size in 1x1 1x7 7x1 33x17 1025x3 64x64 48x5; do
    for extra in "--ksize 5" "--ksize 7 --border reflect101" "--ksize 5 --output gx" "--ksize 7 --output direction"; do
      # shellcheck disable=SC2086
      compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 10 \
        "$DEV/cuda_sobel" "$WORK/s$size.png" $extra --variant "$GPU_VARIANTS" --reps 1 \
        --gpu-required --quiet --out "$WORK/s.npy" > "$WORK/san.log" 2>&1 || { ok=1; cat "$WORK/san.log"; }
      grep -hE "(ERROR|RACECHECK) SUMMARY" "$WORK/san.log" | sed "s|^|  $tool $size $extra: |"
    done
  done
  return $ok
}
# Canny's kernels (cuda/canny.cu: the suppression, the link and the edges) at every
# aperture and norm, on the sizes above and a one-pixel spiral whose chains cross every tile's seams.
sanitize_canny() {
  local tool=$1 ok=0
  "$DEV/cuda_sobel" generate 300x200 --spiral --out "$WORK/sspiral.png" >/dev/null
  for size in 1x1 1x7 7x1 33x17 64x64 1025x3 1024x1029 spiral; do
    for extra in "--ksize 3" "--ksize 5 --norm l2" "--ksize 7 --border reflect101"; do
      # shellcheck disable=SC2086
      compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 10 \
        "$DEV/cuda_sobel" "$WORK/s$size.png" --output canny --low 20 --high 60 $extra --variant gpu-strip --reps 1 \
        --gpu-required --quiet --out "$WORK/c.png" > "$WORK/san.log" 2>&1 || { ok=1; cat "$WORK/san.log"; }
      grep -hE "(ERROR|RACECHECK) SUMMARY" "$WORK/san.log" | sed "s|^|  $tool canny $size $extra: |"
    done
  done
  return $ok
}
if want sanitize; then
  step "compute-sanitizer memcheck" sanitize memcheck
  step "compute-sanitizer racecheck" sanitize racecheck
  step "compute-sanitizer memcheck, ksize 5 and 7" sanitize_sizes memcheck
  step "compute-sanitizer racecheck, ksize 5 and 7" sanitize_sizes racecheck
  step "compute-sanitizer memcheck, Canny" sanitize_canny memcheck
  step "compute-sanitizer racecheck, Canny" sanitize_canny racecheck
  # gpu-strip's general form at widths whose groups read shifted rows, its edge groups in several warps.
  step "compute-sanitizer memcheck, gpu-strip at unaligned widths" env BIN="$DEV/cuda_sobel" bash scripts/strip-widths.sh memcheck

# Batch mode's PNG unfiltering (cuda/unfilter.cu: a map, a wavefront with a barrier a step, a map) on RGB
# and RGBA PNGs of the awkward sizes, `--check` holding each to cpu-scalar: memcheck, and synccheck for the
# barriers.
sanitize_unfilter() {
  local tool=$1 ok=0
  rm -rf "$WORK/u" "$WORK/uo"; mkdir "$WORK/u"
  for size in 1x1 1x7 7x1 33x17 64x64 1025x3 1024x1029; do
    cp "$WORK/s$size.png" "$WORK/u/rgb$size.png"
    python3 -c 'import cv2, sys; cv2.imwrite(sys.argv[2], cv2.cvtColor(cv2.imread(sys.argv[1]), cv2.COLOR_BGR2BGRA))' \
      "$WORK/s$size.png" "$WORK/u/rgba$size.png" || echo "  (no RGBA: python3 has no cv2)"
  done
  compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 10 \
    "$DEV/cuda_sobel" batch "$WORK/u" --out "$WORK/uo" --check --slots 2 > "$WORK/san.log" 2>&1 || { ok=1; cat "$WORK/san.log"; }
  grep -hE "^batch:|(ERROR|RACECHECK) SUMMARY" "$WORK/san.log" | sed "s|^|  $tool unfilter: |"
  return $ok
}
  step "compute-sanitizer memcheck, batch's PNG unfiltering" sanitize_unfilter memcheck
  step "compute-sanitizer synccheck, batch's PNG unfiltering" sanitize_unfilter synccheck
fi

# 4. When the GPU is absent or short of memory, and when the kernel cache is damaged.
no_device() {
  local out rc
  out=$(CUDA_VISIBLE_DEVICES= "$DEV/cuda_sobel" imgs_in/512x512.png --out "$WORK/nd.png" 2>&1); rc=$?
  echo "$out" | grep -E "GPU variants skipped|cpu-rayon"
  [ $rc -eq 0 ] && echo "$out" | grep -q "GPU variants skipped: no CUDA device visible" || return 1
  CUDA_VISIBLE_DEVICES= "$DEV/cuda_sobel" imgs_in/512x512.png --gpu-required --quiet --out "$WORK/nd.png"
  rc=$?; echo "  with --gpu-required: exit $rc"; [ $rc -eq 3 ]
}
want limits && step "no device visible: CPU variants run, one line why, exit 0 (3 with --gpu-required)" no_device

kernels_compiled() {  # runs the CLI with JSON and prints how many kernel files NVRTC compiled
  # Scharr: the default build's code is built into the binary for this GPU (core/src/gpu/prebuilt.rs), not cached.
  "$DEV/cuda_sobel" imgs_in/1024x512.png --operator scharr --gpu-required --json --out "$WORK/c.png" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["gpu"]["kernels"]["compiled"])'
}
damaged_cache() {
  local c
  kernels_compiled >/dev/null || return 1                    # fills the cache
  c=$(kernels_compiled) || return 1; echo "  intact cache: $c compiled"; [ "$c" -eq 0 ] || return 1
  for f in "$CUDA_SOBEL_CACHE"/*.cubin; do head -c 200 "$f" > "$f.cut" && mv "$f.cut" "$f"; done
  c=$(kernels_compiled) || return 1; echo "  truncated entries: $c compiled"; [ "$c" -gt 0 ] || return 1
  for f in "$CUDA_SOBEL_CACHE"/*.cubin; do   # a well-formed entry whose code is garbage: the driver refuses it
    body=$'\x7fELF this is not machine code\n'
    printf '// cuda_sobel kernel cache entry, body sha256 %s\n%s' "$(printf '%s' "$body" | sha256sum | cut -d' ' -f1)" "$body" > "$f"
  done
  c=$(kernels_compiled) || return 1; echo "  forged entries: $c compiled"; [ "$c" -gt 0 ]
}
# Its own cache, so that the seeded one stays whole for the other steps.
want limits && CUDA_SOBEL_CACHE="$WORK/damaged-cache" \
  step "damaged or forged kernel cache entries are rebuilt, never trusted (outputs still identical)" damaged_cache

hold_device_memory() {  # $1 = MiB to leave free; runs until killed
  python3 -c '
import sys, time, torch
free, _ = torch.cuda.mem_get_info()
hog = torch.empty(free - int(sys.argv[1]) * 2**20, dtype=torch.uint8, device="cuda")
print(f"  holding {hog.numel() >> 20} MiB of device memory", flush=True)
time.sleep(120)' "$1" &
  HOG=$!
  sleep 8
  nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader | sed 's/^/  device memory used, total: /'
}
low_memory() {
  "$DEV/cuda_sobel" generate 8192x8192 --out "$WORK/8k.png" >/dev/null
  # ~1 GiB free: the 8192² image needs 0.6 GB of buffers for gpu-map, more than half of what is free.
  hold_device_memory 1024
  "$DEV/cuda_sobel" "$WORK/8k.png" --variant gpu-strip,gpu-map,gpu-separable --reps 1 --gpu-required --out "$WORK/8k_sobel.png"
  local rc=$?; kill $HOG; wait $HOG 2>/dev/null; return $rc
}
want limits && step "an image far larger than free device memory runs in bands, identical" low_memory

out_of_memory() {
  # 48 MiB free: not even a CUDA context fits. The CPU variants run, one line says why, exit 0.
  hold_device_memory 48
  local out rc
  out=$("$DEV/cuda_sobel" imgs_in/512x512.png --out "$WORK/oom.png" 2>&1); rc=$?
  kill $HOG; wait $HOG 2>/dev/null
  echo "$out" | grep -E "GPU variants skipped|cpu-rayon"
  [ $rc -eq 0 ] && echo "$out" | grep -q "GPU variants skipped: .*out of memory"
}
want limits && step "device out of memory: CPU variants run, one line why, exit 0" out_of_memory

# 5. gpu-n1: time against n.
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
if want sweep; then
  "$DEV/cuda_sobel" generate 7680x4320 --out "$WORK/7680x4320.png" >/dev/null
  step "gpu-n1 computation time (median of 10) against n" n_sweep
fi

# 6. The headline.
want headline && step "headline: cuda_sobel imgs_in/2048x1024.png 4" "$DEV/cuda_sobel" imgs_in/2048x1024.png 4 --gpu-required --out "$WORK/h.png"

# 7. Huge: 40000×40000 (4.8 GB of RGB; buffers over 2^31 bytes, so bands), bit-exact against cpu-scalar.
if want huge; then
  huge() {
    /usr/bin/time -f "  generate: %e s" "$DEV/cuda_sobel" generate 40000x40000 --out "$WORK/huge.png" >/dev/null || return 1
    /usr/bin/time -f "  run: %e s, %M KB peak" "$DEV/cuda_sobel" "$WORK/huge.png" 3 \
      --variant gpu-map,gpu-separable,gpu-n1,gpu-strip --reps 1 --gpu-required --out "$WORK/huge_sobel.png"
  }
  step "40000x40000 in bands, every variant identical" huge
fi

rm -rf "$WORK"
if ((${#failures[@]})); then
  printf 'gpu-check FAILED steps:\n'; printf '  %s\n' "${failures[@]}"; exit 1
fi
echo "gpu-check: all steps passed"
