#include "scheduler/kapla/BranchAndBound.h"

#include "scheduler/analysis/Floors.h"
#include "model/Geometry.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace dfl::intra {

namespace {

/// Each range [lo, hi) split into pieces of `step` from its start, the last
/// one clipped.
std::vector<std::pair<int64_t, int64_t>> splitRanges(const std::vector<std::pair<int64_t, int64_t>> &ranges,
                                                     int64_t step) {
  step = std::max<int64_t>(1, step);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (auto [lo, hi] : ranges)
    for (int64_t b = lo; b < hi; b += step)
      out.emplace_back(b, std::min(hi, b + step));
  return out;
}

} // namespace

std::optional<IntraLayerSolution> BranchAndBound::exhaustive(SolveFailure &why) {
  pruneByBound_ = options_.objective == Objective::Energy;
  exBest_.reset();
  exBestValue_ = std::numeric_limits<double>::infinity();
  openBound_ = std::numeric_limits<double>::infinity();
  gapBound_ = std::numeric_limits<double>::infinity();
  steps_ = 0;
  if (options_.seedWithKapla) {
    SolveFailure ignored;
    if (auto seed = kaplaSearch(ignored))
      offer(std::move(*seed));
  }
  Plan p = minimalPlan();
  branch(p, p.levels.size() - 1, rootDecided());
  stats_.provedWithinGap = !stats_.capped && boundSafe_ && !stopped_;
  stats_.provedOptimal = stats_.provedWithinGap && gapBound_ == std::numeric_limits<double>::infinity();
  stats_.enumerated += steps_;

  if (pruneByBound_ && exBest_ && boundSafe_)
    stats_.lowerBoundPj =
        stats_.provedOptimal ? exBestValue_ : std::min({openBound_, gapBound_, exBestValue_});
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
  Decided root;
  root.exact = constants_;
  onChip_ = {};   // every word the layer must move crosses each boundary on chip
  if (operandsResolved()) {
    const LayerFloor floor = layerFloor(net_, layerIndex_, hw_, layerIndex_, layerIndex_);
    dramFloor_ = dramFloor(net_, layerIndex_, hw_, layerIndex_, layerIndex_);
    onChip_ = onChipFloor(net_, layerIndex_, hw_, layerIndex_, layerIndex_);
    // The floor's on-chip part bounds the terms below the root: not exact.
    root.exact = std::max(constants_, floor.energyPj - floor.staticPj - onChip_.totalPj());
    root.cycles = floor.latencyCycles;
  }
  root.level = hw_.levels.size() - 1;   // past the plan's levels
  // Below it, the boundaries on chip; boundary 0/1 also at least the reloads
  // level-0 tiles within the layer force.
  DimVector layerExtent{};
  for (size_t i = 0; i < kND; ++i)
    at(layerExtent, kIndependentDims[i]) = bound_[i];
  const double boundary0 = onChip_.boundaryPj.empty() ? 0.0 : onChip_.boundaryPj[0];
  root.below = onChip_.totalPj() - boundary0 + std::max(boundary0, reloadFloorPj(layerExtent));
  root.bound = root.exact + root.below + staticFloor(root.cycles, unitsBetween(0, root.level));
  return root;
}

double BranchAndBound::subtreeBound(const LayerResult &r, size_t m) {
  learn(r);
  rootDecided();   // the layer's floors, which bound the terms below m too
  return decidedBy(r, m).bound;
}

double BranchAndBound::topLevelBound(const LevelDirectives &top, int64_t units, const LayerResult &r) {
  learn(r);
  const Decided root = rootDecided();
  return root.exact + root.below + refetchPj(top) + staticFloor(root.cycles, units * unitsBetween(0, top_));
}

