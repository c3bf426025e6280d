#!/usr/bin/env bash
# ResNet-20 (CIFAR-10) on the stdlib computational-memory template, simulated
# cycle by cycle (`dflc sim`, docs/cm.md "ResNet-20 on cm_pcm_8x8") at
# several batches in one run: per batch the pipeline's cycles, fill, steady
# state, mean core utilization, layer by layer on the same chip, and whether
# the run was bit-exact with no RAW/WAR violation; then the wall time.
# Run from the source tree: bench/cm_resnet20.sh [BUILD_DIR] [BATCH...]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
shift || true
batches=("${@:-1 2 8}")
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '%-6s %10s %9s %12s %10s %8s %14s %8s %5s %8s\n' batch cycles fill cycles/img images/s util lbl-cycles/img speedup ok wall-s
for n in ${batches[*]}; do
  start=$(date +%s.%N)
  "$build/tools/dflc" sim "$root/stdlib/nets/resnet20.dfl" "$root/stdlib/hw/cm_pcm_8x8.dfl" --batch "$n" \
    -o "$tmp/b$n" > "$tmp/b$n.log" 2>&1
  wall=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")
  python3 - "$tmp/b$n/sim.json" "$n" "$wall" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
cores = [c for c in j["cores"] if c["core"] >= 0]
util = sum(c["utilization"] for c in cores) / len(cores)
print("%-6s %10d %9d %12.1f %10.0f %7.1f%% %14.1f %7.2fx %5s %8s" % (
    sys.argv[2], j["cycles"], j["fill_cycles"], j["cycles_per_image"], j["images_per_second"] or 0, 100 * util,
    j["layer_by_layer"]["cycles_per_image"], j["speedup_over_layer_by_layer"], "yes" if j["ok"] else "NO", sys.argv[3]))
PY
done
