#include "scheduler/kapla/KaplaDescent.h"

#include "scheduler/analysis/Floors.h"

#include <algorithm>
#include <limits>
#include <random>

namespace dfl::intra {

namespace {

/// Keeps `sol` in `best` if it is valid and strictly better by the objective
/// (an earlier result wins a tie); true if it did.
bool keepBetter(Objective o, std::optional<IntraLayerSolution> &best, std::optional<IntraLayerSolution> sol) {
  if (!sol || (best && objectiveValue(o, sol->result.energyPj, sol->result.latencyCycles) >=
                           objectiveValue(o, best->result.energyPj, best->result.latencyCycles)))
    return false;
  best = std::move(sol);
  return true;
}

} // namespace

std::optional<IntraLayerSolution> KaplaDescent::kaplaSearch(SolveFailure &why) {
  // Where a role bypasses a level, the two rankings of the tensors (below,
  // boundaryAccesses) differ and lead the greedy to different tiles, each
  // the better on some layers: both are run, the better result kept. On the
  // KAPLA template they are one ranking, run once.
  holderRanking_ = false;
  std::optional<IntraLayerSolution> result = rankedSearch(why);
  const bool bypass = std::any_of(hw_.levels.begin(), hw_.levels.end(), [](const Level &lv) { return lv.bypasses(); });
  if (bypass) {
    holderRanking_ = true;
    SolveFailure ignored;
    keepBetter(options_.objective, result, rankedSearch(result ? ignored : why));
  }
  if ((bypass || std::any_of(hw_.levels.begin(), hw_.levels.end(), [](const Level &lv) { return lv.buffers.size() > 1; })) &&
      !nearFloor(result))
    keepBetter(options_.objective, result, sampledStarts());
  return result;
}

bool KaplaDescent::nearFloor(const std::optional<IntraLayerSolution> &s) const {
  if (!s || options_.objective != Objective::Energy || !operandsResolved())
    return false;
  // Against the floor less its on-chip words, as kNearFloor was set: the
  // sampled starts still gain a little on some layers within 5 % of the
  // whole floor (MobileNet on eyeriss_pspad: 0.09 %).
  const double floor = layerFloor(net_, layerIndex_, hw_, layerIndex_, layerIndex_).energyPj -
                       onChipFloor(net_, layerIndex_, hw_, layerIndex_, layerIndex_).totalPj();
  return s->result.energyPj <= floor * (1 + kNearFloor);
}

std::optional<IntraLayerSolution> KaplaDescent::sampledStarts() {
  // Seeded by the layer's shape, not its index: layers of one shape share
  // their solves (whichever thread makes it), so they must draw alike.
  std::seed_seq seq(bound_.begin(), bound_.end());
  std::mt19937_64 rng(seq);
  rng.discard(options_.seed);
  uneven_ = true;
  decided_ = hw_.levels.size();
  std::vector<std::pair<double, Plan>> drawn;
  for (int k = 0; k < kSampledStarts && !stopping(); ++k)
    if (std::optional<Plan> p = drawPlan(rng))
      if (const Score *s = scored(*p))
        drawn.emplace_back(s->value, std::move(*p));
  const size_t kept = std::min<size_t>(kPolishedStarts, drawn.size());
  std::partial_sort(drawn.begin(), drawn.begin() + static_cast<std::ptrdiff_t>(kept), drawn.end(),
                    [](const auto &a, const auto &b) { return a.first < b.first; });
  std::optional<IntraLayerSolution> result;
  for (size_t k = 0; k < kept; ++k) {
    polish(drawn[k].second);
    // Then the stack jumps too, from where the one-dim moves stop: never
    // worse than that (docs/solver.md, "Sampled starts").
    polish(drawn[k].second, true);
    keepBetter(options_.objective, result, evaluate(drawn[k].second));
  }
  return result;
}

std::optional<IntraLayerSolution> KaplaDescent::rankedSearch(SolveFailure &why) {
  // Exact tiles first (every level divides its enclosing tile): all runs, as
  // before partial tiles. Then with partial last tiles: the exact result
  // polished in the larger space, and the greedy in it — one run under the
  // energy objective (the finer steps cost time, and energy gains little from
  // busy arrays), all runs under latency and EDP (docs/solver.md, "Partial
  // tiles"). The best is kept: never worse than the exact space's.
  uneven_ = false;
  Plan evenPlan;
  std::optional<IntraLayerSolution> result = descentRuns(why, true, &evenPlan);
  uneven_ = true;
  auto keep = [&](std::optional<IntraLayerSolution> sol) { keepBetter(options_.objective, result, std::move(sol)); };
  if (result) {
    polish(evenPlan);
    keep(evaluate(evenPlan));
  }
  SolveFailure ignored;
  keep(descentRuns(result ? ignored : why, options_.objective != Objective::Energy, nullptr));
  return result;
}

std::optional<IntraLayerSolution> KaplaDescent::descentRuns(SolveFailure &why, bool allRuns, Plan *bestPlan) {
  std::optional<Plan> best[2];
  double bestValue[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  for (bool perOrder : {false, true})
    for (PassOrder order : {PassOrder::StackCache, PassOrder::CacheStack, PassOrder::StackCacheStack}) {
      if ((perOrder && order == PassOrder::StackCache) || (!allRuns && (perOrder || order != PassOrder::StackCache)))
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
    if (keepBetter(options_.objective, result, evaluate(*b)) && bestPlan)
      *bestPlan = *b;
  }
  return result;
}

const Score *KaplaDescent::descend(PassOrder order, bool perOrder, Plan &plan, SolveFailure &why) {
  const size_t nl = hw_.levels.size();
  for (size_t l = 0; l + 1 < nl; ++l) {
    if (stopping())
      return nullptr;
    decided_ = l;
    const LevelStart start = startLevel(plan, l, why);
    if (start == LevelStart::DoesNotFit)
      return nullptr;
    if (start == LevelStart::Given)
      continue;
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
  if (!best) {
    why = failure(SolveFailure::Reason::NoneFound);
    explain(plan, why);
  }
  return best;
}

void KaplaDescent::pickOrders(Plan &p) {
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

void KaplaDescent::polish(Plan &p, bool stackJumps) {
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
        for (int kind = 0; kind < (stackJumps ? 8 : 7); ++kind) {
          Plan q = p;
          auto &lp = q.levels[l];
          if (kind == 7) {
            stackJump(q, l, i, consider);
            continue;
          }
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
          int64_t &x = kind < 2 ? lp.tile[i] : lp.repl[i];
          int64_t v = x;
          if (kind < 2) {   // the neighbouring blocked size that keeps the plan blocked
            const auto &sizes = blockedSizes(unitBelow(q, l, i), limit(l, i), uneven_);
            v = 0;
            for (size_t k = 0; k < sizes.size(); ++k) {
              int64_t s = kind == 0 ? sizes[k] : sizes[sizes.size() - 1 - k];
              if ((kind == 0 ? s > x : s < x) && blockedOk(q, l, i, s, lp.repl[i])) {
                v = s;
                break;
              }
            }
          } else {
            v = neighbourRepl(q, l, i, kind == 2);
          }
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

template <class F>
void KaplaDescent::jump(const Plan &p, size_t l, size_t i, F &&consider) {
  const auto &lp = p.levels[l];
  int64_t top = 0;
  for (int64_t t : blockedSizes(unitBelow(p, l, i), limit(l, i), uneven_))
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
  refit(q, l, i, consider);
}

template <class F>
void KaplaDescent::refit(const Plan &q, size_t m, size_t i, F &&each) {
  for (size_t j = 0; j < kND; ++j) {
    if (j == i)
      continue;
    Plan r = q;
    const auto &sizes = blockedSizes(unitBelow(r, m, j), limit(m, j), uneven_);
    for (auto s = sizes.rbegin(); s != sizes.rend(); ++s) {
      int64_t v = *s;
      if (v >= q.levels[m].tile[j] || !blockedOk(r, m, j, v, r.levels[m].repl[j]))
        continue;
      r.levels[m].tile[j] = v;
      if (fits(r, m)) {
        each(r);
        break;
      }
    }
  }
}

int64_t KaplaDescent::neighbourRepl(const Plan &q, size_t l, size_t i, bool up) const {
  const auto &lp = q.levels[l];
  const int64_t x = lp.repl[i], tile = lp.tile[i];
  if (bound_[i] <= kEveryStepLimit) {   // every factor: what the descent always did here
    int64_t v = x;
    do
      v += up ? 1 : -1;
    while (v >= 1 && v <= bound_[i] && !blockedOk(q, l, i, tile, v));
    return v;
  }
  // A large dim: the factors that make the array tile a blocked size of the
  // enclosing tile over this tile (a bounded set), not every integer up to
  // the dim (a batch of 2^31 made this loop run 2^31 times).
  int64_t best = 0;
  for (int64_t s : blockedSizes(tile, enclosingTile(q, l, i), uneven_)) {
    const int64_t v = replFor(s, tile);
    if ((up ? v > x && (!best || v < best) : v < x && v > best) && blockedOk(q, l, i, tile, v))
      best = v;
  }
  return best;
}

bool KaplaDescent::lift(Plan &q, size_t l, size_t i, bool stacking) const {
  auto &lp = q.levels[l];
  if (stacking) {
    int64_t next = nextBlocked(lp.tile[i] * lp.repl[i], lp.tile[i], limit(l, i), uneven_);
    if (!next)
      return false;
    lp.repl[i] = replFor(next, lp.tile[i]);
  } else {
    int64_t unit = unitBelow(q, l, i);
    int64_t next = nextBlocked(lp.tile[i], unit, limit(l, i), uneven_);
    if (!next)
      return false;
    lp.tile[i] = next;
  }
  return liftAbove(q, l, i) && fitsFrom(q, l, i);
}

bool KaplaDescent::liftAbove(Plan &q, size_t l, size_t i) const {
  for (size_t m = l + 1; m < q.levels.size(); ++m) {
    if (q.levels[m].fixed)
      return false;
    int64_t unit = q.levels[m - 1].tile[i] * q.levels[m - 1].repl[i];
    int64_t &t = q.levels[m].tile[i];
    if ((t % unit == 0 || (uneven_ && t == limit(m, i))) && covers(q.levels[m - 1].tile[i], q.levels[m - 1].repl[i], t))
      break;
    const int64_t grown = std::max(unit, (t + unit - 1) / unit * unit);   // the smallest multiple >= t
    t = uneven_ ? std::min(grown, limit(m, i)) : grown;   // uneven: the whole limit, over-covered by a partial tile
  }
  return true;
}

bool KaplaDescent::fitsFrom(const Plan &q, size_t l, size_t i) const {
  for (size_t m = l; m < q.levels.size(); ++m)
    if (!q.levels[m].fixed && (!blockedOk(q, m, i, q.levels[m].tile[i], q.levels[m].repl[i]) ||
                               !arrayFits(q, m) || !fits(q, m)))
      return false;
  return true;
}

template <class F>
void KaplaDescent::stackJump(const Plan &p, size_t l, size_t i, F &&consider) {
  Plan q = p;
  auto &lp = q.levels[l];
  const int64_t r = replFor(limit(l, i), lp.tile[i]);
  if (r <= lp.repl[i] || stackBarred(l, i, r))
    return;
  lp.repl[i] = r;
  if (!arrayFits(q, l) || !liftAbove(q, l, i))
    return;
  // The lowest level above that no longer fits gives room along one other dim.
  size_t m = l + 1;
  while (m < q.levels.size() && (q.levels[m].fixed || fits(q, m)))
    ++m;
  if (m == q.levels.size()) {
    if (fitsFrom(q, l, i))
      consider(q);
    return;
  }
  refit(q, m, i, [&](const Plan &r) {
    if (fitsFrom(r, l, i))
      consider(r);
  });
}

std::array<double, kNumRoles> KaplaDescent::boundaryAccesses(const Score &s, size_t l) const {
  std::array<double, kNumRoles> acc{};
  for (size_t r = 0; r < kNumRoles; ++r)
    acc[r] = s.accesses[holderRanking_ ? hw_.holderAbove(l, static_cast<TensorRole>(r)) : l + 1][r];
  return acc;
}

void KaplaDescent::grow(Plan &p, size_t l, bool stacking) {
  for (int guard = 0; guard < 256 && !stopping(); ++guard) {
    auto current = scored(p);
    if (!current)
      return;
    // Tensors by current accesses at this level's boundary, most accessed first.
    const std::array<double, kNumRoles> acc = boundaryAccesses(*current, l);
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
        int64_t next = nextBlocked(lp.tile[i] * lp.repl[i], lp.tile[i], whole, uneven_);
        if (!next || stackBarred(l, i, replFor(next, lp.tile[i])))
          continue;
        lp.repl[i] = replFor(next, lp.tile[i]);
        if (!arrayFits(q, l))
          continue;
      } else {
        // The tiles that split the share of one stacked unit, ceil(whole / repl).
        int64_t unit = unitBelow(p, l, i);
        int64_t share = (whole + lp.repl[i] - 1) / lp.repl[i];
        int64_t next = forcedAt(l, i) ? 0 : nextBlocked(lp.tile[i], unit, share, uneven_);
        if (!next || !covers(next, lp.repl[i], whole) || (!uneven_ && whole % lp.repl[i]))
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
      cands.push_back(Candidate{q, boundaryAccesses(*sol, l), sol->value});
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

} // namespace dfl::intra
