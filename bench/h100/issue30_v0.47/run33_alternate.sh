set -u
nvidia-smi --query-gpu=name --format=csv,noheader
bx() { local label=$1 bin=$2; shift 2
  local t0=$(date +%s)
  env "$@" $bin bench --study box-blur --runs 20 --out /tmp/bx > /tmp/bx.log 2>&1 || { tail -3 /tmp/bx.log; return; }
  echo "$label: $(awk '/^## 16384/ {on=1} on && /separable strip \(ours\) \| box:15/ {print; exit}' /tmp/bx/study-box-blur.md) [$(($(date +%s)-t0)) s] exact-no: $(grep -c '| no |' /tmp/bx/study-box-blur.md)"; }
bx "prev (HEAD 5c4587a)" .dev/cuda_sobel_prev A=1
for r in 12 16 20 24 32 48; do bx "alternate rows $r" .dev/cuda_sobel CUDA_SOBEL_STRIP_ROWS=$r; done
bx "not alternate rows 24" .dev/cuda_sobel CUDA_SOBEL_STRIP_ROWS=24 CUDA_SOBEL_DEFINES=-DBOX_ALTERNATE=0
bx "prev (HEAD 5c4587a)" .dev/cuda_sobel_prev A=1
for r in 24 32; do bx "alternate rows $r" .dev/cuda_sobel CUDA_SOBEL_STRIP_ROWS=$r; done
grep -A12 "^## 4256" /tmp/bx/study-box-blur.md | grep "separable strip (ours)" | head -8
