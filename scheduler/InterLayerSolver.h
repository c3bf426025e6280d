// KAPLA's inter-layer solver (paper §IV-B): segment slicing and layer
// pipelining over the topological order.
//
// Before: a complete, valid schedule with every layer solved alone on all
// nodes and no segments (the layer-wise solution) and its analysis. After: the
// best schedule found among (a) that one, (b) the best chain of temporal
// segments and (c) the top-k segment chains of a DP over estimated segment
// costs, where a segment is a single layer, a temporal segment (exact cost) or
// a spatially pipelined segment (node regions in proportion to work, a matched
// forwarding granularity at the top level; cost estimated by a lower bound,
// after a conservative validity check). The short list is then solved for
// real — the intra-layer solver on each spatial segment's layers, constrained
// to its region and granularity — and scored by the same analysis `dflc check`
// runs; the best valid chain by the objective wins. Runs inside the Solver.
#pragma once

#include "Analysis.h"
#include "IntraLayerSolver.h"

#include <optional>
#include <vector>

namespace dfl {

struct InterLayerOptions {
  Objective objective = Objective::Energy;
  IntraLayerOptions intra;   // for the layers of spatial segments
  size_t topK = 4;           // segment chains kept by the DP
  bool prune = true;         // conservative and lower-bound pruning (off: tests compare)
  size_t maxSpatial = 4;     // layers per spatial segment
  size_t maxTemporal = 8;    // layers per temporal segment
  std::vector<bool> fixedLayers;   // per layer: the user wrote directives for it (never re-solved)
};

struct InterLayerStats {
  int64_t candidates = 0;      // spatial segment candidates (segment x granularity)
  int64_t prunedInvalid = 0;   // by the conservative validity check
  int64_t prunedBound = 0;     // by the lower bound (no better than the exact alternative)
  int64_t chains = 0;          // chains solved for real
  int64_t segmentsSolved = 0;  // spatial segments solved by the intra-layer solver
  IntraLayerStats intra;       // the intra-layer solves of spatial segments
  double estimateSeconds = 0, shortListSeconds = 0;
};

/// A spatially pipelined segment: layers first..last (network order), the
/// nodes each may use, the batch tile every layer's top-level tile has.
struct SpatialSegment {
  int first = 0, last = 0;
  std::vector<int64_t> nodes;   // per layer of the segment
  int64_t batchTile = 1;
};

class InterLayerSolver {
public:
  InterLayerSolver(const Model &model, const Schedule &layerwise, const ScheduleResult &layerwiseResult,
                   const InterLayerOptions &options);

  /// The chosen schedule (never worse by the objective than `layerwise`).
  std::pair<Schedule, ScheduleResult> solve(InterLayerStats &stats);

  /// Node regions in proportion to the layers' work (each at least one node);
  /// empty if the segment has more layers than there are nodes.
  std::vector<int64_t> allocateNodes(int first, int last) const;
  /// The forwarding granularities (batch tiles) tried for a segment.
  std::vector<int64_t> batchTiles() const;
  /// Conservative check: false only if no schedule of the segment's layers
  /// with these regions and this granularity is valid.
  bool mayFit(const SpatialSegment &s) const;
  /// Optimistic energy of the segment: never above what analysis charges it.
  double lowerBoundPj(int first, int last) const;
  /// The segment solved for real (its layers' schedules, in the layer-wise
  /// schedule's context): nullopt if the intra-layer solver finds no valid one.
  std::optional<std::pair<Schedule, ScheduleResult>> solveSpatial(const SpatialSegment &s, InterLayerStats &stats);
  /// solveSpatial over the given granularities: the best by the objective.
  std::optional<std::pair<Schedule, ScheduleResult>> solveSpatialBest(int first, int last,
                                                                      const std::vector<int64_t> &nodes,
                                                                      const std::vector<int64_t> &tiles,
                                                                      InterLayerStats &stats);

private:
  const Model &model_;
  const Schedule &base_;
  const ScheduleResult &baseResult_;
  InterLayerOptions options_;
};

} // namespace dfl
