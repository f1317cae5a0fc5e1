# Issue 29 v0.52 run4: PNGs inflated into page-locked row buffers kept from image to image, the slot uploading from
# them without a copy (v52c) — tests/batch.rs (GPU required; nvCOMP not carried this call) and tests/unfilter.rs (GPU required); 2000
# scenes by the clock against the filed release and v0.51 (user/system time and page faults of each command);
# outputs against v0.51's.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_afbf45c O=.dev/cuda_sobel_v51 N=.dev/cuda_sobel_v52c
echo "== tests/batch.rs with the GPU required (nvCOMP not carried: 64 MiB)"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 300 .dev/batch --test-threads=2 -q > /tmp/t.log 2>&1; echo "rc $?"; grep -E 'test result|FAILED|panicked|error' /tmp/t.log | head
echo "== tests/unfilter.rs with the GPU required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_BIN=$PWD/$N timeout 200 .dev/unfilter --test-threads=2 -q > /tmp/t.log 2>&1; echo "rc $?"; grep -E 'test result|FAILED|panicked|error' /tmp/t.log | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
RU='import resource,subprocess,sys; rc=subprocess.call(sys.argv[1:]); r=resource.getrusage(resource.RUSAGE_CHILDREN); print(f"user {r.ru_utime:.2f} s, sys {r.ru_stime:.2f} s, minor faults {r.ru_minflt}", file=sys.stderr); sys.exit(rc)'
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" python3 -c "$RU" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); main $(grep -o '[0-9.]* ms  main returns' /tmp/log | head -1 | cut -d' ' -f1); $(grep -o 'user.*' /tmp/log); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-130)"; }
$O batch $w/in --out /dev/shm/o0 > /dev/null 2>&1
for r in 1 2 3 4; do
  one "filed release" $P ""
  one "v0.51        " $O ""
  one "v52c         " $N ""
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to v0.51's"
one "v52c 24 workers" $N "" RAYON_NUM_THREADS=24
one "v52c 16 workers" $N "" RAYON_NUM_THREADS=16
grep -E "ms  " /tmp/log | head -12
rm -rf /dev/shm/o /dev/shm/o0 $w
