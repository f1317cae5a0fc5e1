# Issue 29 v0.52 run3: tests/batch.rs with the GPU and nvCOMP required on v52b (run2's hang: files read ahead that a
# wave took held their memory; no reads ahead with --png-inflate gpu again); where the default batch's CPU time goes
# (/usr/bin/time: user, system, page faults) and whether glibc's freeing and re-faulting of the 6 MB row buffers
# costs (GLIBC_TUNABLES keeping freed memory), against the filed release.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_afbf45c O=.dev/cuda_sobel_v51 N=.dev/cuda_sobel_v52b
echo "== tests/batch.rs with the GPU and nvCOMP required"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/$N timeout 300 .dev/batch --test-threads=2 -q > /tmp/t.log 2>&1; echo "rc $?"; grep -E 'test result|FAILED|panicked|error' /tmp/t.log | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 bin=$2 extra=$3; shift 3; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env CUDA_SOBEL_TRACE=1 "$@" python3 -c "$RU" $bin batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; ctx $(grep -o '[0-9.]* ms  GPU context made' /tmp/log | cut -d' ' -f1); done $(grep -o '[0-9.]* ms  batch done' /tmp/log | cut -d' ' -f1); $(grep -o 'user.*' /tmp/log); $(grep -o 'thread-seconds.*' /tmp/log | cut -c1-120)"; }
RU='import resource,subprocess,sys; rc=subprocess.call(sys.argv[1:]); r=resource.getrusage(resource.RUSAGE_CHILDREN); print(f"user {r.ru_utime:.2f} s, sys {r.ru_stime:.2f} s, minor faults {r.ru_minflt}, switches {r.ru_nvcsw}/{r.ru_nivcsw}", file=sys.stderr); sys.exit(rc)'
T="GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296"
for r in 1 2 3; do
  one "filed release     " $P ""
  one "v0.51             " $O ""
  one "v52b              " $N ""
  one "v52b kept by glibc" $N "" $T
  one "v52b gpu 256/512  " $N "--png-inflate gpu" CUDA_SOBEL_WAVE=256
done
rm -rf /dev/shm/o $w