bool BranchAndBound::exhausted() {
  const int64_t work = stats_.candidates - firstCandidate_ + steps_ / kStepsPerAnalysis;
  if (options_.maxCandidates > 0 && work >= options_.maxCandidates) {
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
  // Each boundary b below m, and each role's part of it, is at least its
  // compulsory words and the layer's on-chip floor (which every schedule
  // pays); boundary 0/1 also the reloads, its level-0 tiles lying within
  // level m's.
  if (m > 0) {
    const std::vector<std::array<double, kNumRoles>> compulsory = compulsoryBelow(r, m);
    for (size_t b = 0; b < m; ++b) {
      double term = 0;
      for (size_t ri = 0; ri < kNumRoles; ++ri) {
        const double v = std::max(compulsory[b][ri], b < onChip_.rolePj.size() ? onChip_.rolePj[b][ri] : 0.0);
        if (b == 0)
          d.compulsory[ri] = v;
        term += v;
      }
      d.below += b == 0 ? std::max(term, reloadFloorPj(r.levels[m].extent)) : term;
    }
  }
  d.bound = d.exact + d.below + staticFloor(d.cycles, d.units * unitsBetween(0, m));
  return d;
}

std::vector<std::array<double, kNumRoles>> BranchAndBound::compulsoryBelow(const LayerResult &r, size_t m) const {
  std::vector<std::array<double, kNumRoles>> out(m);
  if (layer_.output != TensorRole::Ofm || !layer_.forwardOf.empty())
    return out;   // forward layers only: a gradient's roles read differently
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
  // Each word filled into a level-m unit reaches level 0 and each output
  // word leaves it, across every boundary below m at least once.
  for (TensorRole role : layer_.roles()) {
    const size_t ri = static_cast<size_t>(role);
    std::vector<double> pj(hw_.levels.size(), 0.0);   // by boundary
    if (role == layer_.output)
      crossingsPj(hw_, layer_.output, role, static_cast<double>(layer_.ofmShape.size() * net_.batch), m, &pj);
    else if (role == TensorRole::Wgt || (role == TensorRole::Ifm && (windowless || dense)))
      crossingsPj(hw_, layer_.output, role, r.levels[m].accesses.fills[ri], m, &pj);
    for (size_t b = 0; b < m; ++b)
      out[b][ri] = pj[b];
  }
  return out;
}

BranchAndBound::FillCost BranchAndBound::reloadCost(TensorRole r) const {
  const Level &inner = hw_.levels[0];
  const int ib = inner.bufferOf(r);
  if (ib < 0 || hw_.levels.size() < 3 || hw_.holderAbove(0, r) != 1)
    return {};   // not filled at level 0, or served from past level 1: priced otherwise
  const Level &outer = hw_.levels[1];
  const int ob = outer.bufferOf(r);
  if (ob < 0)
    return {};
  const Buffer &in = inner.buffers[static_cast<size_t>(ib)], &out = outer.buffers[static_cast<size_t>(ob)];
  const double neighbour = inner.neighborEnergyPj.value_or(in.readEnergyPj + in.writeEnergyPj);
  // rho: the share of the words that crosses to level 1 (a read there, or a
  // write-back), the rest served (or reduced) among level 0's units; at
  // least one word in units(0) (a tile's replication never exceeds its
  // level's units) and at most all. The energy is linear in rho: its least
  // is at an end.
  const double leastRho = 1.0 / static_cast<double>(std::max<int64_t>(1, inner.units()));
  std::function<double(double)> perWord;
  bool spread;   // rho may be below 1
  if (r != layer_.output) {
    // A fill: written at level 0, carried on level 1's bus; read at level 1
    // once per replica (fromOuter = own / rep), the rest forwarded between
    // units where the level does not multicast (LayerAnalysis' neighbour).
    spread = inner.can(Transfer::Multicast) || inner.can(Transfer::Systolic) || inner.can(Transfer::Sharing);
    perWord = [&, multicast = inner.can(Transfer::Multicast)](double rho) {
      return in.fillEnergyPj.value_or(in.writeEnergyPj) + outer.busEnergyPj + rho * out.readEnergyPj +
             (multicast ? 0.0 : (1 - rho) * neighbour);
    };
  } else {
    // A residency's end: written back (read out at level 0, on the bus,
    // written at level 1) or, where level 0 reduces, summed into a neighbour's.
    spread = inner.can(Transfer::Systolic) || inner.can(Transfer::Reduction);
    perWord = [&](double rho) {
      return rho * (in.fillEnergyPj.value_or(in.readEnergyPj) + out.writeEnergyPj + outer.busEnergyPj) +
             (1 - rho) * neighbour;
    };
  }
  const double scale = hw_.wordScale(layer_.output).held[static_cast<size_t>(r)];
  FillCost c;
  c.minShare = spread ? leastRho : 1.0;
  c.atNone = perWord(0) * scale;
  c.atAll = perWord(1) * scale;
  c.least = std::min(perWord(c.minShare), perWord(1)) * scale;
  return c;
}

bool BranchAndBound::reloadsApply() const {
  return layer_.output == TensorRole::Ofm && layer_.forwardOf.empty() && work_ > 0 && hw_.levels.size() >= 3 &&
         !fixedLevel(0) && !pinnedLevel(0);
}

bool BranchAndBound::windowless() const {
  const WindowAxis &x = layer_.window.x, &y = layer_.window.y;
  return bound_[index(Dim::R)] == 1 && bound_[index(Dim::S)] == 1 && x.stride == 1 && y.stride == 1 &&
         !layer_.window.padded();
}

bool BranchAndBound::windowed() const {
  return layer_.type == LayerType::Conv || layer_.type == LayerType::DwConv || layer_.type == LayerType::MaxPool ||
         layer_.type == LayerType::AvgPool;
}

unsigned BranchAndBound::reuseDims(TensorRole r) const {
  const bool cw = layer_.channelWise();
  const unsigned k = cw ? 0u : 1u << index(Dim::K);   // a channel-wise K is C: no reuse of its own
  if (r == TensorRole::Ifm)   // K, and per window axis its outputs and taps (reuseOf pairs them)
    return k | 1u << index(Dim::Xo) | 1u << index(Dim::R) | 1u << index(Dim::Yo) | 1u << index(Dim::S);
  unsigned spans = 0;
  for (Dim d : tileDims(r, cw, r == TensorRole::Wgt && wgtPerSample(layer_.nest)))
    if (!isInputWindow(d))
      spans |= 1u << index(d);
  unsigned outside = 0;
  for (Dim d : kIndependentDims)
    if (d != Dim::K && !(spans >> index(d) & 1u))
      outside |= 1u << index(d);
  return outside | (spans >> index(Dim::K) & 1u ? 0u : k);
}

double BranchAndBound::reuseOf(TensorRole r, Dim moved, const DimVector &e) const {
  const unsigned dims = reuseDims(r);
  if (r != TensorRole::Ifm) {
    double reuse = 1;
    for (Dim d : kIndependentDims)
      if (dims >> index(d) & 1u)
        reuse *= static_cast<double>(at(e, d));
    return reuse;
  }
  // A word serves the tile's K and, per input window axis, at fixed xi, at
  // most one xo per r and one r per xo along the run of u's trips: where u
  // slides the outputs (the same taps all along) the tile's taps; where it
  // moves the taps, the tile's outputs and the filter's taps, one output
  // per tap; where it moves neither, the fewer of the tile's outputs and
  // taps (one output column: each pixel meets one tap).
  const double k = dims >> index(Dim::K) & 1u ? static_cast<double>(at(e, Dim::K)) : 1.0;
  return k * static_cast<double>(pairsOf(Dim::Xo, Dim::R, moved, e)) *
         static_cast<double>(pairsOf(Dim::Yo, Dim::S, moved, e));
}

int64_t BranchAndBound::pairsOf(Dim out, Dim taps, Dim moved, const DimVector &e) const {
  const int64_t o = std::max<int64_t>(1, at(e, out)), t = std::max<int64_t>(1, at(e, taps));
  if (moved == out)
    return t;
  if (moved == taps)
    return std::min(o, std::max<int64_t>(1, bound_[index(taps)]));
  return std::min(o, t);
}

int64_t BranchAndBound::mostThatFits(DimVector &e, int64_t limit, const std::function<void(int64_t)> &set) const {
  int64_t lo = 1, hi = limit;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    set(mid);
    if (fitsLevel0(e))
      lo = mid;
    else
      hi = mid - 1;
  }
  set(lo);
  return lo;
}

