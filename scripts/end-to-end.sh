#!/usr/bin/env bash
# What a user waits for, on the GPU machine, the previous build beside this one in one run (issue 17):
#   bash scripts/end-to-end.sh PREV_BIN NEW_BIN OUT_DIR
# 1. 2048×1024: whole commands cold and warm (scripts/wait-times.sh), both binaries; the fast path (auto);
#    where a warm gpu-strip command's time goes (CUDA_SOBEL_TRACE=1, and process start: --version).
# 2. The crossover of --variant auto: warm whole commands, cpu-rayon against gpu-strip, 4096² … 16384²;
#    8192² and 16384² with the previous build beside this one.
# 3. 16384²: the single command's GPU memory movement (--json, 3 runs of each build after a warm-up)
#    against the pinned PCIe bound measured by `bench` in the same run.
# 4. Peak RSS at 6000×6000 of one-variant runs (bytes a pixel).
# PARTS="3 4" runs only those parts (default: all).
set -euo pipefail
prev=$1 new=$2 out=$3
parts=" ${PARTS:-1 2 3 4} "
mkdir -p "$out"
imgs=$(mktemp -d)
export CUDA_SOBEL_CACHE=$imgs/cache
now() { date +%s.%N; }
median_of() { sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'; }
# The generated test image of this size (made once).
img() { [ -f "$imgs/$1.png" ] || "$new" generate "$1" --out "$imgs/$1.png" >/dev/null; echo "$imgs/$1.png"; }

if [[ $parts == *" 1 "* ]]; then
echo "== 1. 2048x1024, whole commands (median and range of 5)"
bash scripts/wait-times.sh imgs_in/2048x1024.png 5 "$prev" "$new" | tee "$out/wait_2048x1024.txt"
VARIANTS=auto bash scripts/wait-times.sh imgs_in/2048x1024.png 5 "$new" | tee -a "$out/wait_2048x1024.txt"
echo "-- the same binary with its built-in sm_90 code ignored (CUDA_SOBEL_NO_PREBUILT=1: NVRTC compiles on a cold run):"
CUDA_SOBEL_NO_PREBUILT=1 VARIANTS=gpu-strip bash scripts/wait-times.sh imgs_in/2048x1024.png 5 "$new" | tee -a "$out/wait_2048x1024.txt"
echo "-- where a cold gpu-strip command goes (built-in code; empty cache, driver JIT cache off):"
t0=$(now); CUDA_CACHE_DISABLE=1 CUDA_SOBEL_CACHE=$(mktemp -d) CUDA_SOBEL_TRACE=1 "$new" imgs_in/2048x1024.png --variant gpu-strip -q --out "$imgs/o.png"; t1=$(now)
awk -v a="$t0" -v b="$t1" 'BEGIN {printf "   whole command %.1f ms\n", (b - a) * 1e3}'
echo "-- process start alone (--version), 5 runs:"
for _ in 1 2 3 4 5; do t0=$(now); "$new" --version >/dev/null; t1=$(now); awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'; done | median_of
echo " s (median)"
echo "-- where a warm gpu-strip command goes (3 runs):"
for _ in 1 2 3; do
  t0=$(now); CUDA_SOBEL_TRACE=1 "$new" imgs_in/2048x1024.png --variant gpu-strip -q --out "$imgs/o.png"; t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "   whole command %.1f ms\n", (b - a) * 1e3}'
done 2>&1 | tee "$out/trace_2048x1024.txt"
fi

if [[ $parts == *" 2 "* ]]; then
echo "== 2. crossover: warm whole commands (median of 3)"
for size in 4096x4096 6000x6000 8192x8192 12000x12000 16384x16384; do
  input=$(img "$size")
  for variant in cpu-rayon gpu-strip auto; do
    "$new" "$input" --variant "$variant" -q --out "$imgs/o.png"   # warm-up: caches, page cache
    for _ in 1 2 3; do
      t0=$(now); "$new" "$input" --variant "$variant" -q --out "$imgs/o.png"; t1=$(now)
      awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
    done | median_of | xargs printf '%-12s %-10s %s s\n' "$size" "$variant"
  done
