# Issue 29, v0.48, the final build (cuda_sobel_v048: nvJPEG's default handle only when needed, the engine's calls in
# whole rounds of its decoders, 2 × decoders + 2 slots for JPEGs) beside v0.47 (cuda_sobel): photos by the clock
# with OpenCV's pool and nvJPEG's decode alone (scripts/photos-by-clock.sh), PNG folders, the awkward files, tests.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
P=.dev/cuda_sobel N=.dev/cuda_sobel_v048
bash scripts/photos-by-clock.sh 1000 $P $N
echo "== the awkward files, --check, v0.47 then v0.48"
python3 scripts/make_photos.py --odd --out /tmp/odd > /dev/null 2>&1
for b in $P $N; do rm -rf /tmp/oo_$(basename $b); $b batch /tmp/odd --out /tmp/oo_$(basename $b) --check > /tmp/log 2>&1; echo "exit $?"; head -3 /tmp/log | cut -c1-260; done
echo "odd outputs differing: [$(for f in $(ls /tmp/oo_cuda_sobel); do cmp -s /tmp/oo_cuda_sobel/$f /tmp/oo_cuda_sobel_v048/$f || echo $f; done | tr '\n' ' ')] of $(ls /tmp/oo_cuda_sobel | wc -l)"
echo "== 2000 PNGs by the clock"
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
for r in 1 2; do for b in $P $N; do rm -rf /dev/shm/o; sync; s=$(date +%s%N); $b batch $w/in --out /dev/shm/o > /tmp/log 2>&1; e=$(date +%s%N); echo "$b: $(( (e - s) / 1000000 )) ms; $(head -1 /tmp/log | grep -o '[0-9.]* images/s'); $(grep -o '[0-9]* slots each; [^;]*' /tmp/log | head -1)"; done; done
echo "== tests/batch.rs and tests/safety.rs on v0.48, GPU and nvCOMP required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/$N timeout 200 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked|^test ' | head
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 120 .dev/safety --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked|^test ' | head
