# Issue 29, v0.49: --png-inflate gpu (nvCOMP waves beside a CPU lane) on the committed build, at 8 / 16 / 32 hardware
# queues, against its default (CPU inflate) and the filed release, 2000 scenes by the clock.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
P=.dev/cuda_sobel_pre U=.dev/cuda_sobel_u4
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
one() { local label=$1 extra=$2; shift 2; rm -rf /dev/shm/o; sync; local s=$(date +%s%N)
  env "$@" batch $w/in $extra --out /dev/shm/o > /tmp/log 2>&1; local rc=$? e=$(date +%s%N)
  echo "$label: rc $rc; $(( (e-s)/1000000 )) ms; $(grep -o '[0-9.]* images/s' /tmp/log | tail -1); $(grep -o '[0-9]* slots each' /tmp/log | head -1); $(grep -o '[0-9]* PNGs inflated by nvCOMP' /tmp/log | head -1)"; }
rm -rf /dev/shm/o0; $U batch $w/in --out /dev/shm/o0 > /dev/null 2>&1; $P batch $w/in --out /dev/shm/o1 > /dev/null 2>&1
$U batch $w/in --png-inflate gpu --out /dev/shm/o2 > /dev/null 2>&1
for r in 1 2; do
  one "filed release        " "" $P
  one "v0.49                " "" $U
  one "v0.49 gpu, 8 queues  " "--png-inflate gpu" CUDA_DEVICE_MAX_CONNECTIONS=8 $U
  one "v0.49 gpu, 16 queues " "--png-inflate gpu" CUDA_DEVICE_MAX_CONNECTIONS=16 $U
  one "v0.49 gpu, 32 queues " "--png-inflate gpu" $U
done
cmp <(cd /dev/shm/o0 && md5sum *.png) <(cd /dev/shm/o && md5sum *.png) && echo "outputs identical to the default's"