done | tee "$out/crossover.txt"
echo "== 2b. large images, whole commands, previous build beside this one (median of 3, after a warm-up)"
for size in 8192x8192 16384x16384; do
  for variant in cpu-rayon gpu-strip auto; do
    for tag in prev new; do
      "${!tag}" "$imgs/$size.png" --variant "$variant" -q --out "$imgs/o.png"
      for _ in 1 2 3; do
        t0=$(now); "${!tag}" "$imgs/$size.png" --variant "$variant" -q --out "$imgs/o.png"; t1=$(now)
        awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
      done | median_of | xargs printf '%-12s %-10s %-5s %s s\n' "$size" "$variant" "$tag"
    done
  done
done | tee "$out/large_prev_new.txt"
fi

if [[ $parts == *" 3 "* ]]; then
echo "== 3. 16384x16384: the single command's GPU memory movement, 3 runs of each build after a warm-up"
input=$(img 16384x16384)
for tag in prev new; do
  "${!tag}" "$input" --variant gpu-strip -q --out "$imgs/o.png"
  for run in 1 2 3; do
    t0=$(now)
    "${!tag}" "$input" --variant gpu-strip --json --out "$imgs/o.png" > "$out/json_16384x16384_${tag}_${run}_gpu-strip.json" 2> "$out/stderr_16384x16384_${tag}_$run.txt"
    t1=$(now)
    grep -h "streamed:" "$out/stderr_16384x16384_${tag}_$run.txt" || true
    awk -v a="$t0" -v b="$t1" -v t="$tag" 'BEGIN {printf "%s: whole command %.3f s\n", t, b - a}'
  done
done
echo "-- the PCIe bound, measured by bench in this run"
"$new" bench --sizes 16384x16384 --variant gpu-strip --runs 2 --kernel-reps 10 --ns 1 --wait-runs 0 \
  --images "$imgs" --out "$out/bench16k" | grep -E "host → host|copy bandwidth" || true
python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
meta = json.load(open(f"{out}/bench16k/results.json"))["meta"]
up, down = meta["pinned_h2d_gbps"], meta["pinned_d2h_gbps"]
p = 16384 * 16384
bound = (3 * p / up + p / down) / 1e6
print(f"pinned {up:.1f} GB/s up, {down:.1f} down: PCIe bound for 16384² = {bound:.1f} ms")
for f in sorted(glob.glob(f"{out}/json_16384x16384_*gpu-strip.json")):
    r = json.load(open(f))
    t = r["rows"][0]
    print(f"{f.split('/')[-1]}: GPU memory {t['gpu_memory_ms']:.1f} ms = {t['gpu_memory_ms'] / bound:.2f}× the bound; compute {t['compute_ms']:.2f} ms")
PY
fi

if [[ $parts == *" 4 "* ]]; then
echo "== 4. peak RSS at 6000x6000 (bytes a pixel); the CUDA driver's own share: a 64x48 gpu-strip run"
input=$(img 6000x6000)
"$new" generate 64x48 --out "$imgs/tiny.png" >/dev/null
python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(f"64x48 gpu-strip: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB")' "$new" "$imgs/tiny.png" --variant gpu-strip --out "$imgs/o.png" | tee "$out/peak_rss_tiny.txt"
for tag in prev new; do
  bin=${!tag}
  for variant in cpu-rayon gpu-strip auto; do
    [ "$tag" = prev ] && [ "$variant" = auto ] && continue
    python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{kb / 1024:.0f} MB = {kb * 1024 / 36e6:.2f} B/px")' "$bin" "$input" --variant "$variant" --out "$imgs/o.png" |
      xargs -I{} printf '%-5s %-10s %s\n' "$tag" "$variant" "{}"
  done
done | tee "$out/peak_rss_6000.txt"
fi
rm -rf "$imgs"
