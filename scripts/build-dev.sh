#!/usr/bin/env bash
# Builds, on the development machine, everything the GPU machine runs, into .dev/ (ignored by git):
# .dev/cuda_sobel and .dev/tests.tar.xz (each integration-test binary), .dev/kernel-cache.tar.xz (the sm_90
# machine code of every kernel build the GPU tests and the bench ask for, so the GPU machine's minutes go to
# testing, not to NVRTC) and .dev/wheels/ (the Python package, and the peers the GPU machine lacks:
# kornia, and Dask in .dev/wheels/dask). The GPU machine has no Rust and no internet; all of this runs there unchanged. Then, through the
# device tool:
#   run(carry: [".dev"], command: "bash scripts/gpu-check.sh")
# NVRTC_DIR: where the nvidia-cuda-nvrtc wheel is (as .ci/run installs it); PYTHON: a Python with maturin.
set -euo pipefail
cd "$(dirname "$0")/.."
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.dev/' "$exclude" 2>/dev/null || echo '/.dev/' >> "$exclude"
cargo build --release
# Where cargo puts its outputs: CARGO_TARGET_DIR (or a config's build.target-dir) moves the target folder.
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
rm -rf .dev && mkdir -p .dev
# Stripped: with debug info the binaries are ~30 MB each, over the device tool's 64 MiB carry limit.
strip -o .dev/cuda_sobel "$target/release/cuda_sobel"
# Lines like "  Executable tests/gpu.rs (target/release/deps/gpu-<hash>)"; the unit tests need no GPU.
# Packed: the stripped test binaries are ~55 MB, and everything carried must fit 64 MiB (gpu-check.sh unpacks).
tests=$(mktemp -d)
cargo test --release --no-run 2>&1 | sed -n 's/^ *Executable \(tests\/[^ ]*\)\.rs (\(.*\))$/\1 \2/p' | while read -r src exe; do
  strip -o "$tests/$(basename "$src")" "$exe"
done
tar -C "$tests" -cJf .dev/tests.tar.xz . && rm -rf "$tests"
# The kernel cache: NVRTC needs no GPU. Entries are keyed by source and options, so a rebuild after a change
# compiles only what changed.
NVRTC_DIR=${NVRTC_DIR:-$PWD/target/nvrtc}
cache="$target/kernel-cache"
LD_LIBRARY_PATH="$NVRTC_DIR/nvidia/cu13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" CUDA_SOBEL_CACHE="$cache" \
  cargo run --release --quiet --example fill_kernel_cache
tar -C "$cache" -cJf .dev/kernel-cache.tar.xz .
# The Python package as an abi3 wheel (the GPU machine's Python is 3.12), and kornia for the peer benchmark.
PYTHON=${PYTHON:-$PWD/target/pyenv/bin/python}
mkdir -p .dev/wheels
"$PYTHON" -m maturin build --quiet --release --locked -m python/Cargo.toml -o .dev/wheels
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 -d .dev/wheels \
  kornia==0.8.1 kornia_rs==0.1.9 || echo "build-dev: no kornia wheels (offline?); the kornia rows will be skipped"
# Dask for bench/scale-out.sh and test_dask.py there (the GPU machine has none): distributed and what it imports.
mkdir -p .dev/wheels/dask
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 -d .dev/wheels/dask \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --platform any \
  dask==2026.8.0 distributed==2026.8.0 cloudpickle==3.1.3 toolz==1.2.0 partd==1.4.2 locket==1.0.0 tblib==3.2.2 \
  zict==3.0.0 msgpack==1.2.4 psutil==7.2.2 sortedcontainers==2.4.0 tornado==6.6.1 PyYAML==6.0.4 fsspec==2026.9.0 \
  click==8.5.1 Jinja2==3.1.6 MarkupSafe==3.0.4 importlib_metadata==10.2.0 zipp==4.1.2 urllib3==2.8.0 ||
  echo "build-dev: no Dask wheels (offline?); the Dask runs will be skipped there"
du -sh .dev/cuda_sobel .dev/tests.tar.xz .dev/kernel-cache.tar.xz .dev/wheels
du -sh .dev
