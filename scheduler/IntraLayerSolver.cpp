#include "scheduler/IntraLayerSolver.h"

#include "scheduler/LayerAnalysis.h"

#include <algorithm>
#include <array>
#include <limits>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace dfl {
namespace {

constexpr Dim kDims[] = {Dim::N, Dim::C, Dim::K, Dim::Xo, Dim::Yo, Dim::R, Dim::S};
constexpr size_t kND = 7;


/// Loop orders tried at every level, innermost first; each keeps one tensor
/// stationary the longest (ofm: reductions innermost; wgt: N and the output
/// plane innermost; ifm: K innermost).
const std::vector<std::array<Dim, kND>> &loopOrders() {
  static const std::vector<std::array<Dim, kND>> orders = {
      {Dim::R, Dim::S, Dim::C, Dim::Xo, Dim::Yo, Dim::K, Dim::N},
      {Dim::N, Dim::Xo, Dim::Yo, Dim::R, Dim::S, Dim::C, Dim::K},
      {Dim::K, Dim::R, Dim::S, Dim::C, Dim::Xo, Dim::Yo, Dim::N},
  };
  return orders;
}

/// A candidate in the solver's space: per level, a tile and a stack factor per
/// independent dim, and a loop order. Everything else follows (docs/directives.md).
struct Plan {
  struct LevelPlan {
    std::array<int64_t, kND> tile{}, repl{};
    size_t order = 0;
    bool fixed = false;   // given by the user or the hardware: emitted verbatim
  };
  std::vector<LevelPlan> levels;   // all but the outermost
};

/// What the descent reads of a scored plan: the objective, and per level the
/// accesses (reads + writes) of each role.
struct Score {
  double value = 0;
  std::vector<std::array<double, kNumRoles>> accesses;
};

class IntraLayerSolver {
public:
  IntraLayerSolver(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *given,
                   const IntraLayerOptions &options, IntraLayerStats &stats)
      : net_(net), layerIndex_(layer), layer_(net.layers[layer]), hw_(hw), given_(given), options_(options),
        stats_(stats), firstCandidate_(stats.candidates), budget_(options.budget),
        limited_(options.budget && options.budget->limited()) {
    for (size_t i = 0; i < kND; ++i)
      bound_[i] = at(layer_.bounds, kDims[i]);
    if (layer_.channelWise())
      bound_[index(Dim::K)] = 1;   // K is C: only C is tiled
    top_ = hw.levels.size() >= 2 ? hw.levels.size() - 2 : 0;
    for (size_t i = 0; i < kND; ++i) {
      forced_[i] = at(options.fixedTopTile, kDims[i]);
      forcedStack_[i] = forced_[i] ? at(options.fixedTopStack, kDims[i]) : 0;
    }
    if (layer_.channelWise())
      forced_[index(Dim::K)] = forcedStack_[index(Dim::K)] = 0;
  }

  std::optional<IntraLayerSolution> run(SolveFailure &why) {
    const size_t nl = hw_.levels.size();
    if (nl < 2) {
      why = failure(SolveFailure::Reason::SingleLevel);
      why.hardwareName = hw_.name;
      return std::nullopt;
    }
    std::optional<IntraLayerSolution> sol = options_.search == IntraLayerSearch::Exhaustive ? exhaustive(why)
                                            : options_.search == IntraLayerSearch::Random   ? randomSearch(why)
                                                                                            : kaplaSearch(why);
    if (!stopped_)
      return sol;
    // The budget stopped the search: the best valid schedule it scored.
    stats_.limited = true;
    if (!incumbent_) {
      why = failure(SolveFailure::Reason::NoneWithinLimit);
      why.limit = budget_->hit();
    }
    return std::move(incumbent_);
  }

private:
  /// A failure of this layer, the reason's numbers to be filled in.
  SolveFailure failure(SolveFailure::Reason reason) const {
    SolveFailure f;
    f.reason = reason;
    f.layer = layerIndex_;
    f.layerName = layer_.name;
    return f;
  }

  /// Whether the search should stop where it is (the solve budget: a limit
  /// reached and a valid schedule scored, or cancelled). Once true, true.
  bool stopping() {
    if (limited_ && !stopped_)
      stopped_ = budget_->stop(incumbent_.has_value());
    return stopped_;
  }

  enum class PassOrder { StackCache, CacheStack, StackCacheStack };

