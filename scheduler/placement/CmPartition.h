// Partitioning and crossbar tiling for a computational-memory chip
// (docs/cm.md; "Compiling Neural Networks for a Computational Memory
// Accelerator", §3.1).
//
// Partitioning: in topological order, every crossbar layer (conv, depthwise
// conv, fc: a layer with weights) opens a partition; every other layer (an
// add, a pool, a concat, with its fused activations) joins the latest
// partition among its producers', so every partition edge runs from a lower
// to a higher partition index and the partition graph has no cycle. A DPU
// layer that reads only network inputs opens a DPU-only partition.
//
// Tiling: a crossbar layer is the matrix-vector product of a C*R*S x K weight
// matrix (fc: C*X*Y x K; grouped convs block-diagonal) with one input vector
// per output pixel (Xo*Yo per image). A matrix larger than the crossbar is cut
// into ceil(rows / crossbar rows) x ceil(K / crossbar columns) tiles, one core
// each; tile (r, c) sends its partial sums to tile (0, c), whose DPU adds them
// and runs the partition's DPU layers on output channel block c.
//
// Before: an analyzed network and CM hardware. After: the partitions, their
// tiles and the tile graph with words per image on every edge, or
// diagnostics (E1104: a layer the crossbar cannot compute; E1105: a DPU
// operation the hardware does not list).
#pragma once

#include "model/CmHardware.h"
#include "model/Network.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace dfl {

struct CmPartition {
  int crossbarLayer = -1;             // -1: a DPU-only partition
  std::vector<int> layers;            // in topological order, crossbar layer first
  std::vector<std::string> dpuOps;    // the DPU operations it runs, in order, without repeats
  int64_t rows = 0, cols = 0;         // weight matrix (0 x 0: DPU only)
  int64_t rowTiles = 1, colTiles = 1;
  int64_t vectors = 0;                // MxVs per image (output pixels)
  int firstTile = 0;                  // its tiles are firstTile .. firstTile + rowTiles*colTiles - 1
  int64_t tiles() const { return rowTiles * colTiles; }
};

struct CmTile {
  int partition = 0;
  int64_t rowBlock = 0, colBlock = 0;
  int64_t rowBegin = 0, rowEnd = 0, colBegin = 0, colEnd = 0;   // its part of the matrix
};

/// An edge of the tile graph: activations (or partial sums) moved per image.
struct CmEdge {
  static constexpr int kGcuInput = -1, kGcuOutput = -2;
  int from = 0, to = 0;   // tiles, or kGcuInput / kGcuOutput
  int64_t words = 0;
  bool partialSums = false;
};

struct CmPartitioning {
  std::vector<CmPartition> partitions;
  std::vector<CmTile> tiles;
  std::vector<CmEdge> edges;   // one per (from, to, kind), words summed
};

/// The partitions, tiles and tile graph of `net` on `hw`; nullopt after
/// reporting E1104 or E1105.
std::optional<CmPartitioning> partitionForCm(const Network &net, const CmHardware &hw, DiagnosticsEngine &diags);

} // namespace dfl
