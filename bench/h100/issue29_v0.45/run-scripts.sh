### .dev/run12.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
echo "== tests/batch.rs on 0744564 (GPU and nvCOMP required)"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/.dev/cuda_sobel .dev/batch --test-threads=1 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
w=/tmp/w; mkdir -p $w/in $w/s; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
for i in 1 2 3 4 5 6; do cp imgs_in/2048x1024.png $w/s/s$i.png; done; head -c 300000 imgs_in/2048x1024.png > $w/s/cut.png
echo "== memcheck, --png-inflate gpu --check, 6 scenes + a cut file"
compute-sanitizer --tool memcheck --print-limit 5 .dev/cuda_sobel batch $w/s --out $w/so --png-inflate gpu --check 2>&1 | grep -E 'ERROR SUMMARY|images|cut.png' | head
echo "== deflate kernels alone, N at once"
python3 scripts/deflate_bench.py --scene --concurrent 4,8,16,32 2>&1 | grep 'at once'
CUDA_DEVICE_MAX_CONNECTIONS=32 python3 scripts/deflate_bench.py --scene --concurrent 4,8,16,32 2>&1 | grep 'at once' | sed 's/^/MAX_CONNECTIONS=32: /'
TIMEFORMAT='%R %U %S'
one() { local label=$1; shift
  rm -rf $w/o; { time env "$@" --out $w/o > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o '[0-9]* PNGs inflated by nvCOMP' $w/log) $(grep -o 'read.*threads' $w/err | tail -1)"; }
.dev/cuda_sobel_v043 batch $w/in --out $w/o0 > /dev/null
echo "== 2000 scenes"
one "v0.43" .dev/cuda_sobel_v043 batch $w/in
one "HEAD default" CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch $w/in
one "HEAD gpu lane0" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu
one "HEAD gpu lane0 MAXCONN32" CUDA_DEVICE_MAX_CONNECTIONS=32 CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu
one "HEAD gpu lane0 --format pgm" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --format pgm
one "HEAD gpu lane0 --png-encoder cpu" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --png-encoder cpu
one "HEAD gpu lane0 --slots 4" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 4
one "HEAD gpu lane0 --slots 8" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 8
one "HEAD gpu lane0 --slots 32 RAYON32" RAYON_NUM_THREADS=32 CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 32
one "HEAD default --slots 16" CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch $w/in --slots 16
one "HEAD gpu lane0 --slots 16" CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 16
one "HEAD gpu (lane 8)" CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch $w/in --png-inflate gpu
cmp -s <(cd $w/o0 && cat $(ls | head -100)) <(cd $w/o && cat $(ls | head -100)) && echo "100 outputs byte-identical to v0.43" || echo "OUTPUTS DIFFER"
CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --out $w/o3 2>&1 >/dev/null | grep -E 'wave' | head -40

### .dev/run13.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
TIMEFORMAT='%R %U %S'
one() { local label=$1; shift
  rm -rf $w/o; { time env "$@" --out $w/o > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o '[0-9]* PNGs inflated by nvCOMP' $w/log | head -1) $(grep -o 'GPU.*threads' $w/err | tail -1)"; }
.dev/cuda_sobel_v043 batch $w/in --out $w/o0 > /dev/null
one "v0.43" .dev/cuda_sobel_v043 batch $w/in
M=CUDA_DEVICE_MAX_CONNECTIONS=32
for s in 8 16 24 32; do
one "MAXCONN32 default --slots $s" $M CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch $w/in --slots $s
one "MAXCONN32 gpu lane0 --slots $s" $M CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots $s
one "MAXCONN32 gpu lane8 --slots $s" $M CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots $s
done
one "v0.43" .dev/cuda_sobel_v043 batch $w/in
one "MAXCONN32 gpu lane4 --slots 24" $M CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=4 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 24
one "MAXCONN32 gpu lane8 --slots 24 RAYON24" $M RAYON_NUM_THREADS=24 CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 24
one "MAXCONN32 default --slots 24 RAYON24" $M RAYON_NUM_THREADS=24 CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch $w/in --slots 24
cmp -s <(cd $w/o0 && cat $(ls | head -100)) <(cd $w/o && cat $(ls | head -100)) && echo "100 outputs byte-identical to v0.43" || echo "OUTPUTS DIFFER"
echo "== full trace, MAXCONN32 gpu lane0 --slots 24"
env $M CUDA_SOBEL_TRACE=1 CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 24 --out $w/o3 2>&1 | head -60

### .dev/run14.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
TIMEFORMAT='%R %U %S'
one() { local label=$1; shift
  rm -rf $w/o; { time env "$@" --out $w/o > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o '[0-9]* PNGs inflated by nvCOMP' $w/log | head -1) $(grep -o 'GPU.*threads' $w/err | tail -1)"; }
.dev/cuda_sobel_v043 batch $w/in --out $w/o0 > /dev/null
M=CUDA_DEVICE_MAX_CONNECTIONS=32
T=CUDA_SOBEL_TRACE=1
for r in 1 2; do
one "v0.43" .dev/cuda_sobel_v043 batch $w/in
one "0744 default" $T .dev/cuda_sobel_0744 batch $w/in
one "gate default" $T .dev/cuda_sobel batch $w/in
one "0744 gpu" $T .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu
one "gate gpu" $T .dev/cuda_sobel batch $w/in --png-inflate gpu
done
for s in 16 24; do
one "gate default MAXCONN32 --slots $s" $M $T .dev/cuda_sobel batch $w/in --slots $s
one "gate gpu MAXCONN32 --slots $s" $M $T .dev/cuda_sobel batch $w/in --png-inflate gpu --slots $s
one "gate gpu lane0 MAXCONN32 --slots $s" $M $T CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots $s
done
one "gate gpu MAXCONN32 --slots 24 RAYON24" $M $T RAYON_NUM_THREADS=24 .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 24
one "gate default MAXCONN32 --slots 24 RAYON24" $M $T RAYON_NUM_THREADS=24 .dev/cuda_sobel batch $w/in --slots 24
cmp -s <(cd $w/o0 && cat $(ls | head -100)) <(cd $w/o && cat $(ls | head -100)) && echo "100 outputs byte-identical to v0.43" || echo "OUTPUTS DIFFER"
echo "== tmpfs in and out"
mkdir -p /dev/shm/in && cp $w/in/* /dev/shm/in/
rm -rf /dev/shm/o; { time .dev/cuda_sobel_v043 batch /dev/shm/in --out /dev/shm/o | head -1; } 2>&1 | head -2
rm -rf /dev/shm/o; { time env $T .dev/cuda_sobel batch /dev/shm/in --out /dev/shm/o 2>&1 | grep -E 'images/s|threads'; } 2>&1 | head -3
rm -rf /dev/shm/o; { time env $M $T .dev/cuda_sobel batch /dev/shm/in --out /dev/shm/o --png-inflate gpu --slots 24 2>&1 | grep -E 'images/s|threads'; } 2>&1 | head -3

### .dev/run15.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
sync
TIMEFORMAT='%R %U %S'
one() { local label=$1; shift
  rm -rf $w/o; sync; { time env "$@" --out $w/o > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o 'GPU.*threads' $w/err | tail -1)"; }
.dev/cuda_sobel_v043 batch $w/in --out $w/o0 > /dev/null
M=CUDA_DEVICE_MAX_CONNECTIONS=32
T=CUDA_SOBEL_TRACE=1
for r in 1 2; do
one "v0.43" .dev/cuda_sobel_v043 batch $w/in
one "0744 default" $T .dev/cuda_sobel_0744 batch $w/in
one "0744 gpu" $T .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu
one "0744 gpu M32 --slots 16" $M $T .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 16
one "0744 gpu M32 --slots 24" $M $T .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 24
one "0744 gpu M32 --slots 24 RAYON24" $M $T RAYON_NUM_THREADS=24 .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 24
one "0744 gpu M32 --slots 32 RAYON32" $M $T RAYON_NUM_THREADS=32 .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 32
done
one "0744 default M32 --slots 16" $M $T .dev/cuda_sobel_0744 batch $w/in --slots 16
one "0744 gpu M32 --slots 32 RAYON32 lane4" $M $T RAYON_NUM_THREADS=32 CUDA_SOBEL_CPU_LANE=4 .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 32
one "0744 gpu M32 --slots 32 RAYON32 lane12" $M $T RAYON_NUM_THREADS=32 CUDA_SOBEL_CPU_LANE=12 .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 32
one "0744 gpu M32 --slots 48 RAYON48" $M $T RAYON_NUM_THREADS=48 .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 48
one "0744 gpu M32 --slots 32 RAYON32 wave 256" $M $T RAYON_NUM_THREADS=32 CUDA_SOBEL_WAVE=256 .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 32

### .dev/run16.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
which perf strace ltrace gdb bpftrace 2>&1 | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
sync
TIMEFORMAT='%R %U %S'
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; { time env "$@" --out $out > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s, sys $sys, over $wall s) $(grep -o 'GPU.*threads' $w/err | tail -1)"; }
M=CUDA_DEVICE_MAX_CONNECTIONS=32
T=CUDA_SOBEL_TRACE=1
B=".dev/cuda_sobel_0744 batch $w/in --png-inflate gpu --slots 24"
one "gpu M32 slots24 -> /tmp" $w/o $M $T $B
one "gpu M32 slots24 -> /dev/shm" /dev/shm/o $M $T $B
one "gpu M32 slots24 MMAP32M -> /tmp" $w/o $M $T MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967295 $B
one "gpu M32 slots24 MMAP32M -> /dev/shm" /dev/shm/o $M $T MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967295 $B
one "default -> /tmp" $w/o $T .dev/cuda_sobel_0744 batch $w/in
one "default -> /dev/shm" /dev/shm/o $T .dev/cuda_sobel_0744 batch $w/in
one "v0.43 -> /tmp" $w/o .dev/cuda_sobel_v043 batch $w/in
one "v0.43 -> /dev/shm" /dev/shm/o .dev/cuda_sobel_v043 batch $w/in
if which strace >/dev/null 2>&1; then
  rm -rf $w/o; sync; env $M strace -f -c -o $OUT/strace.txt $B --out $w/o | head -1; sort -k2 -n -r $OUT/strace.txt | head -25
fi

### .dev/run17.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
sync
TIMEFORMAT='%R %U %S'
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; { time env "$@" --out $out > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o 'GPU.*threads' $w/err | tail -1)"; }
T=CUDA_SOBEL_TRACE=1
.dev/cuda_sobel_v043 batch $w/in --out $w/o0 > /dev/null
for r in 1 2 3; do
one "v0.43" $w/o .dev/cuda_sobel_v043 batch $w/in
one "0744 default" $w/o $T .dev/cuda_sobel_0744 batch $w/in
one "new default" $w/o $T .dev/cuda_sobel batch $w/in
one "0744 gpu" $w/o $T .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu
one "new gpu (24 slots, 24 threads, 32 queues)" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu --slots 32" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 32
one "new gpu --slots 16" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 16
done
cmp -s <(cd $w/o0 && cat $(ls | head -100)) <(cd $w/o && cat $(ls | head -100)) && echo "100 outputs byte-identical to v0.43" || echo "OUTPUTS DIFFER"
one "new gpu lane 4" $w/o $T CUDA_SOBEL_CPU_LANE=4 .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu lane 0" $w/o $T CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu --slots 48" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 48
echo "== /dev/shm"
one "v0.43" /dev/shm/o .dev/cuda_sobel_v043 batch $w/in
one "new default" /dev/shm/o $T .dev/cuda_sobel batch $w/in
one "new gpu" /dev/shm/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu --slots 32" /dev/shm/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 32

### .dev/run18.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
sync
TIMEFORMAT='%R %U %S'
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; { time env "$@" --out $out > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o 'GPU.*threads' $w/err | tail -1)"; }
T=CUDA_SOBEL_TRACE=1
.dev/cuda_sobel_v043 batch $w/in --out $w/o0 > /dev/null
for r in 1 2 3; do
one "v0.43" $w/o .dev/cuda_sobel_v043 batch $w/in
one "0744 default" $w/o $T .dev/cuda_sobel_0744 batch $w/in
one "new default (4 writers)" $w/o $T .dev/cuda_sobel batch $w/in
one "new gpu (4 writers)" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu 2 writers" $w/o $T CUDA_SOBEL_WRITERS=2 .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu 8 writers" $w/o $T CUDA_SOBEL_WRITERS=8 .dev/cuda_sobel batch $w/in --png-inflate gpu
done
cmp -s <(cd $w/o0 && cat $(ls | head -100)) <(cd $w/o && cat $(ls | head -100)) && echo "100 outputs byte-identical to v0.43" || echo "OUTPUTS DIFFER"
one "new gpu --slots 32" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 32
one "new gpu --slots 16" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 16
one "new gpu 1 writer" $w/o $T CUDA_SOBEL_WRITERS=1 .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new default 16 writers" $w/o $T CUDA_SOBEL_WRITERS=16 .dev/cuda_sobel batch $w/in
python3 .dev/fsbench.py /tmp 2>&1 | grep -v tmpfile

### .dev/run19.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
echo "== tests/batch.rs (GPU and nvCOMP required)"
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/.dev/cuda_sobel .dev/batch --test-threads=1 -q 2>&1 | grep -E 'test result|FAILED|panicked' | head
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
sync
TIMEFORMAT='%R %U %S'
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; { time env "$@" --out $out > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o 'GPU.*write [0-9.]* ([0-9.]*)' $w/err | tail -1)"; }
T=CUDA_SOBEL_TRACE=1
.dev/cuda_sobel_v043 batch $w/in --out $w/o0 > /dev/null
for d in /dev/shm/o $w/o; do for r in 1 2; do
echo "-- out: $d"
one "v0.43" $d .dev/cuda_sobel_v043 batch $w/in
one "0744 default" $d $T .dev/cuda_sobel_0744 batch $w/in
one "0744 --png-inflate gpu" $d $T .dev/cuda_sobel_0744 batch $w/in --png-inflate gpu
one "new default" $d $T .dev/cuda_sobel batch $w/in
one "new --png-inflate gpu" $d $T .dev/cuda_sobel batch $w/in --png-inflate gpu
done; done
cmp -s <(cd $w/o0 && cat $(ls | head -100)) <(cd $w/o && cat $(ls | head -100)) && echo "100 outputs byte-identical to v0.43" || echo "OUTPUTS DIFFER"
echo "== deflate kernels, N at once (32 queues set by the environment here)"
CUDA_DEVICE_MAX_CONNECTIONS=8 python3 scripts/deflate_bench.py --scene --concurrent 8,16,32 2>&1 | grep 'at once' | sed 's/^/8 queues: /'
CUDA_DEVICE_MAX_CONNECTIONS=32 python3 scripts/deflate_bench.py --scene --concurrent 8,16,32 2>&1 | grep 'at once' | sed 's/^/32 queues: /'

### .dev/run20.sh
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done
sync
TIMEFORMAT='%R %U %S'
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; { time env "$@" --out $out > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s) $(grep -o 'GPU.*write [0-9.]* ([0-9.]*)' $w/err | tail -1)"; }
T=CUDA_SOBEL_TRACE=1
for r in 1 2; do
one "v0.43 /tmp" $w/o .dev/cuda_sobel_v043 batch $w/in
one "new default /tmp" $w/o $T .dev/cuda_sobel batch $w/in
one "new gpu /tmp" $w/o $T .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu blocking /tmp" $w/o $T CUDA_SOBEL_SYNC=blocking .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu yield /tmp" $w/o $T CUDA_SOBEL_SYNC=yield .dev/cuda_sobel batch $w/in --png-inflate gpu
one "new gpu blocking /dev/shm" /dev/shm/o $T CUDA_SOBEL_SYNC=blocking .dev/cuda_sobel batch $w/in --png-inflate gpu
done
one "new gpu blocking --slots 32 /tmp" $w/o $T CUDA_SOBEL_SYNC=blocking .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 32
one "new gpu blocking --slots 48 /tmp" $w/o $T CUDA_SOBEL_SYNC=blocking .dev/cuda_sobel batch $w/in --png-inflate gpu --slots 48

