set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; local s=$(date +%s%N); "$@" --out $out > $w/log 2>$w/err; local e=$(date +%s%N)
  echo "$label: wall $(( (e - s) / 1000000 )) ms = $(( 2000 * 1000000000 / (e - s) )) images/s by the clock; batch says $(head -1 $w/log | grep -o '[0-9.]* s — [0-9.]* images/s'); $(head -1 $w/log | grep -o '[0-9]* slots each; [^;]*' | cut -c1-70)"; }
P=.dev/cuda_sobel_pre H=.dev/cuda_sobel_prev N=.dev/cuda_sobel
$N batch $w/in --out /dev/shm/o > /dev/null 2>&1
for r in 1 2 3; do
  one "pre-issue afbf45c" /dev/shm/o $P batch $w/in
  one "HEAD 5c4587a     " /dev/shm/o $H batch $w/in
  one "new              " /dev/shm/o $N batch $w/in
  one "HEAD --png-inflate gpu" /dev/shm/o $H batch $w/in --png-inflate gpu
  one "new  --png-inflate gpu" /dev/shm/o $N batch $w/in --png-inflate gpu
done
rm -rf /dev/shm/o
echo "== tests/batch.rs, GPU and nvCOMP required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/$N timeout 300 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked|^test ' | head
t0=$(date +%s); python3 scripts/make_photos.py --count 300 --out /tmp/p300 > /dev/null 2>&1; echo "300 photos made in $(( $(date +%s) - t0 )) s"
ph() { local label=$1; shift; rm -rf /tmp/po; local s=$(date +%s%N); "$@" --out /tmp/po > $w/log 2>&1; local e=$(date +%s%N)
  echo "$label: wall $(( (e - s) / 1000000 )) ms; $(head -1 $w/log | grep -o '[0-9.]* images/s'); $(grep -o '[0-9]* slots each; [^;]*' $w/log | head -1 | cut -c1-90)"; }
for r in 1 2; do ph "photos HEAD" $H batch /tmp/p300; ph "photos new " $N batch /tmp/p300; done
ph "photos pre-issue" $P batch /tmp/p300
