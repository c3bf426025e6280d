#!/bin/sh
# GraphTurbo against the TVM-like and AStitch-like baselines on the stdlib DSA
# template (docs/graphturbo.md has the latest table). The batches are the
# paper's Table 2 where it has the model; add a model as NET.dfl:BATCH.
# Usage: bench/run_graphturbo_bench.sh [BUILD_DIR]
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
nets=$root/stdlib/nets
exec "$build/bench/dflc_graphturbo_bench" "$root/stdlib/hw/dsa_4x8.dfl" \
  "$nets/resnet50.dfl:64" \
  "$nets/mobilenet_v2.dfl:128" \
  "$nets/bert_base.dfl:32" \
  "$nets/bert_base_256.dfl:16" \
  "$nets/bert_base_384.dfl:8" \
  "$nets/bert_base_512.dfl:8" \
  "$nets/vit_b16.dfl:32" \
  "$nets/densenet121.dfl:32" \
  "$nets/googlenet.dfl:32" \
  "$nets/resnet20.dfl:64"
