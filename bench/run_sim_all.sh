#!/usr/bin/env bash
# Simulates every stdlib network at batch 1 on every stdlib template with the
# KAPLA solver's schedule (`dflc NET HW --batch 1 -o OUT --sim`), and prints
# one line per run — exit status, wall time, verdict — then the count
# statistics over all of them (bench/sim_stats.py).
# Run from the source tree: bench/run_sim_all.sh [BUILD_DIR]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for hw in "$root"/stdlib/hw/*.dfl; do
  for net in "$root"/stdlib/nets/*.dfl; do
    n="$(basename "$net" .dfl)"; h="$(basename "$hw" .dfl)"
    start=$(date +%s.%N)
    "$build/tools/dflc" "$net" "$hw" --batch 1 -o "$tmp/${n}_$h" --sim > "$tmp/${n}_$h.log" 2>&1
    rc=$?
    printf '%-14s %-24s exit %d %7.1f s  %s\n' "$n" "$h" "$rc" "$(awk "BEGIN { print $(date +%s.%N) - $start }")" \
      "$(grep 'layers simulated' "$tmp/${n}_$h.log")"
  done
done
python3 "$root/bench/sim_stats.py" "$tmp"/*/sim.json
