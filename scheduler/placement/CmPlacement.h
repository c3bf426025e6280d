// Placement of a tile graph onto the cores of a computational-memory chip
// (docs/cm.md), a constraint model solved with Gecode's branch and bound:
// every tile on its own core (injective), every edge on a route of the
// interconnect (its endpoints' cores connected, at their shortest distance),
// minimizing the words moved x hops per image (or, as a choice, the longest
// route any edge takes). The search stops at a time or node limit and then
// reports the gap to a lower bound: every edge at its shortest possible
// distance (the objective's bound after root propagation).
//
// Before: a partitioning (CmPartition.h) of no more tiles than cores. After:
// the cores, or a status saying why not.
#pragma once

#include "model/CmHardware.h"
#include "scheduler/placement/CmPartition.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dfl {

enum class CmObjective { Traffic, LongestRoute };
const char *cmObjectiveName(CmObjective o);

struct CmPlacementOptions {
  CmObjective objective = CmObjective::Traffic;
  std::chrono::milliseconds timeLimit{2000};
  uint64_t nodeLimit = 2'000'000;
};

struct CmPlacement {
  /// Optimal: proven. Feasible: a limit stopped the proof; `lowerBound` holds.
  /// NoneWithinLimit: no placement found before a limit. Infeasible: proven none.
  enum class Status { Optimal, Feasible, NoneWithinLimit, Infeasible };
  Status status = Status::Infeasible;
  std::vector<int> core;         // per tile
  int64_t cost = 0;              // the objective
  int64_t trafficHops = 0;       // words x hops per image, whatever the objective
  int64_t longestRoute = 0;      // hops of the longest edge route
  int64_t lowerBound = 0;        // of the objective
  uint64_t nodes = 0, failures = 0;
  double seconds = 0;
  /// Infeasible: the first edge (index into the partitioning's edges) whose
  /// route cannot be added to those before it; -1 if the reason is not one edge.
  int blockingEdge = -1;

  /// (cost - lowerBound) / cost: 0 when optimal.
  double gap() const { return cost > 0 ? static_cast<double>(cost - lowerBound) / static_cast<double>(cost) : 0; }
};
const char *cmPlacementStatusName(CmPlacement::Status s);

CmPlacement placeOnCores(const CmPartitioning &p, const CmHardware &hw, const CmPlacementOptions &options = {});

} // namespace dfl