bool BranchAndBound::fitsLevel0(DimVector &e) const {
  const bool cw = layer_.channelWise(), perSample = wgtPerSample(layer_.nest);
  at(e, Dim::Xi) = windowIn(Dim::Xi, at(e, Dim::Xo), at(e, Dim::R));
  at(e, Dim::Yi) = windowIn(Dim::Yi, at(e, Dim::Yo), at(e, Dim::S));
  if (cw)
    at(e, Dim::K) = at(e, Dim::C);
  std::array<int64_t, kNumRoles> words{};
  for (TensorRole role : layer_.roles())
    words[static_cast<size_t>(role)] = dfl::tileWords(role, e, cw, role == TensorRole::Wgt && perSample);
  return hw_.overflowingBuffer(0, hw_.bufferBytes(0, words, layer_.output), layer_.output, reserve(0)) < 0;
}

template <class F>
void BranchAndBound::eachFullestTile(const std::vector<Dim> &dims, const std::vector<int64_t> &limits, F &&each) const {
  // Words grow with every extent, so where a dim's extent does not fit no
  // larger one does; and a reuse never falls as an extent grows, so the
  // last dim need only be at the most that fits (bisected).
  DimVector e{};
  for (Dim d : kIndependentDims)
    at(e, d) = 1;
  std::function<void(size_t)> grow = [&](size_t i) {
    if (i + 1 >= dims.size()) {
      if (i < dims.size())
        mostThatFits(e, limits[i], [&](int64_t t) { at(e, dims[i]) = t; });
      each(static_cast<const DimVector &>(e));
      if (i < dims.size())
        at(e, dims[i]) = 1;
      return;
    }
    for (int64_t t = 1; t <= limits[i]; ++t) {
      at(e, dims[i]) = t;
      if (t > 1 && !fitsLevel0(e))
        break;
      grow(i + 1);
    }
    at(e, dims[i]) = 1;
  };
  grow(0);
}

