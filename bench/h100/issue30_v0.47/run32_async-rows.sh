set -u
nvidia-smi --query-gpu=name --format=csv,noheader
bx() { local label=$1 bin=$2; shift 2
  local t0=$(date +%s)
  env "$@" $bin bench --study box-blur --runs 20 --out /tmp/bx > /tmp/bx.log 2>&1 || { tail -3 /tmp/bx.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| box:15/ {print; exit}' /tmp/bx/study-box-blur.md) [$(($(date +%s)-t0)) s] exact-no: $(grep -c '| no |' /tmp/bx/study-box-blur.md)"; }
bx "prev (HEAD 5c4587a)" .dev/cuda_sobel_prev A=1
bx "async ahead 4" .dev/cuda_sobel A=1
bx "async ahead 2" .dev/cuda_sobel CUDA_SOBEL_DEFINES=-DBOX_AHEAD=2
bx "async ahead 3" .dev/cuda_sobel CUDA_SOBEL_DEFINES=-DBOX_AHEAD=3
for r in 16 24 32; do bx "async ahead 4 rows $r" .dev/cuda_sobel CUDA_SOBEL_STRIP_ROWS=$r; done
bx "prev (HEAD 5c4587a)" .dev/cuda_sobel_prev A=1
bx "async ahead 4" .dev/cuda_sobel A=1
grep -A12 "^## 4256" /tmp/bx/study-box-blur.md | grep "separable strip (ours)" | head -8