  /// KAPLA's descent. The greedy is myopic; a few runs of it cost little and
  /// catch its worst misses: the three orders of its passes, with each level's
  /// loop order chosen after every pass; and two of them again with each
  /// level's passes run under each of its loop orders in turn (Algorithm 1;
  /// stack-cache adds nothing there). The best plan of each kind is polished by
  /// local descent, the better result kept — so the result is never worse than
  /// the first kind alone. The runs share most candidates (scored() memoizes).
  std::optional<IntraLayerSolution> kaplaSearch(SolveFailure &why) {
    std::optional<Plan> best[2];
    double bestValue[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    for (bool perOrder : {false, true})
      for (PassOrder order : {PassOrder::StackCache, PassOrder::CacheStack, PassOrder::StackCacheStack}) {
        if (perOrder && order == PassOrder::StackCache)
          continue;
        Plan plan = initialPlan();
        const Score *sol = descend(order, perOrder, plan, why);
        if (sol && sol->value < bestValue[perOrder]) {
          bestValue[perOrder] = sol->value;
          best[perOrder] = std::move(plan);
        }
      }
    std::optional<IntraLayerSolution> result;
    for (auto &b : best) {
      if (!b)
        continue;
      polish(*b);
      auto sol = evaluate(*b);
      if (sol && (!result || objectiveValue(options_.objective, sol->result.energyPj, sol->result.latencyCycles) <
                                 objectiveValue(options_.objective, result->result.energyPj,
                                                result->result.latencyCycles)))
        result = std::move(sol);
    }
    return result;
  }

  Plan initialPlan() const {
    Plan plan;
    plan.levels.resize(hw_.levels.size() - 1);
    for (auto &lp : plan.levels) {
      lp.tile.fill(1);
      lp.repl.fill(1);
    }
    return plan;
  }

  /// One bottom-up run of the stacking and caching passes. With `perOrder`, a
  /// level's passes run once under each of its loop orders (KAPLA's Algorithm
  /// 1), the best result kept; the order decides which tensor is the most
  /// accessed and so which dims the passes grow (a weight-gradient layer's
  /// output stays put only with N innermost). Otherwise the orders are chosen
  /// after each pass.
  const Score *descend(PassOrder order, bool perOrder, Plan &plan, SolveFailure &why) {
    const size_t nl = hw_.levels.size();
    for (size_t l = 0; l + 1 < nl; ++l) {
      if (stopping())
        return nullptr;
      decided_ = l;
      if (l > 0)
        for (size_t i = 0; i < kND; ++i)
          plan.levels[l].tile[i] = unitBelow(plan, l, i);
      if (fixedLevel(l)) {
        absorbFixed(plan, l);
        continue;
      }
      applyForced(plan, l);
      if (!fits(plan, l)) {
        why = failure(SolveFailure::Reason::DoesNotFit);
        why.level = static_cast<int>(l);
        why.levelName = hw_.levels[l].name;
        why.neededBytes = occupancy(plan, l);
        why.availableBytes = *capacity(l);
        if (l > 0 && fixedLevel(l - 1))
          why.directive = givenLevel(l - 1)->range;   // the given level below sets the smallest tiles
        return nullptr;
      }
      if (perOrder) {
        std::optional<Plan> bestLevel;
        double bestValue = std::numeric_limits<double>::infinity();
        for (size_t o = 0; o < loopOrders().size(); ++o) {
          Plan q = plan;
          q.levels[l].order = o;
          if (order != PassOrder::CacheStack)
            stack(q, l);
          cache(q, l);
          if (order != PassOrder::StackCache)
            stack(q, l);
          if (const Score *sol = scored(q); sol && sol->value < bestValue)
            bestValue = sol->value, bestLevel = std::move(q);
        }
        if (bestLevel)
          plan = std::move(*bestLevel);
        pickOrders(plan);
        continue;
      }
      if (order != PassOrder::CacheStack)
        stack(plan, l);
      pickOrders(plan);
      cache(plan, l);
      pickOrders(plan);
      if (order != PassOrder::StackCache) {
        stack(plan, l);
        pickOrders(plan);
      }
    }
    decided_ = nl;
    auto *best = scored(plan);
    if (!best)
      why = failure(SolveFailure::Reason::NoneFound);
    return best;
  }

  /// The extent level l's array tile must divide along dim i: below the
  /// forced top-level tile, that tile; elsewhere the layer bound.
  int64_t limit(size_t l, size_t i) const { return forced_[i] && l < top_ ? forced_[i] : bound_[i]; }

  /// The top level's forced tiles (the forwarding granularity) replace the
  /// inner array tile there; a multiple of it, since the levels below divide it.
  void applyForced(Plan &p, size_t l) const {
    if (l != top_ || p.levels[l].fixed)
      return;
    for (size_t i = 0; i < kND; ++i)
      if (forced_[i])
        p.levels[l].tile[i] = forced_[i];
  }

  /// The array tile of the level below along dim i (1 below level 0): level l's tile is a multiple of it.
  static int64_t unitBelow(const Plan &p, size_t l, size_t i) {
    return l == 0 ? 1 : p.levels[l - 1].tile[i] * p.levels[l - 1].repl[i];
  }

  /// The tile level l's array tile steps through along dim i: the next level's (the layer bound at the top).
  int64_t enclosingTile(const Plan &p, size_t l, size_t i) const {
    return l + 1 < p.levels.size() ? p.levels[l + 1].tile[i] : bound_[i];
  }

  bool forcedAt(size_t l, size_t i) const { return l == top_ && forced_[i] != 0; }
  /// A stack factor level l may not have along dim i (fixedTopStack).
  bool stackBarred(size_t l, size_t i, int64_t repl) const {
    return l == top_ && forcedStack_[i] != 0 && repl != forcedStack_[i];
  }

  static size_t index(Dim d) {
    for (size_t i = 0; i < kND; ++i)
      if (kDims[i] == d)
        return i;
    return 0;
  }

  bool fixedLevel(size_t l) const { return givenLevel(l) != nullptr; }

  const LevelDirectives *givenLevel(size_t l) const {
    if (given_)
      for (const LevelDirectives &d : given_->levels)
        if (d.level == static_cast<int>(l) && !d.empty())
          return &d;
    if (!hw_.levels[l].fixed.empty())
      return &hw_.levels[l].fixed;
    return nullptr;
  }

  /// A level given as written: its tile is what its tensors say, its array tile
  /// what its stacks cover; the levels above build on that.
  void absorbFixed(Plan &p, size_t l) {
    const LevelDirectives &d = *givenLevel(l);
    auto &lp = p.levels[l];
    lp.fixed = true;
    for (const TensorDirective &t : d.tensors)
      for (size_t i = 0; i < kND; ++i) {
        Dim dim = kDims[i];
        int64_t v = at(t.sizes, dim);
        if (layer_.channelWise() && dim == Dim::C && !v)
          v = at(t.sizes, Dim::K);
        if (v)
          lp.tile[i] = v;
      }
    if (!layer_.hasWeights())
      for (size_t i : {index(Dim::R), index(Dim::S)})
        lp.tile[i] = 1;
    lp.repl.fill(1);
    for (const StackDirective &s : d.stacks)
      for (auto [dim, shift] : s.shifts) {
        Dim c = layer_.channelWise() && dim == Dim::K ? Dim::C : dim;
        if (c == Dim::Xi || c == Dim::Yi)
          continue;
        size_t i = index(c);
        if (shift == lp.tile[i] * lp.repl[i])
          lp.repl[i] *= s.repl;
      }
  }

  /// Chooses each free level's loop order, innermost level first.
  void pickOrders(Plan &p) {
    for (size_t l = 0; l < p.levels.size(); ++l) {
      if (p.levels[l].fixed || stopping())
        continue;
      size_t bestOrder = p.levels[l].order;
      double best = std::numeric_limits<double>::infinity();
      for (size_t o = 0; o < loopOrders().size(); ++o) {
        p.levels[l].order = o;
        if (const Score *sol = scored(p); sol && sol->value < best)
          best = sol->value, bestOrder = o;
      }
      p.levels[l].order = bestOrder;
    }
  }

  /// Local descent after the passes: move any free level's tile or stack factor
  /// along one dim one blocked size up or down; take the best move that
  /// improves the objective; repeat until none does.
  void polish(Plan &p) {
    decided_ = p.levels.size();
    auto current = scored(p);
    if (!current)
      return;
    double now = current->value;
    for (int round = 0; round < 64 && !stopping(); ++round) {
      std::optional<Plan> bestMove;
      double bestValue = now;
      // Keeps q if it is valid and strictly better than the best move so far.
      auto consider = [&](const Plan &q) {
        if (stopping())
          return;
        const Score *sol = scored(q);
        if (!sol)
          return;
        double value = sol->value;
        if (value < bestValue * (1 - 1e-12)) {
          bestValue = value;
          bestMove = q;
        }
      };
      for (size_t l = 0; l < p.levels.size(); ++l) {
        if (p.levels[l].fixed)
          continue;
        for (size_t i = 0; i < kND; ++i)
          for (int kind = 0; kind < 7; ++kind) {
            Plan q = p;
            auto &lp = q.levels[l];
            if (kind == 6) {
              jump(q, l, i, consider);
              continue;
            }
            if (kind >= 4) {
              // Coupled move: grow this level's tile (4) or stack factor (5)
              // one blocked step and enlarge the levels above just enough to
              // stay blocked — a single-dim move cannot leave a minimum where
              // the next level's tile pins this one.
              if (lift(q, l, i, kind == 5))
                consider(q);
              continue;
            }
            int64_t unit = unitBelow(q, l, i);
            int64_t &x = kind < 2 ? lp.tile[i] : lp.repl[i];
            int64_t step = kind < 2 ? unit : 1;
            int64_t v = x;
            do
              v += (kind % 2 == 0 ? step : -step);
            while (v >= 1 && v <= bound_[i] && !blockedOk(q, l, i, kind < 2 ? v : lp.tile[i], kind < 2 ? lp.repl[i] : v));
            if (v < 1 || v > bound_[i] || v == x)
              continue;
            x = v;
            if (arrayFits(q, l) && fits(q, l))
              consider(q);
          }
      }
      if (!bestMove)
        return;
      p = *bestMove;
      pickOrders(p);
      const Score *sol = scored(p);
      now = sol ? sol->value : bestValue;
    }
  }

  /// Plateau move: level l's tile along dim i to its largest blocked size
  /// (the whole dim where it divides), with one other dim's tile shrunk to
  /// the largest blocked size that makes the level fit again. A dim whose
  /// reuse appears only once the tile covers it whole (the ifm of a 1x1 conv
  /// stays put across K only with all of C) gains nothing from the single
  /// steps before that, so the greedy and the one-step moves never cross to it.
  template <class F>
  void jump(const Plan &p, size_t l, size_t i, F &&consider) {
    const auto &lp = p.levels[l];
    int64_t unit = unitBelow(p, l, i);
    int64_t top = 0;
    for (int64_t t = unit; t * lp.repl[i] <= limit(l, i); t += unit)
      if (blockedOk(p, l, i, t, lp.repl[i]))
        top = t;
    if (top <= lp.tile[i])
      return;
    Plan q = p;
    q.levels[l].tile[i] = top;
    if (!arrayFits(q, l))
      return;
    if (fits(q, l)) {
      consider(q);
      return;
    }
    for (size_t j = 0; j < kND; ++j) {
      if (j == i)
        continue;
      Plan r = q;
      int64_t uj = unitBelow(r, l, j);
      for (int64_t v = r.levels[l].tile[j] - uj; v >= uj; v -= uj) {
        if (!blockedOk(r, l, j, v, r.levels[l].repl[j]))
          continue;
        r.levels[l].tile[j] = v;
        if (fits(r, l)) {
          consider(r);
          break;
        }
      }
    }
  }

  /// Grows level l's tile (or stack factor) along dim i to its next blocked
  /// size, then each level above to the smallest tile that is a multiple of
  /// the array tile below it; false if the result is not blocked or does not fit.
  bool lift(Plan &q, size_t l, size_t i, bool stacking) const {
    auto &lp = q.levels[l];
    if (stacking) {
      int64_t next = nextBlocked(lp.tile[i] * lp.repl[i], lp.tile[i], limit(l, i));
      if (!next)
        return false;
      lp.repl[i] = next / lp.tile[i];
    } else {
      int64_t unit = unitBelow(q, l, i);
      int64_t next = nextBlocked(lp.tile[i], unit, limit(l, i));
      if (!next)
        return false;
      lp.tile[i] = next;
    }
    for (size_t m = l + 1; m < q.levels.size(); ++m) {
      if (q.levels[m].fixed)
        return false;
      int64_t unit = q.levels[m - 1].tile[i] * q.levels[m - 1].repl[i];
      int64_t &t = q.levels[m].tile[i];
      if (t % unit == 0)
        break;
      int64_t grown = unit;
      while (grown < t)
        grown += unit;
      t = grown;
    }
    for (size_t m = l; m < q.levels.size(); ++m)
      if (!q.levels[m].fixed && (!blockedOk(q, m, i, q.levels[m].tile[i], q.levels[m].repl[i]) ||
                                 !arrayFits(q, m) || !fits(q, m)))
        return false;
    return true;
  }

  /// Level l with (tile, repl) along dim i keeps every level's blocking exact:
  /// the tile is a multiple of the inner array tile and the array tile divides
  /// both the bound and the next level's tile.
  bool blockedOk(const Plan &p, size_t l, size_t i, int64_t tile, int64_t repl) const {
    if (tile < 1 || repl < 1)
      return false;
    int64_t unit = unitBelow(p, l, i);
    int64_t array = tile * repl;
    if (tile % unit || limit(l, i) % array || (forcedAt(l, i) && tile != forced_[i]) || stackBarred(l, i, repl))
      return false;
    if (l + 1 < p.levels.size() && p.levels[l + 1].tile[i] % array)
      return false;
    return true;
  }

  // ---- random search (Timeloop's random mapper, for comparison) ------------------------
  /// Draws plans uniformly per level and dim among the blocked sizes (tile, then
  /// stack factor, then loop order), keeps the best valid one.
  std::optional<IntraLayerSolution> randomSearch(SolveFailure &why) {
    std::mt19937_64 rng(options_.seed + static_cast<uint64_t>(layerIndex_) * 7919);
    std::optional<IntraLayerSolution> best;
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
          for (int64_t t = unit; t <= whole; t += unit)
            if (whole % t == 0 && (!forcedAt(l, i) || t == forced_[i]))
              for (int64_t r = 1; t * r <= bound_[i]; ++r)
                if (whole % (t * r) == 0 && !stackBarred(l, i, r))
                  choices.emplace_back(t, r);
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
      }
    }
    if (!best) {
      why = failure(SolveFailure::Reason::NoneAmongSamples);
      why.samples = samples;
    }
    return best;
  }

