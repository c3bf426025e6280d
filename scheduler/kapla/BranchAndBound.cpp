#include "scheduler/kapla/BranchAndBound.h"

#include <algorithm>
#include <limits>

namespace dfl::intra {

std::optional<IntraLayerSolution> BranchAndBound::exhaustive(SolveFailure &why) {
  pruneByBound_ = options_.objective == Objective::Energy;
  exBest_.reset();
  exBestValue_ = std::numeric_limits<double>::infinity();
  if (options_.seedWithKapla) {
    SolveFailure ignored;
    if (auto seed = kaplaSearch(ignored))
      offer(std::move(*seed));
  }
  Plan p = minimalPlan();
  branch(p, p.levels.size() - 1);
  stats_.provedOptimal = !stats_.capped && boundSafe_ && !stopped_;
  if (!exBest_) {
    bool allGiven = std::all_of(p.levels.begin(), p.levels.end(), [](const Plan::LevelPlan &lp) { return lp.fixed; });
    why = failure(allGiven ? SolveFailure::Reason::GivenInvalid : SolveFailure::Reason::NoneFound);
    explain(p, why);   // the rule the smallest completion breaks
    if (allGiven && given_)
      why.directive = given_->range;
  }
  return std::move(exBest_);
}

bool BranchAndBound::exhausted() {
  if (options_.maxCandidates > 0 && stats_.candidates - firstCandidate_ >= options_.maxCandidates) {
    stats_.capped = true;
    return true;
  }
  return stopping();
}

void BranchAndBound::branch(Plan &p, size_t m) {
  while (m < p.levels.size() && p.levels[m].fixed)
    --m;   // wraps below level 0
  if (m >= p.levels.size()) {   // nothing to choose
    if (auto sol = score(p))
      offer(std::move(*sol));
    return;
  }
  bool leaf = true;
  for (size_t l = 0; l < m; ++l)
    leaf = leaf && p.levels[l].fixed;
  const Plan::LevelPlan saved = p.levels[m];
  Batch batch;
  enumerateLevel(p, m, 0, leaf, batch);
  expand(p, m, batch);
  p.levels[m] = saved;
}

void BranchAndBound::enumerateLevel(Plan &p, size_t m, size_t dim, bool leaf, Batch &batch) {
  if (exhausted())
    return;
  if (dim == kND) {
    if (arrayFits(p, m) && fits(p, m))
      scoreOrders(p, m, leaf, batch);
    return;
  }
  auto &lp = p.levels[m];
  const int64_t unit = unitBelow(p, m, dim);
  const int64_t enclosing = enclosingTile(p, m, dim);
  // Array tiles and tiles among the blocked sizes of the enclosing tile; the
  // array tile a multiple of the tile, or the whole enclosing tile over-covered
  // by a partial last stacked tile.
  const std::vector<int64_t> &sizes = blockedSizes(unit, enclosing);
  const auto saved = lp;
  if (const int64_t unitRepl = initialRepl(m, dim); unitRepl > 1) {
    // The intrinsic's level: the unit's stack factor (stackBarred), any
    // blocked tile under it; largest first, as below.
    for (auto t = sizes.rbegin(); t != sizes.rend() && !exhausted(); ++t) {
      if (!blockedOk(p, m, dim, *t, unitRepl))
        continue;
      lp.tile[dim] = *t;
      lp.repl[dim] = unitRepl;
      if (unitsOf(lp) > unitsAllowed(m) || !fitsPartial(p, m))
        continue;
      enumerateLevel(p, m, dim + 1, leaf, batch);
    }
    lp = saved;
    return;
  }
  // Largest array tiles first (fewest trips at this level): the first batch
  // of a huge level then holds the candidates good schedules are made of.
  for (auto a = sizes.rbegin(); a != sizes.rend() && !exhausted(); ++a) {
    for (auto t = a; t != sizes.rend() && !exhausted(); ++t) {
      int64_t repl = *a % *t == 0 ? *a / *t : *a == enclosing ? replFor(enclosing, *t) : 0;
      if (!repl || (forcedAt(m, dim) && *t != forcedTile(m, dim)) || stackBarred(m, dim, repl))
        continue;
      lp.tile[dim] = *t;
      lp.repl[dim] = repl;
      if (unitsOf(lp) > unitsAllowed(m) || !fitsPartial(p, m))
        continue;   // a smaller tile or stack factor may still fit
      enumerateLevel(p, m, dim + 1, leaf, batch);
    }
  }
  lp = saved;
}

void BranchAndBound::scoreOrders(Plan &p, size_t m, bool leaf, Batch &batch) {
  auto &lp = p.levels[m];
  std::vector<std::vector<Dim>> seen;
  for (size_t o = 0; o < loopOrders().size() && !exhausted(); ++o) {
    lp.order = o;
    std::vector<Dim> updates;
    for (Dim d : loopOrders()[o]) {
      size_t i = index(d);
      if (lp.tile[i] * lp.repl[i] < enclosingTile(p, m, i))
        updates.push_back(d);
    }
    if (std::find(seen.begin(), seen.end(), updates) != seen.end())
      continue;
    seen.push_back(std::move(updates));
    auto sol = score(p);
    if (!sol)
      continue;   // the smallest completion is valid if any is: nothing below can help
    if (leaf) {
      offer(std::move(*sol));
      continue;
    }
    double bound = objectiveValue(options_.objective, sol->result.energyPj, sol->result.latencyCycles);
    if (pruneByBound_) {
      // Static energy follows the latency, which the levels below set too.
      bound -= sol->result.energyStaticPj;
      for (size_t b = 0; b < m; ++b)
        bound -= sol->result.levels[b].boundaryEnergyPj;
    }
    if (pruneByBound_ && bound >= exBestValue_)
      ++stats_.prunedByBound;
    else
      batch.pending.push_back({lp, bound});
    if (++batch.scored >= kBatch)
      expand(p, m, batch);
  }
}

void BranchAndBound::expand(Plan &p, size_t m, Batch &batch) {
  auto &pending = batch.pending;
  std::stable_sort(pending.begin(), pending.end(), [](const Branch &a, const Branch &b) { return a.bound < b.bound; });
  const auto saved = p.levels[m];
  for (size_t k = 0; k < pending.size() && !exhausted(); ++k) {
    if (pruneByBound_ && pending[k].bound >= exBestValue_) {
      stats_.prunedByBound += static_cast<int64_t>(pending.size() - k);
      break;   // sorted: none of the rest can win either
    }
    p.levels[m] = pending[k].level;
    branch(p, m - 1);
  }
  p.levels[m] = saved;
  pending.clear();
  batch.scored = 0;
}

void BranchAndBound::offer(IntraLayerSolution sol) {
  for (const LevelResult &lr : sol.result.levels)
    if (lr.boundaryEnergyPj < 0)
      boundSafe_ = false;
  double v = objectiveValue(options_.objective, sol.result.energyPj, sol.result.latencyCycles);
  if (v < exBestValue_) {
    exBestValue_ = v;
    exBest_ = std::move(sol);
  }
}

} // namespace dfl::intra
