#include "scheduler/kapla/RandomSearch.h"

#include <limits>
#include <random>

namespace dfl::intra {

std::optional<IntraLayerSolution> RandomSearch::randomSearch(SolveFailure &why) {
  std::mt19937_64 rng(options_.seed + static_cast<uint64_t>(layerIndex_) * 7919);
  std::optional<IntraLayerSolution> best;
  std::optional<Plan> lastInvalid;   // the last sample the analysis refused: its rule names the failure
  double bestValue = std::numeric_limits<double>::infinity();
  int64_t samples = options_.maxCandidates > 0 ? options_.maxCandidates : 2000;
  decided_ = hw_.levels.size();
  for (int64_t k = 0; k < samples && !stopping(); ++k) {
    Plan p = initialPlan();
    bool ok = true;
    for (size_t l = 0; l < p.levels.size() && ok; ++l) {
      if (fixedLevel(l)) {
        if (l > 0)
          for (size_t i = 0; i < kND; ++i)
            p.levels[l].tile[i] = unitBelow(p, l, i);
        absorbFixed(p, l);
        continue;
      }
      auto &lp = p.levels[l];
      for (size_t i = 0; i < kND; ++i) {
        int64_t unit = unitBelow(p, l, i);
        std::vector<std::pair<int64_t, int64_t>> choices;
        const int64_t whole = limit(l, i);
        // Tiles and array tiles among the blocked sizes; an array tile that is
        // not a multiple of the tile is the whole, over-covered by a partial stacked tile.
        const std::vector<int64_t> &sizes = blockedSizes(unit, whole);
        // At the intrinsic's level the stack factor is the unit's (initialRepl):
        // any tile it stacks over the whole, a partial last call allowed.
        if (const int64_t unitRepl = initialRepl(l, i); unitRepl > 1) {
          for (int64_t t : sizes)
            if ((!forcedAt(l, i) || t == forcedTile(l, i)) && covers(t, unitRepl, whole))
              choices.emplace_back(t, unitRepl);
        } else {
          for (int64_t t : sizes)
            if (!forcedAt(l, i) || t == forcedTile(l, i))
              for (int64_t a : sizes) {
                int64_t r = a % t == 0 ? a / t : a == whole && a > t ? replFor(whole, t) : 0;
                if (r && !stackBarred(l, i, r))
                  choices.emplace_back(t, r);
              }
        }
        if (choices.empty()) {
          ok = false;
          break;
        }
        auto [t, r] = choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
        lp.tile[i] = t;
        lp.repl[i] = r;
      }
      if (!ok)
        break;
      lp.order = std::uniform_int_distribution<size_t>(0, loopOrders().size() - 1)(rng);
      ok = arrayFits(p, l) && fits(p, l);
    }
    if (!ok) {
      ++stats_.candidates;
      ++stats_.rejected;
      if (budget_)
        budget_->scored();
      continue;
    }
    if (auto sol = score(p)) {
      double v = objectiveValue(options_.objective, sol->result.energyPj, sol->result.latencyCycles);
      if (v < bestValue) {
        bestValue = v;
        best = std::move(sol);
      }
    } else {
      lastInvalid = std::move(p);
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
