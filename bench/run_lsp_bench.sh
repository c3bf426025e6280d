#!/usr/bin/env bash
# The LSP latency table of docs/lsp.md: ResNet-50 with a complete schedule
# (written by the solver), edited through `dflc lsp` over stdio.
# Usage: bench/run_lsp_bench.sh [BUILD_DIR] [EDITS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/tools/dflc" stdlib/nets/resnet50.dfl stdlib/hw/eyeriss_multinode.dfl -o "$out" > /dev/null
node bench/lsp_latency.js "$build/tools/dflc" "$out/schedule.dfl" "${2:-50}"
