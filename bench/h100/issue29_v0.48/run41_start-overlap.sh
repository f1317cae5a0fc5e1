# Issue 29, v0.48: a photo folder's start — the JPEG engine's handle made beside nvJPEG's default one, the devices
# opened while the inputs are planned — and whether the engines' teardown is ours (XX_FORGET=1: not dropped).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s); python3 scripts/make_photos.py --count 1000 --out /tmp/p1000 > /dev/null 2>&1; echo "1000 photos made in $(( $(date +%s) - t0 )) s, $(du -sm /tmp/p1000 | cut -f1) MB"; sync
P=.dev/cuda_sobel X=.dev/cuda_sobel_x
ph() { local label=$1; shift; rm -rf /dev/shm/po; sync; local s=$(date +%s%N); "$@" --out /dev/shm/po > /tmp/log 2>/tmp/err; local e=$(date +%s%N)
  echo "$label: wall $(( (e - s) / 1000000 )) ms = $(( 1000 * 1000000000 / (e - s) )) images/s by the clock; batch says $(head -1 /tmp/log | grep -o '[0-9.]* s — [0-9.]* images/s'); $(grep -o '[0-9]* slots each; [^;]*' /tmp/log | head -1 | cut -c1-80)"; }
$P batch /tmp/p1000 --out /dev/shm/po > /dev/null 2>&1; $X batch /tmp/p1000 --out /dev/shm/po2 > /dev/null 2>&1
echo "== outputs prev vs new: $(for f in $(ls /dev/shm/po | head -100); do cmp -s /dev/shm/po/$f /dev/shm/po2/$f || echo x; done | wc -l) of 100 differ"; rm -rf /dev/shm/po2
for r in 1 2 3; do
  ph "photos prev (v0.47)      " $P batch /tmp/p1000
  ph "photos new               " $X batch /tmp/p1000
  ph "photos new, not dropped  " env XX_FORGET=1 $X batch /tmp/p1000
done
for v in "" 1; do
  rm -rf /dev/shm/po; echo "== trace new XX_FORGET=$v"; s=$(date +%s%N); env ${v:+XX_FORGET=1} CUDA_SOBEL_TRACE=1 $X batch /tmp/p1000 --out /dev/shm/po > /tmp/log 2> /tmp/err; e=$(date +%s%N)
  echo "wall $(( (e - s) / 1000000 )) ms"; grep "trace" /tmp/err | grep -v "thread-samples\|images · " | head -16 | cut -c1-150
done
echo "== trace prev"; rm -rf /dev/shm/po; CUDA_SOBEL_TRACE=1 $P batch /tmp/p1000 --out /dev/shm/po > /tmp/log 2> /tmp/err; grep "trace" /tmp/err | grep -v "thread-samples\|images · " | head -12 | cut -c1-150
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
pn() { local label=$1; shift; rm -rf /dev/shm/o; sync; local s=$(date +%s%N); "$@" --out /dev/shm/o > /tmp/log 2>/tmp/err; local e=$(date +%s%N)
  echo "$label: wall $(( (e - s) / 1000000 )) ms; batch says $(head -1 /tmp/log | grep -o '[0-9.]* s — [0-9.]* images/s')"; }
for r in 1 2 3; do pn "2000 PNGs prev" $P batch $w/in; pn "2000 PNGs new " $X batch $w/in; pn "2000 PNGs new, not dropped" env XX_FORGET=1 $X batch $w/in; done
rm -rf /dev/shm/o; CUDA_SOBEL_TRACE=1 $X batch $w/in --out /dev/shm/o > /tmp/log 2> /tmp/err; grep "trace" /tmp/err | grep -v "thread-samples\|images · " | head -12 | cut -c1-150
