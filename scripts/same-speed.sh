#!/usr/bin/env bash
# Same speed? Runs the bench with a previous build and this one, alternately, in one lease, and keeps both
# results.md files: `bash scripts/same-speed.sh OLD_BINARY NEW_BINARY OUT_DIR [bench flags…]`.
set -euo pipefail
old=$1 new=$2 out=$3
shift 3
mkdir -p "$out"
for round in 1 2; do
  for which in old new; do
    bin=$old; [ "$which" = new ] && bin=$new
    "$bin" bench --out "/tmp/same-speed-$which-$round" "$@" > "/tmp/same-speed-$which-$round.log" 2>&1
    cp "/tmp/same-speed-$which-$round/results.md" "$out/$which-$round.md"
  done
done
ls "$out"
