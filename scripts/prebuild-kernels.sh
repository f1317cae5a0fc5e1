#!/usr/bin/env bash
# Regenerates kernels/sm_90/ (CUBIN of every edge kernel file for H100/H200, embedded in the binary) after a
# change to cuda/*.cu or the compile options. Needs NVRTC 13.0 (as CI installs it: target/nvrtc, or
# NVRTC_DIR), not a GPU. tests/kernels.rs fails until this has been run.
set -euo pipefail
cd "$(dirname "$0")/.."
NVRTC_DIR=${NVRTC_DIR:-$PWD/target/nvrtc}
if [ ! -e "$NVRTC_DIR/nvidia/cu13/lib/libnvrtc.so.13" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --target "$NVRTC_DIR" nvidia-cuda-nvrtc==13.0.88
fi
LD_LIBRARY_PATH="$NVRTC_DIR/nvidia/cu13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  cargo run --release --quiet --example prebuild_kernels
