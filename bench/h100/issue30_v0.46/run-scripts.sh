### .dev/run23.sh
set -u
OUT=$OUT bash scripts/studies-check.sh 2>&1 | grep -v "^$" | tail -60

### .dev/run24.sh
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
OUT=$OUT VARIANT=gpu-strip BIN=.dev/cuda_sobel bash scripts/profile-filter.sh "scharr:9" 16384x16384
echo "== scharr:9 at 16384², separable strip, settings"
sw() { local label=$1; shift
  env "$@" .dev/cuda_sobel bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md)  pyramid 9x9: $(grep -o '9×9: the best here is [^:]*' /tmp/sw.log)"; }
sw "default" A=1
sw "rows 16" CUDA_SOBEL_STRIP_ROWS=16
sw "rows 64" CUDA_SOBEL_STRIP_ROWS=64
sw "STRIP_G 16 UNIT 8" CUDA_SOBEL_DEFINES="-DSTRIP_G=16 -DUNIT=8"
sw "STRIP_G 16 UNIT 8 rows 16" CUDA_SOBEL_DEFINES="-DSTRIP_G=16 -DUNIT=8" CUDA_SOBEL_STRIP_ROWS=16
sw "UNIT 4" CUDA_SOBEL_DEFINES="-DUNIT=4"
sw "prefetch 2" CUDA_SOBEL_DEFINES="-DSTRIP_PREFETCH=2"
sw "prefetch 8" CUDA_SOBEL_DEFINES="-DSTRIP_PREFETCH=8"
sw "default again" A=1

### .dev/run25.sh
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
OUT=$OUT VARIANT=gpu-strip BIN=.dev/cuda_sobel bash scripts/profile-filter.sh "scharr:9" 16384x16384
grep -E "inst_executed.sum|Duration|Registers Per" $OUT/profile-scharr-9.txt
echo "== scharr:9 at 16384², separable strip, settings"
sw() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md)  $(grep -o '9×9: the best here is [^:]*' /tmp/sw.log | tail -1)"; }
sw "c448b99" .dev/cuda_sobel_prev A=1
sw "float lanes" .dev/cuda_sobel A=1
for r in 8 12 16 20 24; do sw "float lanes, rows $r" .dev/cuda_sobel CUDA_SOBEL_STRIP_ROWS=$r; done
sw "c448b99 rows 16" .dev/cuda_sobel_prev CUDA_SOBEL_STRIP_ROWS=16
sw "float lanes" .dev/cuda_sobel A=1

### .dev/run26.sh
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
sw() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md)"; }
for r in 32 16 12 20 24 28 16 32; do sw "c448b99 rows $r" .dev/cuda_sobel CUDA_SOBEL_STRIP_ROWS=$r; done

### .dev/run27.sh
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
for build in cuda_sobel cuda_sobel_prev cuda_sobel; do
  for study in filter-sizes box-blur; do
    echo "== $build bench --study $study"
    .dev/$build bench --study $study --out $OUT/$build-$study > /tmp/st.log 2>&1 || tail -3 /tmp/st.log
    grep -E "^- (3×3|5×5|7×7|9×9|With|A launch|16384)" /tmp/st.log
    awk '/^## 16384/ {on=1} on && /separable strip/ {print}' $OUT/$build-$study/study-$study.md
  done
done

### .dev/run28.sh
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
sw() { local label=$1 bin=$2; shift 2
  env "$@" $bin bench --study filter-sizes --runs 20 --out /tmp/sw > /tmp/sw.log 2>&1 || { tail -3 /tmp/sw.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| scharr:9/ {print; exit}' /tmp/sw/study-filter-sizes.md)"; }
for b in cuda_sobel cuda_sobel_g16u16 cuda_sobel_g16u8 cuda_sobel; do sw $b .dev/$b A=1; done
for r in 24 28 32 40 48; do sw "g16u8 rows $r" .dev/cuda_sobel_g16u8 CUDA_SOBEL_STRIP_ROWS=$r; done

set -u
nvidia-smi --query-gpu=name --format=csv,noheader
W=$(mktemp -d)
.dev/cuda_sobel generate 8192x8192 --out $W/big.png > /dev/null
for k in sobel:5 gaussian:7 scharr:5; do
  start=$(date +%s)
  .dev/cuda_sobel filter $W/big.png --kernel $k --variant gpu-strip --check --out $W/o.png > $W/log 2>&1; rc=$?
  echo "$k 8192² gpu-strip --check: exit $rc, $(( $(date +%s) - start )) s; $(tail -1 $W/log)"
done
