#!/usr/bin/env bash
# Builds, on the development machine, everything the GPU machine runs, into .dev/ (ignored by git):
# .dev/cuda_sobel and .dev/tests/<name> (each integration-test binary). The GPU machine has no Rust;
# these binaries run there unchanged. Then, through the device tool:
#   run(carry: [".dev"], command: "bash scripts/gpu-check.sh")
set -euo pipefail
cd "$(dirname "$0")/.."
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.dev/' "$exclude" 2>/dev/null || echo '/.dev/' >> "$exclude"
cargo build --release
# Where cargo puts its outputs: CARGO_TARGET_DIR (or a config's build.target-dir) moves the target folder.
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
rm -rf .dev && mkdir -p .dev/tests
# Stripped: with debug info the binaries are ~30 MB each, over the device tool's 64 MiB carry limit.
strip -o .dev/cuda_sobel "$target/release/cuda_sobel"
# Lines like "  Executable tests/gpu.rs (target/release/deps/gpu-<hash>)"; the unit tests need no GPU.
cargo test --release --no-run 2>&1 | sed -n 's/^ *Executable \(tests\/[^ ]*\)\.rs (\(.*\))$/\1 \2/p' | while read -r src exe; do
  strip -o ".dev/tests/$(basename "$src")" "$exe"
done
du -sh .dev/cuda_sobel .dev/tests/*
