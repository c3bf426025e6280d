// Random search over the intra-layer space (like Timeloop's random mapper),
// for comparison: per level and dim, uniform samples among the blocked sizes
// that keep the level within its buffers and units.
#pragma once

#include "scheduler/kapla/LayerObjective.h"

namespace dfl::intra {

class RandomSearch : public LayerObjective {
public:
  using LayerObjective::LayerObjective;

  /// Draws plans (TilingSpace::drawPlan), keeps the best valid one.
  std::optional<IntraLayerSolution> randomSearch(SolveFailure &why);

};

} // namespace dfl::intra
