#include "scheduler/kapla/BranchAndBound.h"

#include "scheduler/analysis/Floors.h"
#include "model/Geometry.h"

#include <algorithm>
#include <limits>

namespace dfl::intra {

std::optional<IntraLayerSolution> BranchAndBound::exhaustive(SolveFailure &why) {
  pruneByBound_ = options_.objective == Objective::Energy;
  exBest_.reset();
  exBestValue_ = std::numeric_limits<double>::infinity();
  openBound_ = std::numeric_limits<double>::infinity();
  if (options_.seedWithKapla) {
    SolveFailure ignored;
    if (auto seed = kaplaSearch(ignored))
      offer(std::move(*seed));
  }
  Plan p = minimalPlan();
  branch(p, p.levels.size() - 1, rootDecided());
  stats_.provedOptimal = !stats_.capped && boundSafe_ && !stopped_;

  if (pruneByBound_ && exBest_ && boundSafe_)
    stats_.lowerBoundPj = stats_.provedOptimal ? exBestValue_ : std::min(openBound_, exBestValue_);
  if (!exBest_) {
    bool allGiven = std::all_of(p.levels.begin(), p.levels.end(), [](const Plan::LevelPlan &lp) { return lp.fixed; });
    why = failure(allGiven ? SolveFailure::Reason::GivenInvalid : SolveFailure::Reason::NoneFound);
    explain(p, why);   // the rule the smallest completion breaks
    if (allGiven && given_)
      why.directive = given_->range;
  }
  return std::move(exBest_);
}

BranchAndBound::Decided BranchAndBound::rootDecided() {
  // The layer's floors (docs/directives.md §14): C, the DRAM words every
  // schedule moves, the latency floor.
  // Not for a piece solved as a network of its own (InterLayerSolver::
  // solveAlone): its operands name the whole network's tensors.
  const Layer &l = net_.layers[static_cast<size_t>(layerIndex_)];
  const bool resolved = std::all_of(l.operands.begin(), l.operands.end(), [&](const TensorRef &op) {
    return op.isInput ? static_cast<size_t>(op.index) < net_.inputs.size() : op.index < layerIndex_;
  });
  Decided root;
  root.exact = constants_;
  if (resolved) {
    const LayerFloor floor = layerFloor(net_, layerIndex_, hw_, layerIndex_, layerIndex_);
    dramFloor_ = dramFloor(net_, layerIndex_, hw_, layerIndex_, layerIndex_);
    root.exact = std::max(constants_, floor.energyPj - floor.staticPj);
    root.cycles = floor.latencyCycles;
  }
  root.level = hw_.levels.size() - 1;   // past the plan's levels
  root.bound = root.exact + staticFloor(root.cycles, unitsBetween(0, root.level));
  return root;
}

double BranchAndBound::subtreeBound(const LayerResult &r, size_t m) {
  learn(r);
  return decidedBy(r, m).bound;
}

double BranchAndBound::topLevelBound(const LevelDirectives &top, int64_t units, const LayerResult &r) {
  learn(r);
  const Decided root = rootDecided();
  return root.exact + refetchPj(top) + staticFloor(root.cycles, units * unitsBetween(0, top_));
}

bool BranchAndBound::exhausted() {
  if (options_.maxCandidates > 0 && stats_.candidates - firstCandidate_ >= options_.maxCandidates) {
    stats_.capped = true;
    return true;
  }
  return stopping();
}

double BranchAndBound::staticFloor(double cycles, int64_t pes) const {
  return hw_.chipStaticEnergyPj() * std::max(cycles, work_ / static_cast<double>(std::max<int64_t>(1, pes)));
}

int64_t BranchAndBound::unitsBetween(size_t lo, size_t hi) const {
  int64_t units = 1;
  for (size_t l = lo; l < hi && l < hw_.levels.size(); ++l)
    units *= hw_.levels[l].units();
  return units;
}

BranchAndBound::Decided BranchAndBound::decidedBy(const LayerResult &r, size_t m) const {
  Decided d;
  d.level = m;
  d.exact = r.energyPj - r.energyStaticPj;
  for (size_t b = 0; b < m; ++b)
    d.exact -= r.levels[b].boundaryEnergyPj;
  for (size_t l = m + 1; l < r.levels.size(); ++l)
    d.cycles = std::max(d.cycles, r.levels[l].cycles);
  d.units = r.levels[m].unitsInUse;
  d.below = compulsoryBelow(r, m);
  d.bound = d.exact + d.below + staticFloor(d.cycles, d.units * unitsBetween(0, m));
  return d;
}

double BranchAndBound::compulsoryBelow(const LayerResult &r, size_t m) const {
  if (layer_.output != TensorRole::Ofm || !layer_.forwardOf.empty())
    return 0;   // forward layers only: a gradient's roles read differently
  // Roles every word of whose level-m tile some MAC of its residency reads:
  // the weights, and the ifm where its window has no holes — no window at
  // all, or the filter whole in the tile, steps no longer than it and no
  // dilation (else a span may hold words no output of the tile reads).
  const WindowAxis &x = layer_.window.x, &y = layer_.window.y;
  const auto &tile = r.levels[m].extent;
  const int64_t fr = bound_[index(Dim::R)], fs = bound_[index(Dim::S)];
  const bool windowed = layer_.type == LayerType::Conv || layer_.type == LayerType::DwConv ||
                        layer_.type == LayerType::MaxPool || layer_.type == LayerType::AvgPool;
  const bool dense = windowed && at(tile, Dim::R) == fr && at(tile, Dim::S) == fs && x.stride <= fr &&
                     y.stride <= fs && x.dilation == 1 && y.dilation == 1;
  const bool windowless = fr == 1 && fs == 1 && x.stride == 1 && y.stride == 1 && x.padBegin == 0 && y.padBegin == 0;
  const WordScale ws = hw_.wordScale(layer_.output);
  double in = 0;   // in `word`s at their on-chip widths
  for (TensorRole role : layer_.roles()) {
    const size_t ri = static_cast<size_t>(role);
    if (role == TensorRole::Wgt || (role == TensorRole::Ifm && (windowless || dense)))
      in += r.levels[m].accesses.fills[ri] * ws.held[ri];
  }
  // Every output word leaves level 0 once at least.
  const double out = static_cast<double>(layer_.ofmShape.size() * net_.batch) * ws.held[static_cast<size_t>(TensorRole::Ofm)];
  // Each word filled into a level-m unit is read out of it, carried on its
  // bus and filled into a unit below at least once, and so on down to level
  // 0; each output word is read out of each level below m, carried up and
  // written into the next.
  double pj = 0;
  for (size_t b = 0; b < m; ++b) {
    const Level &inner = hw_.levels[b], &outer = hw_.levels[b + 1];
    const double innerFill = inner.fillEnergyPj.value_or(inner.writeEnergyPj);
    const double innerOut = inner.fillEnergyPj.value_or(inner.readEnergyPj);
    pj += in * (outer.readEnergyPj + outer.busEnergyPj + innerFill) +
          out * (innerOut + outer.busEnergyPj + outer.writeEnergyPj);
  }
  return pj;
}

double BranchAndBound::cheapBound(const Plan &p, size_t m, const Decided &parent) const {
  const int64_t pes = parent.units * unitsBetween(m + 1, parent.level) * unitsOf(p.levels[m]) * unitsBetween(0, m);
  return parent.exact + parent.below + staticFloor(parent.cycles, pes);
}

double BranchAndBound::refetchPj(const LevelDirectives &d) const {
  // Across a level that shares words between its units, a unit may take a
  // tile again from a neighbour instead of DRAM: nothing claimed there.
  if (hw_.levels[top_].can(Transfer::Sharing) || !dramFloor_)
    return 0;
  const bool cw = layer_.channelWise();
  double words = 0;
  for (auto [role, floorWords] : {std::pair{TensorRole::Wgt, dramFloor_->wgtReads},
                                  std::pair{TensorRole::Ifm, dramFloor_->ifmReads}}) {
    if (floorWords <= 0)
      continue;
    const std::vector<Dim> &dims = tileDims(role, cw, role == TensorRole::Wgt && wgtPerSample(layer_.nest));
    bool inside = true;   // no update moving the role yet (innermost first)
    double refetches = 1;
    for (const UpdateDirective &u : d.updates) {
      bool moves = false;
      int64_t trips = 1;
      for (auto [dim, step] : u.steps) {
        moves = moves || std::find(dims.begin(), dims.end(), dim) != dims.end();
        if (!isInputWindow(dim) && step > 0)
          trips = std::max(trips, (bound_[index(canonicalDim(dim, cw))] + step - 1) / step);
      }
      if (moves)
        inside = false;
      else if (!inside)
        refetches *= static_cast<double>(trips);
    }
    words += floorWords * (refetches - 1);
  }
  return words * hw_.levels.back().readEnergyPj;
}

void BranchAndBound::branch(Plan &p, size_t m, const Decided &parent) {
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
  batch.parent = parent;
  enumerateLevel(p, m, 0, leaf, batch);
  batch.enumerated = !exhausted();
  expand(p, m, batch);
  p.levels[m] = saved;
  if (exhausted() && !batch.enumerated)
    leftOpen(parent.bound);   // candidates never scored: only the parent bounds them
}

void BranchAndBound::enumerateLevel(Plan &p, size_t m, size_t dim, bool leaf, Batch &batch) {
  if (exhausted())
    return;
  if (dim == kND) {
    if (!arrayFits(p, m) || !fits(p, m))
      return;
    if (pruneByBound_ && cheapBound(p, m, batch.parent) >= exBestValue_)
      ++stats_.prunedByBound;   // too few units to beat the incumbent: no analysis
    else
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
    if (pruneByBound_ && batch.parent.level == p.levels.size() && m == top_ &&
        cheapBound(p, m, batch.parent) + refetchPj(directivesFor(p, m)) >= exBestValue_) {
      ++stats_.prunedByBound;   // its DRAM reads alone lose to the incumbent: no analysis
      continue;
    }
    auto sol = score(p);
    if (!sol)
      continue;   // the smallest completion is valid if any is: nothing below can help
    learn(sol->result);
    const double value = objectiveValue(options_.objective, sol->result.energyPj, sol->result.latencyCycles);
    // A plan below its parent's bound breaks the bound's premise: the search then claims nothing.
    if (pruneByBound_ && value < batch.parent.bound * (1 - 1e-9))
      boundSafe_ = false;
    if (leaf) {
      offer(std::move(*sol));
      continue;
    }
    Decided decided;
    if (pruneByBound_)
      decided = decidedBy(sol->result, m);
    else
      decided.bound = value;   // no bound: ordered by the minimal completion's objective
    if (pruneByBound_ && decided.bound >= exBestValue_)
      ++stats_.prunedByBound;
    else
      batch.pending.push_back({lp, decided});
    if (++batch.scored >= (exBest_ ? kBatch : kFirstBatch))
      expand(p, m, batch);
  }
}

void BranchAndBound::expand(Plan &p, size_t m, Batch &batch) {
  auto &pending = batch.pending;
  std::stable_sort(pending.begin(), pending.end(),
                   [](const Branch &a, const Branch &b) { return a.decided.bound < b.decided.bound; });
  const auto saved = p.levels[m];
  size_t k = 0;
  for (; k < pending.size() && !exhausted(); ++k) {
    if (pruneByBound_ && pending[k].decided.bound >= exBestValue_) {
      stats_.prunedByBound += static_cast<int64_t>(pending.size() - k);
      k = pending.size();
      break;   // sorted: none of the rest can win either
    }
    p.levels[m] = pending[k].level;
    branch(p, m - 1, pending[k].decided);
  }
  if (k < pending.size())
    leftOpen(pending[k].decided.bound);   // sorted: the least of those never expanded
  p.levels[m] = saved;
  pending.clear();
  batch.scored = 0;
}

void BranchAndBound::learn(const LayerResult &r) {
  if (work_ > 0)
    return;   // the same in every valid plan
  work_ = r.work;
  constants_ = r.energyPj - r.energyStaticPj;
  for (const LevelResult &lr : r.levels)
    constants_ -= lr.boundaryEnergyPj;
}

void BranchAndBound::offer(IntraLayerSolution sol) {
  for (const LevelResult &lr : sol.result.levels)
    if (lr.boundaryEnergyPj < 0)
      boundSafe_ = false;
  learn(sol.result);
  double v = objectiveValue(options_.objective, sol.result.energyPj, sol.result.latencyCycles);
  if (v < exBestValue_) {
    exBestValue_ = v;
    exBest_ = std::move(sol);
  }
}

} // namespace dfl::intra
