# Issue 29, v0.48: HEAD's binary (the engine's code moved to src/gpu/nvjpeg_engine.rs, no change of behaviour meant)
# on the GPU: tests/batch.rs and tests/safety.rs with the GPU and nvCOMP required, the awkward files with --check, 200
# photos with the trace, outputs against v0.48's run46 build.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
N=.dev/cuda_sobel_head
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/$N timeout 200 .dev/batch --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked|^test ' | head
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 120 .dev/safety --test-threads=2 -q 2>&1 | grep -E 'test result|FAILED|panicked|^test ' | head
python3 scripts/make_photos.py --odd --out /tmp/odd > /dev/null 2>&1
CUDA_SOBEL_TRACE=1 $N batch /tmp/odd --out /tmp/oo --check > /tmp/log 2>/tmp/err; echo "odd files: exit $?"; cat /tmp/log | cut -c1-250; grep "default handle\|decoder(s)" /tmp/err
python3 scripts/make_photos.py --count 200 --out /tmp/p200 > /dev/null 2>&1; sync
.dev/cuda_sobel_v048 batch /tmp/p200 --out /dev/shm/ref > /dev/null 2>&1
for r in 1 2; do rm -rf /dev/shm/po; s=$(date +%s%N); CUDA_SOBEL_TRACE=1 $N batch /tmp/p200 --out /dev/shm/po > /tmp/log 2>/tmp/err; e=$(date +%s%N); echo "200 photos: wall $(( (e - s) / 1000000 )) ms; $(head -1 /tmp/log | cut -c1-250)"; grep "JPEG engine:\|default handle" /tmp/err | cut -c1-200; done
echo "outputs differing from v0.48's run46 build: $(for f in $(ls /dev/shm/ref); do cmp -s /dev/shm/ref/$f /dev/shm/po/$f || echo x; done | wc -l) of $(ls /dev/shm/ref | wc -l)"