double BranchAndBound::maxReuse(TensorRole r, Dim moved, const DimVector &enclosing) const {
  const unsigned dims = reuseDims(r);
  std::vector<Dim> outside;   // the dims whose tile extents bound r's reuse
  for (Dim d : kIndependentDims)
    if (dims >> index(d) & 1u)
      outside.push_back(d);
  // No tile that fits is longer along a dim than the most that fits with
  // every other extent at 1: enclosing tiles longer than that share an entry.
  if (aloneFit_.empty()) {
    aloneFit_.assign(kND, 1);
    DimVector e{};
    for (Dim d : kIndependentDims)
      at(e, d) = 1;
    for (size_t i = 0; i < kND; ++i) {
      for (int64_t t = 2; t <= bound_[i]; ++t) {
        at(e, kIndependentDims[i]) = t;
        if (!fitsLevel0(e))
          break;
        aloneFit_[i] = t;
      }
      at(e, kIndependentDims[i]) = 1;
    }
  }
  std::vector<int64_t> key{static_cast<int64_t>(r), static_cast<int64_t>(index(moved))};
  for (Dim d : outside)
    key.push_back(std::clamp<int64_t>(at(enclosing, d), 1, aloneFit_[index(d)]));
  if (auto it = reuseMemo_.find(key); it != reuseMemo_.end())
    return it->second;
  // The most reuse (reuseOf) of a level-0 tile within `enclosing` fitting
  // level 0's buffers, its extents along `outside` chosen, every other at 1:
  // words grow with every extent, so a larger extent of a dim that does not
  // fit never fits.
  double best = 1;
  if (r != TensorRole::Ifm) {
    eachFullestTile(outside, std::vector<int64_t>(key.begin() + 2, key.end()),
                    [&](const DimVector &e) { best = std::max(best, reuseOf(r, moved, e)); });
    return reuseMemo_[key] = best;
  }
  // The ifm's pairs along an axis take one extent each (reuseOf): the taps
  // where u slides the outputs, the outputs where it moves the taps, both
  // alike where it moves neither; the axis' other extent at the least that
  // gives them (fewer words, the same pairs). So K and one extent per axis.
  DimVector e{};
  for (Dim d : kIndependentDims)
    at(e, d) = 1;
  auto set = [&](Dim out, Dim taps, int64_t p) {
    at(e, out) = moved == out ? 1 : p;
    at(e, taps) = moved == out || moved != taps ? p : 1;
  };
  const bool cw = layer_.channelWise();
  const int64_t kMax = cw ? 1 : std::max<int64_t>(1, at(enclosing, Dim::K)),
                xMax = pairsOf(Dim::Xo, Dim::R, moved, enclosing), yMax = pairsOf(Dim::Yo, Dim::S, moved, enclosing);
  for (int64_t k = 1; k <= kMax; ++k) {
    at(e, Dim::K) = k;
    set(Dim::Xo, Dim::R, 1), set(Dim::Yo, Dim::S, 1);
    if (k > 1 && !fitsLevel0(e))
      break;
    for (int64_t x = 1; x <= xMax; ++x) {
      set(Dim::Xo, Dim::R, x), set(Dim::Yo, Dim::S, 1);
      if (x > 1 && !fitsLevel0(e))
        break;
      const int64_t y = mostThatFits(e, yMax, [&](int64_t p) { set(Dim::Yo, Dim::S, p); });
      best = std::max(best, static_cast<double>(k * x * y));
    }
  }
  return reuseMemo_[key] = best;
}

