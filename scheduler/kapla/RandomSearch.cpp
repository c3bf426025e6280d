#include "scheduler/kapla/RandomSearch.h"

#include <limits>

namespace dfl::intra {

std::optional<IntraLayerSolution> RandomSearch::randomSearch(SolveFailure &why) {
  std::mt19937_64 rng(options_.seed + static_cast<uint64_t>(layerIndex_) * 7919);
  std::optional<IntraLayerSolution> best;
  std::optional<Plan> lastInvalid;   // the last sample the analysis refused: its rule names the failure
  double bestValue = std::numeric_limits<double>::infinity();
  int64_t samples = options_.maxCandidates > 0 ? options_.maxCandidates : 2000;
  decided_ = hw_.levels.size();
  for (int64_t k = 0; k < samples && !stopping(); ++k) {
    std::optional<Plan> p = drawPlan(rng);
    if (!p) {
      ++stats_.candidates;
      ++stats_.rejected;
      if (budget_)
        budget_->scored();
      continue;
    }
    if (auto sol = score(*p)) {
      double v = objectiveValue(options_.objective, sol->result.energyPj, sol->result.latencyCycles);
      if (v < bestValue) {
        bestValue = v;
        best = std::move(sol);
      }
    } else {
      lastInvalid = std::move(*p);
    }
  }
  if (!best && !stopped_) {
    // Named as KAPLA's descent names it (docs/solver.md, "Failures are
    // values"): the smallest completion does not fit a level, else the rule
    // the last refused sample breaks (the smallest completion's when every
    // sample was refused before the analysis), at the directive that forced it.
    std::optional<Plan> smallest = smallestCompletion(why);
    if (!smallest)
      return best;
    why = failure(SolveFailure::Reason::NoneAmongSamples);
    why.samples = samples;
    if (lastInvalid)
      explain(*lastInvalid, why);
    if (why.constraint.empty())
      explain(*smallest, why);
  }
  return best;
}

} // namespace dfl::intra
