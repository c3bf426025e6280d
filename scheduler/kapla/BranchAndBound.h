// The exhaustive yardstick: branch and bound over the whole intra-layer
// space, top-down, seeded with KAPLA's descent (docs/solver.md, "The
// exhaustive yardstick").
//
// The space is the one the bottom-up enumeration had: per free level l and
// dim, a tile t_l and an array tile a_l = t_l * r_l with a_{l-1} | t_l | a_l,
// a_l dividing the enclosing tile (t_{l+1}; the layer bound, or the forced
// forwarding tile, at the top) and limit(l), t_top = forced where forced; every
// loop order; a fixed level as absorbFixed reads it. Bottom-up asked
// a_{l-1} | t_l, t_l | limit, a_l | limit; "a_l divides t_{l+1}" is the
// level above's a_l | t_{l+1}, and t_l | a_l | limit, so both describe the
// same chains of divisors. Both prune only what cannot complete (occupancy
// grows with every tile, the units with every stack factor) and check
// arrayFits and fits on each whole level, so the same complete plans reach
// score(). Loop orders giving the same updates are scored once (same directives).
//
// The bound (objective energy): the energy is the MACs and their level-0
// accesses (constants) plus one term per boundary l/l+1
// (LevelResult::boundaryEnergyPj), each >= 0 and a function of the directives
// of levels >= l only (checked on stdlib layers by tests/unit/BoundTest.cpp).
// With levels >= m decided and the levels below at their minimal completion
// (tile = the array tile below, no stacks: valid whenever any completion is),
// the analysis scores the constants and the terms b >= m exactly, so the
// energy less the terms b < m bounds every completion from below. A subtree
// whose bound is not below the incumbent (seeded with KAPLA's solution) is cut.
#pragma once

#include "scheduler/kapla/KaplaDescent.h"

#include <optional>
#include <vector>

namespace dfl::intra {

class BranchAndBound : public KaplaDescent {
public:
  using KaplaDescent::KaplaDescent;

  /// The best plan of the space (proved optimal unless capped or stopped:
  /// IntraLayerStats::provedOptimal), seeded with KAPLA's (seedWithKapla).
  std::optional<IntraLayerSolution> exhaustive(SolveFailure &why);

protected:
  struct Branch {
    Plan::LevelPlan level;
    double bound;
  };

  /// One level's scored candidates not yet expanded.
  struct Batch {
    std::vector<Branch> pending;
    size_t scored = 0;
  };

  /// A level's candidates are expanded best first in batches of this many
  /// scored: bounded memory on levels with millions, and under a cap the
  /// search reaches complete plans early instead of only scoring the top level.
  static constexpr size_t kBatch = 4096;

  /// The per-layer cap (maxCandidates) is reached, or the solve budget says stop.
  bool exhausted();

  /// Decides the highest free level at or below m, best bound first; levels
  /// above m are decided, those below hold the minimal completion.
  void branch(Plan &p, size_t m);

  /// Every (tile, stack factor) of level m along dims >= dim, the dims after
  /// `dim` at their smallest; prunes only partial levels that cannot fit.
  void enumerateLevel(Plan &p, size_t m, size_t dim, bool leaf, Batch &batch);

  /// Scores level m's assignment under each loop order with distinct updates:
  /// on the lowest free level the plan is complete (offered as a solution);
  /// above, the score is the subtree's bound.
  void scoreOrders(Plan &p, size_t m, bool leaf, Batch &batch);

  /// Recurses into the pending candidates of level m, lowest bound first, until
  /// the bound reaches the incumbent.
  void expand(Plan &p, size_t m, Batch &batch);

  /// A complete valid plan: the new incumbent if better. A negative boundary
  /// term would break the bound's premise: the search then claims nothing.
  void offer(IntraLayerSolution sol);

  std::optional<IntraLayerSolution> exBest_;   // exhaustive: the incumbent
  double exBestValue_ = 0;
  bool pruneByBound_ = false;   // exhaustive, objective energy
  bool boundSafe_ = true;       // no boundary term seen negative
};

} // namespace dfl::intra
