#!/usr/bin/env bash
# The side-by-side benchmark: dflc on MLP, AlexNet and VGG-16 at batch 64 on
# the multi-node template, per layer and inter-layer, beside KAPLA's and
# nn_dataflow's figures in bench/reference/kapla.json (docs/benchmarks.md).
# Run from the build tree's parent: bench/run_side_by_side.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
python3 "$root/bench/side_by_side.py" --dflc "$build/tools/dflc" "${@:2}"