  // ---- exhaustive search (the yardstick): branch and bound, top-down -------------------
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

  std::optional<IntraLayerSolution> exhaustive(SolveFailure &why) {
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
      if (allGiven && given_)
        why.directive = given_->range;
    }
    return std::move(exBest_);
  }

  /// Every free level at its smallest: tile = the array tile below, no stacks.
  Plan minimalPlan() {
    Plan p = initialPlan();
    for (size_t l = 0; l < p.levels.size(); ++l) {
      if (fixedLevel(l)) {
        absorbFixed(p, l);
        continue;
      }
      for (size_t i = 0; i < kND; ++i)
        p.levels[l].tile[i] = unitBelow(p, l, i);
    }
    return p;
  }

  /// The per-layer cap (maxCandidates) is reached, or the solve budget says stop.
  bool exhausted() {
    if (options_.maxCandidates > 0 && stats_.candidates - firstCandidate_ >= options_.maxCandidates) {
      stats_.capped = true;
      return true;
    }
    return stopping();
  }

  /// Decides the highest free level at or below m, best bound first; levels
  /// above m are decided, those below hold the minimal completion.
  void branch(Plan &p, size_t m) {
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

  /// Every (tile, stack factor) of level m along dims >= dim, the dims after
  /// `dim` at their smallest; prunes only partial levels that cannot fit.
  void enumerateLevel(Plan &p, size_t m, size_t dim, bool leaf, Batch &batch) {
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
    std::vector<int64_t> sizes;   // multiples of the inner array tile dividing the enclosing tile
    for (int64_t s = unit; s <= enclosing; s += unit)
      if (enclosing % s == 0)
        sizes.push_back(s);
    const auto saved = lp;
    // Largest array tiles first (fewest trips at this level): the first batch
    // of a huge level then holds the candidates good schedules are made of.
    for (auto a = sizes.rbegin(); a != sizes.rend() && !exhausted(); ++a) {
      if (limit(m, dim) % *a)
        continue;
      for (auto t = std::find(sizes.rbegin(), sizes.rend(), *a); t != sizes.rend() && !exhausted(); ++t) {
        if (*a % *t || (forcedAt(m, dim) && *t != forced_[dim]) || stackBarred(m, dim, *a / *t))
          continue;
        lp.tile[dim] = *t;
        lp.repl[dim] = *a / *t;
        if (unitsOf(lp) > unitsAllowed(m) || !fitsPartial(p, m))
          continue;   // a smaller tile or stack factor may still fit
        enumerateLevel(p, m, dim + 1, leaf, batch);
      }
    }
    lp = saved;
  }

  /// Scores level m's assignment under each loop order with distinct updates:
  /// on the lowest free level the plan is complete (offered as a solution);
  /// above, the score is the subtree's bound.
  void scoreOrders(Plan &p, size_t m, bool leaf, Batch &batch) {
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
      if (pruneByBound_)
        for (size_t b = 0; b < m; ++b)
          bound -= sol->result.levels[b].boundaryEnergyPj;
      if (pruneByBound_ && bound >= exBestValue_)
        ++stats_.prunedByBound;
      else
        batch.pending.push_back({lp, bound});
      if (++batch.scored >= kBatch)
        expand(p, m, batch);
    }
  }

  /// Recurses into the pending candidates of level m, lowest bound first, until
  /// the bound reaches the incumbent.
  void expand(Plan &p, size_t m, Batch &batch) {
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

  /// A complete valid plan: the new incumbent if better. A negative boundary
  /// term would break the bound's premise: the search then claims nothing.
  void offer(IntraLayerSolution sol) {
    for (const LevelResult &lr : sol.result.levels)
      if (lr.boundaryEnergyPj < 0)
        boundSafe_ = false;
    double v = objectiveValue(options_.objective, sol.result.energyPj, sol.result.latencyCycles);
    if (v < exBestValue_) {
      exBestValue_ = v;
      exBest_ = std::move(sol);
    }
  }

  static int64_t unitsOf(const Plan::LevelPlan &lp) {
    int64_t u = 1;
    for (int64_t r : lp.repl)
      u *= r;
    return u;
  }

  /// Occupancy with the dims not yet chosen at their smallest (their current value).
  bool fitsPartial(const Plan &p, size_t l) const {
    auto cap = capacity(l);
    return !cap || occupancy(p, l) <= *cap;
  }

  /// Level l's capacity as this solve may use it: the node level's less the
  /// reserve (IntraLayerOptions::reservedTopBytes). Every capacity check of
  /// every search goes through here (and score() re-checks the analysis').
  std::optional<int64_t> capacity(size_t l) const {
    const Level &lv = hw_.levels[l];
    if (!lv.capacityBytes)
      return std::nullopt;
    return l == top_ ? *lv.capacityBytes - options_.reservedTopBytes : *lv.capacityBytes;
  }

  // ---- sizes ----------------------------------------------------------------------
  int64_t windowIn(int64_t out, int64_t win) const { return (out - 1) * layer_.stride + (win - 1) * layer_.dilation + 1; }

  /// Words of a role's tile at level l (for capacity checks before evaluation).
  int64_t tileWords(const Plan &p, size_t l, TensorRole r) const {
    const auto &t = p.levels[l].tile;
    auto v = [&](Dim d) { return t[index(d)]; };
    int64_t c = v(Dim::C), k = layer_.channelWise() ? v(Dim::C) : v(Dim::K);
    switch (r) {
    case TensorRole::Ifm: return v(Dim::N) * c * windowIn(v(Dim::Xo), v(Dim::R)) * windowIn(v(Dim::Yo), v(Dim::S));
    case TensorRole::Wgt: return layer_.channelWise() ? c * v(Dim::R) * v(Dim::S) : k * c * v(Dim::R) * v(Dim::S);
    case TensorRole::Ofm: return v(Dim::N) * k * v(Dim::Xo) * v(Dim::Yo);
    }
    return 0;
  }

  int64_t occupancy(const Plan &p, size_t l) const {
    int64_t words = 0;
    for (TensorRole r : layer_.roles())
      words += tileWords(p, l, r);
    return words * hw_.wordBytes();
  }

  /// The level's tiles fit its buffer, and the stacked tile fits the next level's (so a completion exists).
  bool fits(const Plan &p, size_t l) const {
    if (!fitsPartial(p, l))
      return false;
    if (l + 2 < hw_.levels.size() && capacity(l + 1)) {
      Plan q = p;
      for (size_t i = 0; i < kND; ++i)
        q.levels[l + 1].tile[i] = p.levels[l].tile[i] * p.levels[l].repl[i];
      if (occupancy(q, l + 1) > *capacity(l + 1))
        return false;
    }
    return true;
  }

  int64_t unitsAllowed(size_t l) const {
    int64_t u = hw_.levels[l].units();
    if (l + 2 == hw_.levels.size() && options_.maxNodes > 0)
      u = std::min(u, options_.maxNodes);
    return u;
  }

  bool arrayFits(const Plan &p, size_t l) const {
    std::vector<int64_t> repls;
    for (int64_t r : p.levels[l].repl)
      if (r > 1)
        repls.push_back(r);
    const Level &lv = hw_.levels[l];
    int64_t total = 1;
    for (int64_t r : repls)
      total *= r;
    if (total > unitsAllowed(l))
      return false;
    for (size_t mask = 0; mask < (size_t{1} << repls.size()); ++mask) {
      int64_t rows = 1, cols = 1;
      for (size_t i = 0; i < repls.size(); ++i)
        ((mask >> i) & 1 ? rows : cols) *= repls[i];
      if (rows <= lv.rows && cols <= lv.cols)
        return true;
    }
    return false;
  }

  /// The next blocked size: the smallest multiple m of `unit` above `current`
  /// with m dividing `whole` (so every level still covers its enclosing tile exactly).
  static int64_t nextBlocked(int64_t current, int64_t unit, int64_t whole) {
    for (int64_t m = current + unit; m <= whole; m += unit)
      if (whole % m == 0)
        return m;
    return 0;
  }

  // ---- the two passes (§IV-C) --------------------------------------------------------
  void stack(Plan &p, size_t l) { grow(p, l, true); }
  void cache(Plan &p, size_t l) { grow(p, l, false); }

  /// Repeatedly enlarges one dim by one blocked step (stacking: the stack factor;
  /// caching: the tile), choosing by KAPLA's rule, while the result stays valid.
  void grow(Plan &p, size_t l, bool stacking) {
    for (int guard = 0; guard < 256 && !stopping(); ++guard) {
      auto current = scored(p);
      if (!current)
        return;
      // Tensors by current accesses at this level's boundary, most accessed first.
      const std::array<double, kNumRoles> acc = current->accesses[l + 1];
      std::vector<size_t> ranked{0, 1, 2};
      std::sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) { return acc[a] > acc[b]; });

      struct Candidate {
        Plan plan;
        std::array<double, kNumRoles> acc;
        double objective;
      };
      std::vector<Candidate> cands;
      for (size_t i = 0; i < kND; ++i) {
        Plan q = p;
        auto &lp = q.levels[l];
        int64_t whole = limit(l, i);
        if (stacking) {
          int64_t next = nextBlocked(lp.tile[i] * lp.repl[i], lp.tile[i], whole);
          if (!next || stackBarred(l, i, next / lp.tile[i]))
            continue;
          lp.repl[i] = next / lp.tile[i];
          if (!arrayFits(q, l))
            continue;
        } else {
          int64_t unit = unitBelow(p, l, i);
          int64_t next = forcedAt(l, i) ? 0 : nextBlocked(lp.tile[i], unit, whole / lp.repl[i]);
          if (!next || (whole / lp.repl[i]) * lp.repl[i] != whole)
            continue;
          lp.tile[i] = next;
        }
        if (!fits(q, l))
          continue;
        if (stopping())
          return;
        const Score *sol = scored(q);
        if (!sol)
          continue;
        cands.push_back(Candidate{q, sol->accesses[l + 1], sol->value});
      }
      // Cost descent: only steps that improve the objective (stacking may also keep it
      // equal: it buys parallelism); among them KAPLA's choice — the one that helps the
      // most accessed tensor most, ties broken by the second, then by the objective.
      double now = current->value;
      std::erase_if(cands, [&](const Candidate &c) {
        return stacking ? c.objective > now * (1 + 1e-12) : c.objective >= now * (1 - 1e-12);
      });
      if (cands.empty())
        return;
      auto better = [&](const Candidate &a, const Candidate &b) {
        for (size_t r : ranked) {
          if (a.acc[r] < b.acc[r] * (1 - 1e-9))
            return true;
          if (b.acc[r] < a.acc[r] * (1 - 1e-9))
            return false;
        }
        return a.objective < b.objective;
      };
      const Candidate *best = &cands[0];
      for (const Candidate &c : cands)
        if (better(c, *best))
          best = &c;
      p = best->plan;
    }
  }

  // ---- evaluation: plan -> directives -> the checker's analysis ----------------------------
  LevelDirectives directivesFor(const Plan &p, size_t l) const {
    if (const LevelDirectives *g = p.levels[l].fixed ? givenLevel(l) : nullptr) {
      LevelDirectives d = *g;
      d.level = static_cast<int>(l);
      return d;
    }
    const auto &lp = p.levels[l];
    LevelDirectives d;
    d.level = static_cast<int>(l);
    auto v = [&](Dim dim) { return lp.tile[index(dim)]; };
    for (TensorRole r : layer_.roles()) {
      TensorDirective t;
      t.role = r;
      for (Dim dim : roleDims(r)) {
        Dim c = layer_.channelWise() && dim == Dim::K ? Dim::C : dim;
        int64_t size = dim == Dim::Xi   ? windowIn(v(Dim::Xo), v(Dim::R))
                       : dim == Dim::Yi ? windowIn(v(Dim::Yo), v(Dim::S))
                                        : v(c);
        if (layer_.channelWise() && r == TensorRole::Wgt && dim == Dim::K)
          continue;   // dwconv weights: [C, R, S]
        at(t.sizes, dim) = size;
      }
      d.tensors.push_back(t);
    }
    auto moveOf = [&](Dim dim, int64_t amount) {
      std::vector<std::pair<Dim, int64_t>> m{{dim, amount}};
      if (dim == Dim::Xo)
        m.push_back({Dim::Xi, amount * layer_.stride});
      if (dim == Dim::Yo)
        m.push_back({Dim::Yi, amount * layer_.stride});
      if (dim == Dim::R)
        m.push_back({Dim::Xi, amount * layer_.dilation});
      if (dim == Dim::S)
        m.push_back({Dim::Yi, amount * layer_.dilation});
      return m;
    };
    for (size_t i = 0; i < kND; ++i)
      if (lp.repl[i] > 1) {
        StackDirective s;
        s.shifts = moveOf(kDims[i], lp.tile[i]);
        s.repl = lp.repl[i];
        d.stacks.push_back(s);
      }
    for (Dim dim : loopOrders()[lp.order]) {
      size_t i = index(dim);
      int64_t step = lp.tile[i] * lp.repl[i];
      if (step < enclosingTile(p, l, i)) {
        UpdateDirective u;
        u.steps = moveOf(dim, step);
        d.updates.push_back(u);
      }
    }
    return d;
  }

  /// Scores the plan as it stands, levels above the one being decided holding
  /// just their inner array tile (the smallest valid completion).
  std::optional<IntraLayerSolution> evaluate(const Plan &p) { return score(completed(p)); }

  Plan completed(const Plan &p) const {
    Plan q = p;
    for (size_t l = decided_ + 1; l < q.levels.size(); ++l) {
      if (q.levels[l].fixed)
        continue;
      for (size_t i = 0; i < kND; ++i) {
        q.levels[l].tile[i] = unitBelow(q, l, i);
        q.levels[l].repl[i] = 1;
      }
      applyForced(q, l);
    }
    return q;
  }

  /// evaluate(), memoized, reduced to a Score (null: invalid): the descent's
  /// runs and passes meet the same completed plans again and again.
  const Score *scored(const Plan &p) {
    const Plan q = completed(p);
    std::string key;
    key.reserve(q.levels.size() * (2 * kND + 2) * sizeof(int64_t));
    auto put = [&](int64_t v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); };
    for (const auto &lp : q.levels) {
      for (size_t i = 0; i < kND; ++i)
        put(lp.tile[i]), put(lp.repl[i]);
      put(static_cast<int64_t>(lp.order)), put(lp.fixed);
    }
    auto it = memo_.find(key);
    if (it == memo_.end()) {
      std::optional<Score> s;
      if (auto sol = score(q)) {
        s.emplace();
        s->value = objectiveValue(options_.objective, sol->result.energyPj, sol->result.latencyCycles);
        for (const LevelResult &lr : sol->result.levels) {
          auto &a = s->accesses.emplace_back();
          for (size_t r = 0; r < kNumRoles; ++r)
            a[r] = lr.accesses.reads[r] + lr.accesses.writes[r];
        }
      }
      it = memo_.emplace(std::move(key), std::move(s)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  std::optional<IntraLayerSolution> score(const Plan &p) {
    ++stats_.candidates;
    if (budget_)
      budget_->scored();
    IntraLayerSolution s;
    s.schedule.layer = layerIndex_;
    for (size_t l = 0; l < p.levels.size(); ++l)
      s.schedule.levels.push_back(directivesFor(p, l));
    std::vector<Issue> issues;
    s.result = analyzeLayer(net_, layerIndex_, hw_, &s.schedule, issues);
    // The reserve, on the analysis' own occupancy: also where a level is
    // given (by the hardware) rather than chosen.
    auto cap = top_ < s.result.levels.size() ? capacity(top_) : std::nullopt;
    bool reserved = options_.reservedTopBytes > 0 && cap && s.result.levels[top_].occupancyBytes > *cap;
    if (!issues.empty() || !s.result.complete || reserved) {
      ++stats_.rejected;
      return std::nullopt;
    }
    if (limited_) {   // the incumbent, should the budget stop the search
      double v = objectiveValue(options_.objective, s.result.energyPj, s.result.latencyCycles);
      if (!incumbent_ || v < incumbentValue_)
        incumbentValue_ = v, incumbent_ = s;
    }
    return s;
  }

  const Network &net_;
  int layerIndex_;
  const Layer &layer_;
  const Hardware &hw_;
  const LayerScheduleModel *given_;
  IntraLayerOptions options_;
  IntraLayerStats &stats_;
  const int64_t firstCandidate_;   // the cap is per layer; stats may add up several (a segment's layers)
  std::array<int64_t, kND> bound_{};
  std::array<int64_t, kND> forced_{};   // the forwarding granularity at top_ (0: free)
  std::array<int64_t, kND> forcedStack_{};   // its stack factor at top_ (0: free)
  size_t top_ = 0;                      // the level whose units are the nodes
  size_t decided_ = 0;
  std::unordered_map<std::string, std::optional<Score>> memo_;   // scored()'s results by completed plan
  std::optional<IntraLayerSolution> exBest_;   // exhaustive: the incumbent
  double exBestValue_ = 0;
  bool pruneByBound_ = false;   // exhaustive, objective energy
  bool boundSafe_ = true;       // no boundary term seen negative
  BudgetMeter *budget_;         // the solve's (null: none)
  const bool limited_;          // it has a limit: the incumbent is kept, stopping() asks it
  bool stopped_ = false;        // a search stopped at the budget
  std::optional<IntraLayerSolution> incumbent_;   // the best valid schedule scored (limited_ only)
  double incumbentValue_ = 0;
};

} // namespace

const char *objectiveName(Objective o) {
  switch (o) {
  case Objective::Energy: return "energy";
  case Objective::Latency: return "latency";
  case Objective::EDP: return "edp";
  }
  return "energy";
}

double objectiveValue(Objective o, double energyPj, double latencyCycles) {
  switch (o) {
  case Objective::Energy: return energyPj;
  case Objective::Latency: return latencyCycles;
  case Objective::EDP: return energyPj * latencyCycles;
  }
  return energyPj;
}

std::optional<IntraLayerSolution> solveLayer(const Network &net, int layer, const Hardware &hw,
                                             const LayerScheduleModel *given, const IntraLayerOptions &options,
                                             IntraLayerStats &stats, SolveFailure &why) {
  return IntraLayerSolver(net, layer, hw, given, options, stats).run(why);
}

} // namespace dfl