double BranchAndBound::leastReloads(Dim moved) const {
  double &memo = leastReloads_[index(moved)];
  if (leastReloadsDone_ >> index(moved) & 1u)
    return memo;
  leastReloadsDone_ |= 1u << index(moved);
  const Reloads &rl = reloads();
  struct Moved {
    TensorRole role;
    double pjPerWord;
    unsigned reuseDims;
  };
  std::vector<Moved> roles;   // the roles u moves
  unsigned all = 0;
  for (size_t ri = 0; ri < kNumRoles; ++ri)
    if (rl.pjPerWord[ri] > 0 && (rl.moves[ri] >> index(moved) & 1u)) {
      const auto r = static_cast<TensorRole>(ri);
      roles.push_back({r, rl.pjPerWord[ri], reuseDims(r)});
      all |= roles.back().reuseDims;
    }
  std::vector<Dim> outside;   // the dims whose extents are some role's reuse
  for (Dim d : kIndependentDims)
    if (all >> index(d) & 1u)
      outside.push_back(d);
  double least = roles.empty() ? 0.0 : std::numeric_limits<double>::infinity();
  std::vector<int64_t> limits;
  for (Dim d : outside)
    limits.push_back(bound_[index(d)]);
  if (!roles.empty())
    eachFullestTile(outside, limits, [&](const DimVector &e) {
      double pj = 0;
      for (const Moved &m : roles)
        pj += m.pjPerWord / reuseOf(m.role, moved, e);
      least = std::min(least, pj);
    });
  return memo = least;
}

double BranchAndBound::reloadFloorPj(const DimVector &enclosing) const {
  // Let u be the innermost update of the plan's whole nest (levels 0 and up)
  // and T the product of every update's trips, so that the plan runs
  // U * T unit-steps (U: level 0's units in use), each on one level-0 tile
  // (t: its extents). A role r that u moves has loads = T at level 0
  // (LayerAnalysis: the trips from the innermost update moving r out), so
  // its level-0 words are U * T * words(t) * fresh * real share.
  // The weights and the output have no input windows (fresh = 1): their
  // words are the real words of r's tile summed over the unit-steps, and a
  // unit-step does at most its real words of r times the product of t along
  // the dims r does not span (its reuse) MACs. The unit-steps do all the work
  // W: so those words are at least W / reuse >= W / maxReuse(r).
  // The ifm (a conv's or a pooling's, or without input windows): a run of
  // u's trips (everything outside u fixed) fills each word it touches once
  // (the tile first, then on each sliding step the fresh slab: the
  // analysis' fresh share, or its word-for-word windows; padding and holes
  // count as words), and the word (n, c, xi, yi) then serves only MACs of
  // that run on that unit: k in the tile's K, and per window axis pairs
  // (xo, r) with xo * stride + r * dilation = xi + pad, at most one xo per r
  // and one r per xo. Along the run R's range is fixed unless u moves R (Xo's
  // unless u moves Xo), so at most R_t pairs, or min(Xo_t, R) where u moves
  // R, and min(Xo_t, R_t) where u moves neither; likewise along Y
  // (reuseOf). Where u does not move the ifm at level 0 (an update above
  // it: fresh = 1, a whole tile per step) the one step's pairs are fewer
  // still. So the ifm's fills are at least W / its reuse.
  // Every dim of a conv or a matrix product moves two of the three roles
  // (N: ifm, ofm; C: ifm, wgt; K: wgt, ofm; Xo, Yo: ifm, ofm; R, S: ifm,
  // wgt), so whatever u moves, two of them are reloaded on every step. Each
  // such word costs at least reloadCost at boundary 0/1. The least over the
  // dims u may move is the floor (one role where a layer has no weights).
  // The roles u moves share the one tile t, so besides the sum of each
  // role's least within `enclosing`, the least of their sum over every tile
  // within the layer (leastReloads: one enumeration per dim and layer, where
  // one per enclosing tile costs more than the search it saves) bounds it.
  // Forward layers only, with level 0 chosen by the search (no written
  // `shr` there) and a level 1 below the outermost.
  if (!reloadsApply())
    return 0;
  const bool cw = layer_.channelWise();
  const Reloads &rl = reloads();
  // The search updates only dims its tiles do not cover (more than one
  // trip); a written level may update any.
  bool written = false;
  for (size_t l = 0; l + 1 < hw_.levels.size(); ++l)
    written = written || fixedLevel(l) || pinnedLevel(l);
  double least = std::numeric_limits<double>::infinity();
  for (Dim d : kIndependentDims) {
    if ((cw && d == Dim::K) || (!written && bound_[index(d)] <= 1))
      continue;   // a channel-wise layer's K is its C; a dim of one no update moves
    double pj = 0;
    for (size_t ri = 0; ri < kNumRoles; ++ri)
      if (rl.pjPerWord[ri] > 0 && (rl.moves[ri] >> index(d) & 1u)) {
        const auto r = static_cast<TensorRole>(ri);
        pj += rl.pjPerWord[ri] / maxReuse(r, d, enclosing);
      }
    least = std::min(least, std::max(pj, leastReloads(d)));
  }
  return least == std::numeric_limits<double>::infinity() ? 0.0 : work_ * least;
}

