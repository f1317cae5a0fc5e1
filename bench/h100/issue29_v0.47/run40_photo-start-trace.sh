set -u
nvidia-smi --query-gpu=name --format=csv,noheader
python3 scripts/make_photos.py --count 300 --out /tmp/p300 > /dev/null 2>&1
.dev/cuda_sobel batch /tmp/p300 --out /tmp/po > /dev/null 2>&1
for r in 1 2; do
  rm -rf /tmp/po; sync; s=$(date +%s%N); CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch /tmp/p300 --out /tmp/po > /tmp/log 2> /tmp/err; e=$(date +%s%N)
  echo "== 300 photos: wall $(( (e - s) / 1000000 )) ms; $(head -1 /tmp/log | grep -o '[0-9.]* s — [0-9.]* images/s')"
  grep -v "images · " /tmp/err | grep "trace" | grep -v "thread-samples" | head -12 | cut -c1-200
done
