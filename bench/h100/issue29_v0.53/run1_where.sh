# Issue 29 v0.53 run1: where the GPU's ~1450 scenes/s cap comes from. 2000 scenes with v0.52 (HEAD 4909f42's code)
# writing PNG (GPU deflate), PGM (no encode: the slot's chain without the deflate) and PNG encoded on the CPU;
# then Nsight Compute on two scenes through one slot: each kernel's time, launch shape and what limits its occupancy.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
ls /usr/local/cuda/bin | tr '\n' ' '; echo; which nsys || true
N=.dev/cuda_sobel_v52
w=/tmp/w; mkdir -p $w/in; for i in $(seq -w 1 2000); do cp imgs_in/2048x1024.png $w/in/img$i.png; done; sync
mkdir -p $w/two; cp imgs_in/2048x1024.png $w/two/a.png; cp imgs_in/2048x1024.png $w/two/b.png
for r in 1 2; do
  for args in "" "--format pgm" "--png-encoder cpu" "--slots 8" "--slots 8 --format pgm"; do
    rm -rf /dev/shm/o; t0=$(date +%s%N); CUDA_SOBEL_TRACE=1 /usr/bin/time -f "%U user %S sys" $N batch $w/in $args --out /dev/shm/o > /tmp/log 2>&1; t1=$(date +%s%N)
    echo "[$args]: $(( (t1-t0)/1000000 )) ms; $(grep -o 'holding one [0-9.]*' /tmp/log); $(grep -o 'read + inflate [0-9.]* ([0-9.]*)' /tmp/log); $(tail -1 /tmp/log)"
  done
done
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors.sum,lts__t_sectors.sum,smsp__inst_executed.sum
rm -rf /dev/shm/o; timeout 300 ncu --clock-control none --metrics $M --csv $N batch $w/two --slots 1 --out /dev/shm/o > /tmp/ncu.csv 2>/tmp/ncu.err; echo "ncu rc $?"; tail -3 /tmp/ncu.err
python3 - <<'PY'
import csv
rows=list(csv.DictReader(l for l in open('/tmp/ncu.csv') if l.startswith('"')))
k={}
for r in rows:
    k.setdefault((r['ID'],r['Kernel Name']),{})[r['Metric Name']]=r['Metric Value']
for (i,n),m in k.items():
    print(i, n[:22].ljust(22), ' '.join(f"{a.split('__')[1][:28]}={m[a]}" for a in m))
PY
rm -rf /dev/shm/o $w
