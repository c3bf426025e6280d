// Random search over the intra-layer space (like Timeloop's random mapper),
// for comparison: uniform samples per level and dim among the blocked sizes.
#pragma once

#include "scheduler/kapla/LayerObjective.h"

namespace dfl::intra {

class RandomSearch : public LayerObjective {
public:
  using LayerObjective::LayerObjective;

  /// Draws plans uniformly per level and dim among the blocked sizes (tile, then
  /// stack factor, then loop order), keeps the best valid one.
  std::optional<IntraLayerSolution> randomSearch(SolveFailure &why);
};

} // namespace dfl::intra
