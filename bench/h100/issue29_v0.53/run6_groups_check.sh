# Issue 29 v0.53 run6: images of a wave through a slot in groups (cuda_sobel_t3 = the working tree: unfilter.cu's
# wavefront and deflate.cu's five kernels over several images in one launch, Slot::run_inflated on a group; still
# with the trace marks and the readers switch of t2). tests/batch.rs with the GPU and nvCOMP required;
# compute-sanitizer memcheck over a group of six different 512x512 scenes and a bad one; 2000 scenes' outputs
# against v0.52's, the default and --png-inflate gpu.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
CUDA_SOBEL_REQUIRE_GPU=1 CUDA_SOBEL_REQUIRE_NVCOMP=1 CUDA_SOBEL_BIN=$PWD/.dev/cuda_sobel_t3 timeout 300 .dev/batch --test-threads=2 -q 2>&1 | tail -5
m=/tmp/m; mkdir -p $m
python3 - <<'PY'
import numpy as np, cv2
rng = np.random.default_rng(53)
base = cv2.imread("imgs_in/512x512.png")
for k in range(6):
    img = np.roll(base, 37 * k, axis=1) if k % 2 else np.clip(base.astype(int) + rng.integers(-20, 20, base.shape), 0, 255).astype(np.uint8)
    cv2.imwrite(f"/tmp/m/s{k}.png", img)
PY
python3 -c "
import zlib,struct
row=lambda f: bytes([f])+bytes([7])*12
data=row(0)+row(7)
def chunk(t,b): return struct.pack('>I',len(b))+t+b+struct.pack('>I',zlib.crc32(t+b))
open('/tmp/m/bad.png','wb').write(b'\x89PNG\r\n\x1a\n'+chunk(b'IHDR',struct.pack('>IIBBBBB',4,2,8,2,0,0,0))+chunk(b'IDAT',zlib.compress(data))+chunk(b'IEND',b''))
"
rm -rf /tmp/mo; CUDA_SOBEL_CPU_LANE=0 timeout 300 compute-sanitizer --tool memcheck --print-limit 5 .dev/cuda_sobel_t3 batch $m --png-inflate gpu --check --out /tmp/mo 2>&1 | tail -8
rm -rf /tmp/mc; .dev/cuda_sobel_t3 batch $m --png-inflate cpu --out /tmp/mc > /dev/null 2>&1; rm -rf /tmp/mg; CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel_t3 batch $m --png-inflate gpu --out /tmp/mg 2>&1 | tail -3
for f in /tmp/mc/*; do cmp -s $f /tmp/mg/$(basename $f) && echo "same $(basename $f)" || echo "DIFFER $(basename $f)"; done
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
sum() { md5sum $1/* | awk '{print $1}' | sort | md5sum; }
rm -rf /dev/shm/o; .dev/cuda_sobel_v52 batch $w/in --out /dev/shm/o > /dev/null 2>&1; echo "v52 default $(sum /dev/shm/o)"
rm -rf /dev/shm/o; .dev/cuda_sobel_t3 batch $w/in --out /dev/shm/o > /dev/null 2>&1; echo "t3 default $(sum /dev/shm/o)"
rm -rf /dev/shm/o; .dev/cuda_sobel_t3 batch $w/in --png-inflate gpu --out /dev/shm/o 2>&1 | tail -2; echo "t3 gpu $(sum /dev/shm/o)"
one() { local label=$1; shift; rm -rf /dev/shm/o; sync; t0=$(date +%s%N); /usr/bin/time -f "%U %S" -o /tmp/time env CUDA_SOBEL_TRACE=1 "$@" --out /dev/shm/o > /tmp/log 2>&1; t1=$(date +%s%N)
  m() { grep "$1" /tmp/log | head -1 | awk '{print $3}'; }
  echo "$label: $(( (t1-t0)/1000000 )) ms; cpu $(cat /tmp/time); ctx $(m 'GPU context made'); done $(m 'batch done'); $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o '^[0-9]* PNGs inflated by nvCOMP' /tmp/log)"; }
for r in 1 2; do
  one "v52 default          " .dev/cuda_sobel_v52 batch $w/in
  one "t3 default           " .dev/cuda_sobel_t3 batch $w/in
  one "t3 gpu q8            " .dev/cuda_sobel_t3 batch $w/in --png-inflate gpu
  one "t3 gpu q8 readers 12 " CUDA_SOBEL_TRIAL_READERS=12 .dev/cuda_sobel_t3 batch $w/in --png-inflate gpu
  one "t3 gpu q16           " CUDA_DEVICE_MAX_CONNECTIONS=16 .dev/cuda_sobel_t3 batch $w/in --png-inflate gpu
  one "t3 gpu alone q8      " CUDA_SOBEL_CPU_LANE=0 .dev/cuda_sobel_t3 batch $w/in --png-inflate gpu
  one "t3 gpu alone q8 r12  " CUDA_SOBEL_CPU_LANE=0 CUDA_SOBEL_TRIAL_READERS=12 .dev/cuda_sobel_t3 batch $w/in --png-inflate gpu
  one "t3 gpu group 1       " CUDA_SOBEL_WAVE_GROUP=1 .dev/cuda_sobel_t3 batch $w/in --png-inflate gpu
done
rm -rf /dev/shm/o $w /tmp/m /tmp/mo /tmp/mc /tmp/mg
