#!/usr/bin/env bash
# Embeds every DeepBench inference-server convolution into the stdlib's GEMM
# intrinsics (the 1x16x16 and the 8x8x8) and prints the table of
# docs/benchmarks.md, "Intrinsic embedding"; the summary per intrinsic goes
# to stderr. Run: bench/run_embed_bench.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
"$build/bench/dflc_embed_bench" "$root/bench/data/deepbench_conv_inference_server.csv" "$root/stdlib/hw/intrinsics/gemm_dot.dfl"
