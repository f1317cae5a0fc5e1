set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
TIMEFORMAT='%R %U %S'
one() { local label=$1 out=$2; shift 2
  rm -rf $out; sync; { time "$@" --out $out > $w/log 2>$w/err; } 2> $w/time
  read -r wall user sys < <(tail -1 $w/time)
  echo "$label: $(head -1 $w/log | grep -o '[0-9.]* images/s') (CPU $(echo "$user $sys" | awk '{print $1+$2}') s over $wall s)"; }
P=.dev/cuda_sobel_pre V=.dev/cuda_sobel_v043 H=.dev/cuda_sobel_prev
$P batch $w/in --out /dev/shm/o0 > /dev/null
for r in 1 2 3; do
  one "pre-issue afbf45c  /dev/shm" /dev/shm/o $P batch $w/in
  one "v0.43 (db prev)    /dev/shm" /dev/shm/o $V batch $w/in
  one "HEAD default       /dev/shm" /dev/shm/o $H batch $w/in
  one "HEAD --png-inflate gpu /dev/shm" /dev/shm/o $H batch $w/in --png-inflate gpu
done
python3 - <<'PY'
import glob, os, numpy as np
from PIL import Image
a=sorted(glob.glob('/dev/shm/o0/*.png')); b=sorted(glob.glob('/dev/shm/o/*.png'))
print(len(a), len(b), 'outputs;', 'names equal' if [os.path.basename(x) for x in a]==[os.path.basename(x) for x in b] else 'NAMES DIFFER')
bad=sum(not np.array_equal(np.asarray(Image.open(x)), np.asarray(Image.open(y))) for x,y in zip(a[:200],b[:200]))
print(f'pixels: {200-bad} of 200 outputs of HEAD --png-inflate gpu equal to the pre-issue build\'s; sizes {sum(map(os.path.getsize,a))/1e6:.1f} / {sum(map(os.path.getsize,b))/1e6:.1f} MB')
PY
rm -rf /dev/shm/o0 /dev/shm/o
for r in 1; do
  one "pre-issue afbf45c  /tmp (disk)" $w/o $P batch $w/in
  one "HEAD --png-inflate gpu /tmp (disk)" $w/o $H batch $w/in --png-inflate gpu
  one "HEAD default       /tmp (disk)" $w/o $H batch $w/in
done
