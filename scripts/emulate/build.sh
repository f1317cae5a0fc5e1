#!/usr/bin/env bash
# build.sh KERNEL.cu OUTPUT [-DNAME=VALUE ...]: the kernel file, its headers inlined as the host inlines them for
# NVRTC, compiled for the CPU with g++ and the driver main.cpp (shim.h says what stands in for CUDA). Two lines of
# inline PTX are replaced: the L2 prefetch (a hint) by nothing, the approximate square root by sqrtf (sobel.cuh's
# one-rounding magnitude is exact with either; the GPU's selftest checks the approximate one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
file=$1 out=$2; shift 2
work=$(mktemp -d)
python3 - "$file" > "$work/kernel.cpp" <<'PY'
import os, re, sys
def expand(path, seen):
    out = []
    for line in open(path):
        m = re.match(r'#include "(.+)"', line)
        if m:
            header = os.path.join(os.path.dirname(path), m.group(1))
            if header not in seen:
                seen.add(header)
                out.append(expand(header, seen))
            continue
        line = line.replace('asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));', 'r = sqrtf(s);')
        line = re.sub(r'asm volatile\("prefetch[^;]*;\s*"[^)]*\)\);', '(void)p;', line)
        if 'asm' in line.split('//')[0]:
            sys.exit(f"{path}: inline PTX this emulation does not know: {line.strip()}")
        out.append(line)
    return ''.join(out)
print('#include "shim.h"')
print(expand(sys.argv[1], set()))
PY
g++ -O1 -std=c++17 -w -I"$here" "$@" -include "$work/kernel.cpp" "$here/main.cpp" -o "$out"
rm -rf "$work"
