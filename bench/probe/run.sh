#!/usr/bin/env bash
# Builds and runs bench/probe/probe.cu on the GPU machine (see the header of probe.cu).
#   bash bench/probe/run.sh                 every candidate at 2048×1024, 7680×4320, 16384²
#   bash bench/probe/run.sh 15 " strip min4 |floor_rw"
#   PROBE_FLAGS=-DSTRIP_PREFETCH=2 bash bench/probe/run.sh 6 " strip min4 "   (gpu-strip with another setting)
set -euo pipefail
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
# shellcheck disable=SC2086
nvcc -arch=sm_90 -O3 -std=c++17 ${PROBE_FLAGS:-} -o "${TMPDIR:-/tmp}/cuda_sobel_probe" probe.cu
"${TMPDIR:-/tmp}/cuda_sobel_probe" "${1:-7}" "${2:-}"