const BranchAndBound::Reloads &BranchAndBound::reloads() const {
  if (reloads_.ready)
    return reloads_;
  reloads_.ready = true;
  const std::vector<TensorRole> roles = layer_.roles();
  const bool cw = layer_.channelWise();
  for (TensorRole r : {TensorRole::Wgt, TensorRole::Ofm, TensorRole::Ifm}) {
    // The ifm's windows as a conv's (reuseDims): other layers' only without any.
    if (std::find(roles.begin(), roles.end(), r) == roles.end() ||
        (r == TensorRole::Ifm && !windowed() && !windowless()))
      continue;
    const size_t ri = static_cast<size_t>(r);
    reloads_.cost[ri] = reloadCost(r);
    reloads_.pjPerWord[ri] = reloads_.cost[ri].least;
    for (Dim d : tileDims(r, cw, r == TensorRole::Wgt && wgtPerSample(layer_.nest)))
      reloads_.moves[ri] |= 1u << index(d == Dim::Xi ? Dim::Xo : d == Dim::Yi ? Dim::Yo : d);
    if (r == TensorRole::Ifm)   // a step of the filter moves the window too
      reloads_.moves[ri] |= 1u << index(Dim::R) | 1u << index(Dim::S);
  }
  return reloads_;
}

double BranchAndBound::leafBound(const Plan &p, const Decided &parent) const {
  const double cheap = cheapBound(p, 0, parent);
  if (parent.level != 1 || !reloadsApply())
    return cheap;
  const Plan::LevelPlan &lp = p.levels[0];
  // The innermost update of the nest: level 0's first in its order (the
  // search's updates: the dims its array tile does not cover).
  size_t first = kND;
  for (Dim d : loopOrders()[lp.order])
    if (const size_t i = index(d); lp.tile[i] * lp.repl[i] < enclosingTile(p, 0, i)) {
      first = i;
      break;
    }
  if (first == kND)
    return cheap;
  const Reloads &rl = reloads();
  DimVector tile{};   // this tile's extents: its MACs per word of a role are its reuse
  for (size_t i = 0; i < kND; ++i)
    at(tile, kIndependentDims[i]) = lp.tile[i];
  double below = 0;
  for (size_t ri = 0; ri < kNumRoles; ++ri) {
    double reload = 0;
    if (rl.pjPerWord[ri] > 0 && (rl.moves[ri] >> first & 1u)) {
      reload = work_ * rl.pjPerWord[ri] / reuseOf(static_cast<TensorRole>(ri), kIndependentDims[first], tile);
    }
    if (static_cast<TensorRole>(ri) == TensorRole::Ifm && rl.pjPerWord[ri] > 0 && !onChip_.rolePj.empty()) {
      // The units' fills, halos included, priced as reloadCost's words:
      // linear in those read at level 1, which are every data word once at
      // least and at least its least share of them all.
      const FillCost &c = rl.cost[ri];
      const double words = onChip_.elements[ri];
      const double fills = unitHaloFactor(p, Dim::Yo) * unitHaloFactor(p, Dim::Xo) * words;
      const double reads = std::min(fills, std::max(words, c.minShare * fills));
      reload = std::max(reload, c.atAll >= c.atNone ? fills * c.atNone + reads * (c.atAll - c.atNone)
                                                    : fills * c.atAll);
    }
    below += std::max(parent.compulsory[ri], reload);
  }
  // From the parent's own parts: its bound may be an ancestor's, whose below is not parent.below.
  return std::max(cheap, partsBound(p, 0, parent) - parent.below + below);
}

