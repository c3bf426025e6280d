// Placement of a tile graph onto the cores of a computational-memory chip
// (docs/cm.md), a constraint model solved with Gecode's branch and bound:
// every tile on its own core (injective), every edge on a route of the
// interconnect (its endpoints' cores connected, at their shortest distance),
// minimizing the words moved x hops per image (or, as a choice, the longest
// route any edge takes). The search stops at a node or failure limit (work,
// so the result is the same on any machine and load) and then reports the gap
// to a lower bound: every edge at its shortest possible distance (the
// objective's bound after root propagation). A model too large to search
// within the memory bound (edges x cores^2 table entries, docs/limits.md) is
// placed greedily instead: the search's first placement, without the search.
//
// Before: a partitioning (CmPartition.h) of no more tiles than cores. After:
// the cores, or a status saying why not.
#pragma once

#include "model/CmHardware.h"
#include "scheduler/placement/CmPartition.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

enum class CmObjective { Traffic, LongestRoute };
const char *cmObjectiveName(CmObjective o);

struct CmPlacementOptions {
  CmObjective objective = CmObjective::Traffic;
  /// The search's work (docs/limits.md); the placement is the best found
  /// within it, the same on any machine.
  uint64_t nodeLimit = 100'000, failureLimit = 50'000;
  /// Nodes x the model's table entries (each node propagates over them): the
  /// node limit is at most this over the entries, which bounds the time.
  uint64_t workLimit = 2'000'000'000;
  /// The exact model's size: its `element` tables hold edges x cores^2
  /// entries; above this many the placement is greedy (bounded memory).
  int64_t exactModelEntries = int64_t{1} << 24;
  /// A wall-clock limit only where the user gives one (`--time-limit`).
  std::optional<std::chrono::milliseconds> timeLimit;
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
  /// Greedy: the model's entries were above exactModelEntries, so no search
  /// ran (lowerBound is every edge at its shortest possible distance).
  bool greedy = false;
  int64_t modelEntries = 0;
  uint64_t nodeLimit = 0;   // the searches' (CmPlacementOptions' node and work limits)
  /// The user's wall-clock limit stopped the search (else a work limit did).
  bool timeLimitHit = false;
  /// Infeasible: the first edge (index into the partitioning's edges) whose
  /// route cannot be added to those before it; -1 if the reason is not one edge.
  int blockingEdge = -1;

  /// (cost - lowerBound) / cost: 0 when optimal.
  double gap() const { return cost > 0 ? static_cast<double>(cost - lowerBound) / static_cast<double>(cost) : 0; }
};
const char *cmPlacementStatusName(CmPlacement::Status s);

CmPlacement placeOnCores(const CmPartitioning &p, const CmHardware &hw, const CmPlacementOptions &options = {});

} // namespace dfl
