# Issue 29 v0.52 run8: photos (JPEG path: the workers' order is now handoff::Order) on the committed build against
# v0.51, and their outputs compared.
set -u
ROUNDS="1 2" bash scripts/photos-by-clock.sh 1000 .dev/cuda_sobel_v51 .dev/cuda_sobel_v52
d=$(mktemp -d); python3 scripts/make_photos.py --count 100 --out $d/p > /dev/null
.dev/cuda_sobel_v51 batch $d/p --out $d/a > /dev/null 2>&1; .dev/cuda_sobel_v52 batch $d/p --out $d/b > /dev/null 2>&1
cmp <(cd $d/a && md5sum *) <(cd $d/b && md5sum *) && echo "100 photos' outputs identical to v0.51's"; rm -rf $d
