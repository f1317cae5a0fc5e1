# Issue 29, v0.48: nvJPEG's default handle made only when a file needs it (beside the JPEG engine, whose handle now
# reads the headers); what re-initialising the engine's batched state costs; the engine's decode-alone rate.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s); python3 scripts/make_photos.py --count 1000 --out /tmp/p1000 > /dev/null 2>&1; echo "1000 photos made in $(( $(date +%s) - t0 )) s"; sync
python3 scripts/make_photos.py --odd --out /tmp/odd > /dev/null 2>&1
echo "== the engine's batched state, re-initialised per size"; python3 scripts/nvjpeg_start.py engine --sizes /tmp/p1000
P=.dev/cuda_sobel N=.dev/cuda_sobel_new
ph() { local label=$1; shift; rm -rf /dev/shm/po; sync; local s=$(date +%s%N); "$@" --out /dev/shm/po > /tmp/log 2>/tmp/err; local e=$(date +%s%N)
  echo "$label: wall $(( (e - s) / 1000000 )) ms = $(( 1000 * 1000000000 / (e - s) )) images/s by the clock; batch says $(head -1 /tmp/log | grep -o '[0-9.]* s — [0-9.]* images/s')"; }
$P batch /tmp/p1000 --out /dev/shm/po > /dev/null 2>&1; $N batch /tmp/p1000 --out /dev/shm/po2 > /tmp/log 2>&1; head -1 /tmp/log | cut -c1-300
echo "== outputs prev vs new: $(for f in $(ls /dev/shm/po); do cmp -s /dev/shm/po/$f /dev/shm/po2/$f || echo x; done | wc -l) of $(ls /dev/shm/po | wc -l) differ"; rm -rf /dev/shm/po2
for r in 1 2 3; do ph "1000 photos prev (v0.47)" $P batch /tmp/p1000; ph "1000 photos new         " $N batch /tmp/p1000; done
rm -rf /dev/shm/po; s=$(date +%s%N); CUDA_SOBEL_TRACE=1 $N batch /tmp/p1000 --out /dev/shm/po > /tmp/log 2> /tmp/err; e=$(date +%s%N)
echo "== trace new: wall $(( (e - s) / 1000000 )) ms"; grep "trace" /tmp/err | grep -v "thread-samples\|images · " | head -16 | cut -c1-400
echo "== odd photos (progressive, CMYK, 4:4:4, cut...): prev then new"
for b in $P $N; do rm -rf /tmp/oo_$(basename $b); CUDA_SOBEL_TRACE=1 $b batch /tmp/odd --out /tmp/oo_$(basename $b) > /tmp/log 2>/tmp/err; echo "exit $?"; cat /tmp/log | cut -c1-250; grep "default handle" /tmp/err; done
echo "odd outputs differing: $(for f in $(ls /tmp/oo_cuda_sobel); do cmp -s /tmp/oo_cuda_sobel/$f /tmp/oo_cuda_sobel_new/$f || echo $f; done | tr '\n' ' ') (of $(ls /tmp/oo_cuda_sobel | wc -l))"
echo "== tests/batch.rs on the new binary, GPU required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 300 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked|^test ' | head
echo "== nvJPEG decode alone, the JPEG engine, 400 of the photos"; timeout 120 python3 scripts/nvjpeg_rates.py /tmp/p1000 400 engine
