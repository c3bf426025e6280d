#!/usr/bin/env bash
# Issue 20's scaling cases, timed (user CPU seconds, so a loaded machine
# changes them less than wall time): `dflc show` and `dflc check` on generated
# chains of 10,000 / 40,000 / 100,000 layers, and solves whose values are huge
# (a batch of 2^31, a dim of 2^31 - 1) with every solver. The results go in
# docs/benchmarks.md, "Work that scales with structure". Usage:
#   bench/run_scale_bench.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
dflc="$build/tools/dflc"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
inputs="$root/tests/lit/scale/Inputs"

# Prints "<user s>  <what>  exit N" for one command (its output discarded).
timed() {
  local what="$1" status=0
  shift
  /usr/bin/time -f "%U" -o "$tmp/time" "$@" > /dev/null 2>&1 || status=$?
  printf "%8.2f s  %s  exit %d\n" "$(tail -1 "$tmp/time")" "$what" "$status"
}

for n in 10000 40000 100000; do
  python3 "$root/tests/lit/scale/gen_chain.py" "$n" > "$tmp/chain$n.dfl"
  python3 "$root/tests/lit/scale/gen_chain.py" "$n" --schedule edge_systolic > "$tmp/sched$n.dfl"
  timed "show, $n layers" "$dflc" show "$tmp/chain$n.dfl"
  timed "check --allow-partial, $n layers" "$dflc" check --allow-partial -I "$root" "$tmp/sched$n.dfl"
done

for hw in edge_systolic eyeriss_multinode; do
  for solver in kapla exhaustive random; do
    timed "compile small_fc --batch 2^31 on $hw, --solver $solver" \
      "$dflc" "$inputs/small_fc.dfl" "$root/stdlib/hw/$hw.dfl" -o "$tmp/out" --batch 2147483648 --solver "$solver"
    timed "compile huge_dim (C = 2^31 - 1) on $hw, --solver $solver" \
      "$dflc" "$inputs/huge_dim.dfl" "$root/stdlib/hw/$hw.dfl" -o "$tmp/out" --solver "$solver"
  done
done