double BranchAndBound::partsBound(const Plan &p, size_t m, const Decided &parent) const {
  const int64_t pes = parent.units * unitsBetween(m + 1, parent.level) * unitsOf(p.levels[m]) * unitsBetween(0, m);
  return parent.exact + parent.below + staticFloor(parent.cycles, pes);
}

double BranchAndBound::cheapBound(const Plan &p, size_t m, const Decided &parent) const {
  // The parent's bound holds for all of its subtree too.
  return std::max(parent.bound, partsBound(p, m, parent));
}

double BranchAndBound::refetchPj(const LevelDirectives &d) const {
  // The DRAM reads of a role at the top level are its distinct words per
  // stacked array tile times its loads (and the fresh and real shares):
  // where the level serves copies (multicast, systolic or sharing alike,
  // LayerAnalysis' replicaServe) one read per word of the array tile's
  // union, else one per unit's word. Either way a sweep of the updates
  // moving the role reads every word once at least, and each trip of an
  // update outside it sweeps again. Sharing changes the count only through
  // a tensor's `shr` (a unit holds 1/shr of its tile and takes the rest from
  // its neighbours): the search never writes one, but a written level may,
  // and then nothing is claimed.
  if (!dramFloor_)
    return 0;
  for (const LevelDirectives *w : {pinned_[top_].source, pinned_[top_].hardware, givenLevel(top_)})
    if (w)
      for (const TensorDirective &t : w->tensors)
        if (t.shr > 1)
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
    if (role == TensorRole::Ifm)
      refetches *= haloFactor(d, Dim::Yo) * haloFactor(d, Dim::Xo);
    words += floorWords * (refetches - 1);
  }
  return words * hw_.levels.back().readEnergyPj;
}

double BranchAndBound::haloFactor(const LevelDirectives &d, Dim out) const {
  // A sweep of the top level's updates reads the data its visits' windows
  // cover (DRAM serves data only, or more with padding): a visit is a range
  // of the axis' outputs and one of its taps, each a position of the update
  // moving them there (all of them where none does). Only the innermost
  // update moving the ifm slides (LayerAnalysis' fresh share, windowSums):
  // a run of its steps reads each word once, so along the dim it moves a
  // visit is the whole run.
  const bool alongX = out == Dim::Xo;
  const Dim in = alongX ? Dim::Xi : Dim::Yi, taps = alongX ? Dim::R : Dim::S;
  const std::vector<Dim> &ifmDims = tileDims(TensorRole::Ifm, layer_.channelWise(), false);
  int64_t outStep = bound_[index(out)], tapStep = bound_[index(taps)];
  bool innermost = true;   // no update moving the ifm inside this one
  for (const UpdateDirective &u : d.updates) {
    bool movesIfm = false;
    for (auto [dim, amount] : u.steps) {
      if (amount <= 0)
        continue;
      movesIfm = movesIfm || std::find(ifmDims.begin(), ifmDims.end(), dim) != ifmDims.end();
      if (dim == in && innermost && !std::any_of(u.steps.begin(), u.steps.end(), [&](const auto &s) {
            return (s.first == out || s.first == taps) && s.second > 0;
          }))
        return 1;   // slides along the axis by its own step
      if (dim == out && !innermost)
        outStep = amount;
      if (dim == taps && !innermost)
        tapStep = amount;
    }
    innermost = innermost && !movesIfm;
  }
  return windowCoverage(out, splitRanges({{0, bound_[index(out)]}}, outStep),
                        splitRanges({{0, bound_[index(taps)]}}, tapStep));
}

double BranchAndBound::unitHaloFactor(const Plan &p, Dim out) const {
  // Level 0's units fill each its own tile's windows: a visit is a block of
  // the level-0 tile's outputs and taps. Where the innermost update moving
  // the ifm is level 0's and moves this axis it slides, and a run of its
  // steps reads the union of their windows: along the taps no less than
  // all taps' (the filter); along the outputs, on units not stacked along
  // them, the enclosing tile's (else nothing is claimed).
  const bool alongX = out == Dim::Xo;
  const Dim taps = alongX ? Dim::R : Dim::S;
  const size_t oi = index(out), ti = index(taps);
  const Plan::LevelPlan &lp = p.levels[0];
  size_t outLevel = 0, tapLevel = 0;   // the level whose tiles are the blocks
  for (Dim d : loopOrders()[lp.order]) {
    const size_t i = index(d);
    if (lp.tile[i] * lp.repl[i] >= enclosingTile(p, 0, i) || d == Dim::K)
      continue;   // no update, or one that may not move the ifm (a channel-wise layer's K does)
    if (d == out) {
      if (lp.repl[oi] > 1)
        return 1;
      outLevel = 1;
    } else if (d == taps)
      tapLevel = p.levels.size();
    break;   // the innermost update moving the ifm
  }
  return windowCoverage(out, blocks(p, oi, outLevel), blocks(p, ti, tapLevel));
}

