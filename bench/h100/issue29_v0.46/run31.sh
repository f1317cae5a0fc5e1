set -u
export LD_LIBRARY_PATH=$PWD/.dev/nvcomp:${LD_LIBRARY_PATH:-}
w=/tmp/w; ls $w/in | wc -l
one() { CUDA_SOBEL_TRACE=1 .dev/cuda_sobel batch $w/in --png-inflate gpu --out $1 > $w/log 2>$w/err
  echo "$2: $(head -1 $w/log | grep -o '[0-9.]* images/s') $(grep -o 'encode + write [0-9.]* ([0-9.]*)' $w/err | tail -1)"; }
one $w/n1 "new folder, nothing deleted before"
rm -rf $w/n1; sync; one $w/n2 "new folder, right after deleting 2000 outputs + sync"
rm -rf $w/n2; sync; sleep 20; one $w/n3 "new folder, 20 s after deleting 2000 outputs + sync"
rm -rf $w/n3; sync; one $w/n4 "new folder, right after deleting 2000 outputs + sync"
one /dev/shm/n5 "tmpfs"
one $w/n6 "new folder, n4 kept (nothing deleted)"
