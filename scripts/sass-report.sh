#!/usr/bin/env bash
# On the GPU machine (it has nvcc and cuobjdump; NVRTC has no -Xptxas -v): compiles every kernel file for
# sm_90 with the options the host gives NVRTC, and prints registers, spills and stack per kernel, then the
# SASS instruction mix of the fast kernels (loads/stores by width, dp4a, MUFU, total).
set -uo pipefail
cd "$(dirname "$0")/../cuda"
out=$(mktemp -d)
for f in *.cu; do
  nvcc -arch=sm_90 -cubin --fmad=false --prec-sqrt=true -Xptxas -v -o "$out/${f%.cu}.cubin" "$f" 2>&1 |
    grep -E "Compiling entry|registers|spill|stack frame" | sed -E "s/ptxas info *: //; s/^/  /"
done
for k in fused tiled vec16 strip; do
  echo "== SASS of $k.cu"
  cuobjdump -sass "$out/$k.cubin" | awk '
    /Function :/ { fn = $3 }
    /^ +\/\*[0-9a-f]{4}\*\// { op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op); total[fn]++; ops[fn, op]++ }
    END {
      for (f in total) {
        printf "  %s: %d instructions;", f, total[f]
        n = split("LDG.E.128.CONSTANT LDG.E.CONSTANT LDG.E.U8.CONSTANT STG.E.128 STG.E.U8 IDP.4A.U8.U8 MUFU.SQRT MUFU.RSQ IMAD.HI.U32 BAR.SYNC LDS.U8", keys, " ")
        for (i = 1; i <= n; i++) if (ops[f, keys[i]]) printf " %s %d", keys[i], ops[f, keys[i]]
        printf "\n"
      }
    }'
done
rm -rf "$out"