std::vector<std::pair<int64_t, int64_t>> BranchAndBound::blocks(const Plan &p, size_t i, size_t level) const {
  // Each level's tiles split the one enclosing them from its start (an
  // array tile into its units' tiles, a tile into the steps of its array
  // tile: both from the start, the last one clipped).
  std::vector<std::pair<int64_t, int64_t>> out{{0, bound_[i]}};
  for (size_t l = p.levels.size(); l-- > level;)
    out = splitRanges(out, p.levels[l].tile[i]);
  return out;
}

double BranchAndBound::windowCoverage(Dim out, const std::vector<std::pair<int64_t, int64_t>> &outBlocks,
                                      const std::vector<std::pair<int64_t, int64_t>> &tapBlocks) const {
  const bool alongX = out == Dim::Xo;
  const Dim in = alongX ? Dim::Xi : Dim::Yi;
  const WindowAxis &a = layer_.window.along(in);
  const int64_t data = at(layer_.bounds, in);
  if (!windowed() || a.dilation != 1 || data <= 0)
    return 1;
  // The data rows of outputs [o0, o1) and taps [t0, t1): o * stride - pad +
  // t, a range where the taps span a stride, else one row in `stride` per tap.
  auto clipped = [&](int64_t lo, int64_t hi) {
    return std::max<int64_t>(0, std::min(hi, data - 1) - std::max<int64_t>(lo, 0) + 1);
  };
  double rows = 0;
  for (auto [o0, o1] : outBlocks)
    for (auto [t0, t1] : tapBlocks) {
      if (t1 - t0 >= a.stride) {
        rows += static_cast<double>(clipped(o0 * a.stride - a.padBegin + t0, (o1 - 1) * a.stride - a.padBegin + t1 - 1));
        continue;
      }
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t o = o0; o < o1; ++o)
          rows += static_cast<double>(clipped(o * a.stride - a.padBegin + t, o * a.stride - a.padBegin + t));
    }
  return std::max(1.0, rows / static_cast<double>(data));
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
    if (pruneByBound_ && cuts(cheapBound(p, m, batch.parent)))
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
      ++steps_;
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
      ++steps_;
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
        cuts(cheapBound(p, m, batch.parent) + refetchPj(directivesFor(p, m)))) {
      ++stats_.prunedByBound;   // its DRAM reads alone lose to the incumbent: no analysis
      ++steps_;
      continue;
    }
    const double leafCut = pruneByBound_ && m == 0 ? leafBound(p, batch.parent) : 0.0;
    if (pruneByBound_ && m == 0 && !options_.auditLeafBound && cuts(leafCut)) {
      ++stats_.prunedByBound;   // this tile's reloads alone lose to the incumbent: no analysis
      ++steps_;
      continue;
    }
    auto sol = score(p);
    if (!sol)
      continue;   // the smallest completion is valid if any is: nothing below can help
    learn(sol->result);
    const double value = objectiveValue(options_.objective, sol->result.energyPj, sol->result.latencyCycles);
    if (options_.auditLeafBound && pruneByBound_ && m == 0) {
      ++stats_.leafBoundAudits;
      stats_.leafBoundMisses += value < leafCut * (1 - 1e-9);
    }
    // A plan below its parent's bound breaks the bound's premise: the search then claims nothing.
    if (pruneByBound_ && value < batch.parent.bound * (1 - 1e-9))
      boundSafe_ = false;
    if (leaf) {
      offer(std::move(*sol));
      continue;
    }
    Decided decided;
    if (pruneByBound_) {
      decided = decidedBy(sol->result, m);
      decided.bound = std::max(decided.bound, batch.parent.bound);   // its parent's holds for it too
    } else
      decided.bound = value;   // no bound: ordered by the minimal completion's objective
    if (pruneByBound_ && cuts(decided.bound))
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
    if (pruneByBound_ && cuts(pending[k].decided.bound)) {
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
