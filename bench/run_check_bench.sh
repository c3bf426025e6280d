#!/usr/bin/env bash
# Makes a complete (naive) schedule of every stdlib network on the multi-node
# template, then times `dflc check`'s stages on them. Run from the build tree's
# parent: bench/run_check_bench.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for net in "$root"/stdlib/nets/*.dfl; do
  name="$(basename "$net" .dfl)"
  python3 "$root/bench/naive_schedule.py" "$build/tools/dflc" "$net" "$root/stdlib/hw/eyeriss_multinode.dfl" \
    > "$tmp/$name-naive.dfl"
done
"$build/bench/dflc_check_bench" "$tmp"/*-naive.dfl
