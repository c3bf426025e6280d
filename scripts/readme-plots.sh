#!/usr/bin/env bash
# Regenerates the README tour's pictures and excerpts in docs/img/: the plots
# of ResNet-50 on the multi-node Eyeriss-like template, as `dflc compile`
# writes them, why the solver chose its segments (-v), the loop-nest view of
# its first layer, and the diff of the energy-optimal schedule against the
# latency-optimal one.
#
#   scripts/readme-plots.sh [DFLC]     (default: build/tools/dflc)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dflc=$(realpath "${1:-$root/build/tools/dflc}")
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$dflc" stdlib/nets/resnet50.dfl stdlib/hw/eyeriss_multinode.dfl -o "$work/energy" -v > "$work/energy.txt"
"$dflc" stdlib/nets/resnet50.dfl stdlib/hw/eyeriss_multinode.dfl -o "$work/latency" --objective latency > /dev/null
mkdir -p docs/img
cp "$work"/energy/plots/*.svg docs/img/
sed -n '/^segment choices:/,/^wrote /p' "$work/energy.txt" | grep -v '^wrote ' > docs/img/choices-resnet50.txt
"$dflc" show --loops "$work/energy/schedule.dfl" | sed -n '1,/^$/p;/^layer conv1:/,/^$/p' > docs/img/loops-conv1.txt
# exit 0 or 1 both mean "compared"; anything else is an error
# (kept short: the first layers, the totals, the components, the segments and
# the first directives that differ)
{ "$dflc" diff "$work/energy/schedule.dfl" "$work/latency/schedule.dfl" || [ $? -eq 1 ]; } | sed "s|$work/||g" |
  awk 'NR<=9 {print; next} NR==10 {print "..."} /^total/ {p=1} p && n<40 {print; n++}' > docs/img/diff-energy-latency.txt
echo "wrote docs/img/: $(ls docs/img | tr '\n' ' ')"
