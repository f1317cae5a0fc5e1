set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== tests/batch.rs on d89b9fd (GPU and nvCOMP required)"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/.dev/cuda_sobel .dev/batch --test-threads=1 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
echo "== filter-sizes / box-blur studies, d89b9fd (baseline for issue 30)"
.dev/cuda_sobel bench --study filter-sizes --out /tmp/st1 2>&1 | grep -E '16384|9×9|at 9|copy' | head -20
.dev/cuda_sobel bench --study box-blur --out /tmp/st2 2>&1 | grep -E '16384|copy' | head -10
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
sync
TIMEFORMAT='%R %U %S'
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; { time env "$@" --out $out > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o 'GPU.*write [0-9.]* ([0-9.]*)' $w/err | tail -1)"; }
T=CUDA_SOBEL_TRACE=1
echo "== 2000 scenes → PNG edges"
.dev/cuda_sobel_v043 batch $w/in --out $w/o0 > /dev/null
for r in 1 2; do
one "v0.43 /tmp" $w/o .dev/cuda_sobel_v043 batch $w/in
one "v0.44 default /tmp" $w/o .dev/cuda_sobel_0744 batch $w/in
one "HEAD default /tmp" $w/o $T .dev/cuda_sobel batch $w/in
one "HEAD gpu /tmp" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu
cmp -s <(cd $w/o0 && cat $(ls | head -100)) <(cd $w/o && cat $(ls | head -100)) && echo "100 outputs byte-identical to v0.43" || echo "OUTPUTS DIFFER"
one "v0.43 /dev/shm" /dev/shm/o .dev/cuda_sobel_v043 batch $w/in
one "v0.44 default /dev/shm" /dev/shm/o .dev/cuda_sobel_0744 batch $w/in
one "HEAD default /dev/shm" /dev/shm/o $T .dev/cuda_sobel batch $w/in
one "HEAD gpu /dev/shm" /dev/shm/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu
done
echo "== where threads wait: HEAD gpu → /tmp (ext4)"
rm -rf $w/o; sync
python3 scripts/where_threads_wait.py --every-ms 2 -- .dev/cuda_sobel batch $w/in --png-inflate gpu --out $w/o 2>&1 >/dev/null | head -30
echo "== where threads wait: HEAD gpu → /dev/shm"
rm -rf /dev/shm/o
python3 scripts/where_threads_wait.py --every-ms 2 -- .dev/cuda_sobel batch $w/in --png-inflate gpu --out /dev/shm/o 2>&1 >/dev/null | head -30
df -T /tmp /dev/shm | cat; mount | grep -E ' / | /tmp ' | head
