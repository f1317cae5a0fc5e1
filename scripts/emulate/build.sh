#!/usr/bin/env bash
# build.sh KERNEL.cu OUTPUT [-DNAME=VALUE ...]: the kernel file, its headers inlined as the host inlines them for
# NVRTC, compiled for the CPU with g++ and a driver (DRIVER: main.cpp, conv_strip.cu's, by default; strip_main.cpp
# for strip.cu and vec16.cu) — shim.h says what stands in for CUDA. Two lines of inline PTX are replaced: the L2
# prefetch (a hint) by nothing, the approximate square root by sqrtf (sobel.cuh's one-rounding magnitude is exact
# with either; the GPU's selftest checks the approximate one). PTX inside `#if __CUDA_ARCH__ …` stays: the CPU
# build takes the `#else` branch there (strip.cu's ring copies: plain copies instead of cp.async).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
file=$1 out=$2; shift 2
work=$(mktemp -d)
python3 - "$file" > "$work/kernel.cpp" <<'PY'
import os, re, sys
def expand(path, seen):
    out = []
    depth, arch = 0, []  # #if nesting, and the depths of the open `#if __CUDA_ARCH__` blocks (their first branch)
    for line in open(path):
        directive = line.strip()
        if re.match(r'#\s*if', directive):
            depth += 1
            if '__CUDA_ARCH__' in directive:
                arch.append(depth)
        elif re.match(r'#\s*(else|elif)', directive) and arch and arch[-1] == depth:
            arch.pop()
        elif re.match(r'#\s*endif', directive):
            if arch and arch[-1] == depth:
                arch.pop()
            depth -= 1
        m = re.match(r'#include "(.+)"', line)
        if m:
            header = os.path.join(os.path.dirname(path), m.group(1))
            if header not in seen:
                seen.add(header)
                out.append(expand(header, seen))
            continue
        line = line.replace('asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));', 'r = sqrtf(s);')
        line = re.sub(r'asm volatile\("prefetch[^;]*;\s*"[^)]*\)\);', '(void)p;', line)
        if 'asm' in line.split('//')[0] and not arch:
            sys.exit(f"{path}: inline PTX this emulation does not know: {line.strip()}")
        out.append(line)
    return ''.join(out)
print('#include "shim.h"')
print(expand(sys.argv[1], set()))
PY
g++ -O1 -std=c++20 -pthread -w -I"$here" "$@" -include "$work/kernel.cpp" "$here/${DRIVER:-main.cpp}" -o "$out"
rm -rf "$work"
