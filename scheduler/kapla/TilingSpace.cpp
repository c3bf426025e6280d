#include "scheduler/kapla/TilingSpace.h"

#include "model/Geometry.h"

#include "scheduler/analysis/IntrinsicUnits.h"
#include "scheduler/analysis/NocHops.h"

#include "support/Check.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

namespace dfl::intra {

const std::vector<std::array<Dim, kND>> &loopOrders() {
  static const std::vector<std::array<Dim, kND>> orders = {
      {Dim::R, Dim::S, Dim::C, Dim::Xo, Dim::Yo, Dim::K, Dim::N},
      {Dim::N, Dim::Xo, Dim::Yo, Dim::R, Dim::S, Dim::C, Dim::K},
      {Dim::K, Dim::R, Dim::S, Dim::C, Dim::Xo, Dim::Yo, Dim::N},
  };
  return orders;
}

TilingSpace::TilingSpace(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *given,
                         const IntraLayerOptions &options)
    : net_(net), layerIndex_(layer), layer_(net.layers[layer]), hw_(hw), given_(given), options_(options),
      roles_(layer_.roles()) {
  for (size_t i = 0; i < kND; ++i)
    bound_[i] = at(layer_.bounds, kIndependentDims[i]);
  if (layer_.channelWise())
    bound_[index(Dim::K)] = 1;   // K is C: only C is tiled
  top_ = hw.levels.size() >= 2 ? hw.levels.size() - 2 : 0;
  for (size_t i = 0; i < kND; ++i) {
    forced_[i] = at(options.fixedTopTile, kIndependentDims[i]);
    cap_[i] = at(options.maxTile, kIndependentDims[i]);
    forcedStack_[i] = forced_[i] ? at(options.fixedTopStack, kIndependentDims[i]) : 0;
  }
  if (layer_.channelWise())
    forced_[index(Dim::K)] = forcedStack_[index(Dim::K)] = 0;
  // A softmax's or norm's top-level tile holds whole rows (docs/directives.md
  // §7): one row along its axis, unless the inter-layer scheme forces a tile
  // there already (a multiple of the row, or the analysis refuses the scheme,
  // E0826), or this solve splits them (the tiles free along the row).
  if (layer_.normalizes() && layer_.output == TensorRole::Ofm && !options.rowsSplit)
    for (auto [dim, extent] : layer_.rowDims())
      if (!forced_[index(dim)])
        forced_[index(dim)] = extent;
  // Intrinsic-aware: the intrinsic's level stacks exactly the unit tensors
  // (one call per step over its units), so every array tile there and every
  // tile above is a multiple of the unit. A layer it does not embed keeps
  // 1-element tiles.
  // A piece of a split layer takes its layer's unit.
  if (auto u = intrinsicUnitFor(net_, layer_, hw); u && u->embedded) {
    intrinsicLevel_ = u->level;
    for (size_t i = 0; i < kND; ++i)
      unitRepl_[i] = at(u->unit, kIndependentDims[i]);
  }
  pinned_.assign(hw.levels.size() - 1, {});
  pinTile_.assign(hw.levels.size() - 1, {});
  pinRepl_.assign(hw.levels.size() - 1, {});
  for (size_t l = 0; l + 1 < hw.levels.size(); ++l)
    pinLevel(l);
  // A level given above bounds the tiles below it (its own tile, at most the
  // layer's): a completion steps inside what the user wrote.
  Plan fixed = initialPlan();
  givenAbove_.assign(fixed.levels.size(), {});
  std::array<int64_t, kND> above{};
  for (size_t l = fixed.levels.size(); l-- > 0;) {
    givenAbove_[l] = above;
    if (fixedLevel(l)) {
      absorbFixed(fixed, l);
      for (size_t i = 0; i < kND; ++i)
        above[i] = std::min(fixed.levels[l].tile[i], bound_[i]);
    } else {
      for (size_t i = 0; i < kND; ++i)
        if (pinTile_[l][i])
          above[i] = std::min(pinTile_[l][i], bound_[i]);
    }
  }
}

const LevelDirectives *TilingSpace::userLevel(size_t l) const {
  if (given_)
    for (const LevelDirectives &d : given_->levels)
      if (d.level == static_cast<int>(l) && !d.empty())
        return &d;
  return nullptr;
}

void TilingSpace::pinLevel(size_t l) {
  const LevelDirectives *user = userLevel(l);
  const LevelDirectives *hw = hw_.levels[l].fixed.empty() ? nullptr : &hw_.levels[l].fixed;
  if (fixedLevel(l) || (!user && !hw))
    return;
  Pinned &pin = pinned_[l];
  pin.source = user ? user : hw;
  pin.hardware = hw;
  pin.stacks = user && !user->stacks.empty() ? &user->stacks : hw ? &hw->stacks : nullptr;
  auto canonIndex = [&](Dim d) -> std::optional<size_t> {
    Dim c = layer_.channelWise() && d == Dim::K ? Dim::C : d;
    if (isInputWindow(c) || (!layer_.hasWeights() && (c == Dim::R || c == Dim::S)))
      return std::nullopt;
    return index(c);
  };
  auto &tile = pinTile_[l];
  for (const LevelDirectives *d : {hw, user})
    if (d)
      for (const TensorDirective &t : d->tensors) {
        const std::vector<TensorRole> roles = layer_.roles();
        if (std::find(roles.begin(), roles.end(), t.role) == roles.end())
          continue;
        for (Dim dim : kIndependentDims)
          if (int64_t v = at(t.sizes, dim); v)
            if (auto i = canonIndex(dim))
              tile[*i] = v;
      }
  auto &repl = pinRepl_[l];
  if (pin.stacks)
    for (const StackDirective &st : *pin.stacks)
      for (auto [dim, shift] : st.shifts) {
        auto i = canonIndex(dim);
        if (!i)
          continue;
        if (!tile[*i])
          tile[*i] = shift;   // the first stack steps by one tile
        if (!repl[*i])
          repl[*i] = 1;
        if (shift == tile[*i] * repl[*i])
          repl[*i] *= st.repl;
      }
  // Along a dim nothing above gives, the first written update steps by one
  // unstacked tile.
  for (const LevelDirectives *d : {user, hw})
    if (d && !d->updates.empty()) {
      for (const UpdateDirective &u : d->updates)
        for (auto [dim, step] : u.steps)
          if (auto i = canonIndex(dim); i && !tile[*i] && !repl[*i])
            tile[*i] = step, repl[*i] = 1;
      break;
    }
}

Plan TilingSpace::initialPlan() const {
  Plan plan;
  plan.levels.resize(hw_.levels.size() - 1);
  for (size_t l = 0; l < plan.levels.size(); ++l) {
    plan.levels[l].tile.fill(1);
    for (size_t i = 0; i < kND; ++i)
      plan.levels[l].repl[i] = initialRepl(l, i);
  }
  return plan;
}

Plan TilingSpace::minimalPlan() {
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

void TilingSpace::applyForced(Plan &p, size_t l) const {
  if (p.levels[l].fixed)
    return;
  for (size_t i = 0; i < kND; ++i) {
    if (int64_t t = forcedTile(l, i))
      p.levels[l].tile[i] = t;
    if (pinRepl_[l][i] || (l == top_ && forcedStack_[i]))
      p.levels[l].repl[i] = initialRepl(l, i);
  }
}

int64_t TilingSpace::unitBelow(const Plan &p, size_t l, size_t i) {
  return l == 0 ? 1 : p.levels[l - 1].tile[i] * p.levels[l - 1].repl[i];
}

int64_t TilingSpace::enclosingTile(const Plan &p, size_t l, size_t i) const {
  return l + 1 < p.levels.size() ? p.levels[l + 1].tile[i] : bound_[i];
}

bool TilingSpace::stackBarred(size_t l, size_t i, int64_t repl) const {
  return (pinRepl_[l][i] != 0 && repl != pinRepl_[l][i]) ||
         (l == top_ && forcedStack_[i] != 0 && repl != forcedStack_[i]) ||
         (static_cast<int>(l) == intrinsicLevel_ && unitRepl_[i] != 0 && repl != unitRepl_[i]);
}

size_t TilingSpace::index(Dim d) {
  for (size_t i = 0; i < kND; ++i)
    if (kIndependentDims[i] == d)
      return i;
  DFLC_UNREACHABLE("dim " + std::to_string(static_cast<int>(d)) + " is not an independent dim of the tiling space");
}

const LevelDirectives *TilingSpace::givenLevel(size_t l) const {
  const LevelDirectives *user = userLevel(l);
  if (!user)
    return nullptr;
  for (TensorRole r : roles_)
    if (std::none_of(user->tensors.begin(), user->tensors.end(), [&](const TensorDirective &t) { return t.role == r; }))
      return nullptr;   // given in part: pinnedLevel
  return user;
}

void TilingSpace::absorbFixed(Plan &p, size_t l) {
  const LevelDirectives &d = *givenLevel(l);
  auto &lp = p.levels[l];
  lp.fixed = true;
  for (const TensorDirective &t : d.tensors)
    for (size_t i = 0; i < kND; ++i) {
      Dim dim = kIndependentDims[i];
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
      if (isInputWindow(c))
        continue;
      size_t i = index(c);
      if (shift == lp.tile[i] * lp.repl[i])
        lp.repl[i] *= s.repl;
    }
}

bool TilingSpace::blockedOk(const Plan &p, size_t l, size_t i, int64_t tile, int64_t repl) const {
  if (tile < 1 || repl < 1)
    return false;
  const int64_t unit = unitBelow(p, l, i), whole = limit(l, i), array = tile * repl;
  if ((tile % unit && tile != whole) || (forcedAt(l, i) && tile != forcedTile(l, i)) || stackBarred(l, i, repl))
    return false;
  if (!uneven_ && (tile % unit || whole % array || (l + 1 < p.levels.size() && p.levels[l + 1].tile[i] % array)))
    return false;
  if (l > 0 && !covers(p.levels[l - 1].tile[i], p.levels[l - 1].repl[i], tile))
    return false;
  if (l + 1 < p.levels.size()) {
    int64_t next = p.levels[l + 1].tile[i];
    return covers(tile, repl, next) && (next % array == 0 || next == whole);
  }
  return covers(tile, repl, bound_[i]);
}

const std::vector<int64_t> &TilingSpace::blockedSizes(int64_t unit, int64_t whole, bool uneven) {
  // Memoized (never erased: callers iterate one list while asking for others):
  // the searches ask for the same few (unit, whole) pairs again and again.
  thread_local std::map<std::tuple<int64_t, int64_t, bool>, std::vector<int64_t>> memo;
  auto [it, fresh] = memo.try_emplace({unit, whole, uneven});
  std::vector<int64_t> &sizes = it->second;
  if (!fresh)
    return sizes;
  const int64_t n = (whole + unit - 1) / unit;
  // Steps of `unit` per tile, each below n (n itself is `whole`, added last).
  std::vector<int64_t> steps;
  if (n <= kEveryStepLimit) {
    for (int64_t k = n; k >= 2; --k)   // ceil(n/k) grows as k falls
      steps.push_back((n + k - 1) / k);
  } else {
    // A bounded set that does not grow with n (docs/solver.md, "Blocked
    // sizes"): the tiles covering n in few steps, the few-unit tiles, the
    // powers of two and the tiles covering n in a power of two of steps, and
    // the divisors with a cofactor or a factor up to kDivisorSearch.
    for (int64_t k = 2; k <= kFewSteps; ++k)
      steps.push_back((n + k - 1) / k), steps.push_back(k);
    steps.push_back(1);
    for (int64_t p = 2; p < n; p *= 2)
      steps.push_back(p), steps.push_back((n + p - 1) / p);
    for (int64_t d = 1; d <= kDivisorSearch && d * d <= n; ++d)
      if (n % d == 0)
        steps.push_back(d), steps.push_back(n / d);
    std::erase_if(steps, [&](int64_t s) { return s >= n; });
    std::sort(steps.begin(), steps.end());
  }
  for (int64_t k : steps)
    if (int64_t s = unit * k; (uneven || whole % s == 0) && (sizes.empty() || s != sizes.back()))
      sizes.push_back(s);
  if ((uneven || whole % unit == 0) && (sizes.empty() || sizes.back() != whole))
    sizes.push_back(whole);
  return sizes;
}

int64_t TilingSpace::unitsOf(const Plan::LevelPlan &lp) {
  int64_t u = 1;
  for (int64_t r : lp.repl)
    u *= r;
  return u;
}

bool TilingSpace::fitsPartial(const Plan &p, size_t l) const { return withinMaxTile(p, l) && overflowing(p, l) < 0; }

bool TilingSpace::withinMaxTile(const Plan &p, size_t l) const {
  for (size_t i = 0; i < kND; ++i)
    if (cap_[i] && p.levels[l].tile[i] > cap_[i])
      return false;
  return true;
}

int64_t TilingSpace::reserve(size_t l) const { return l == top_ ? options_.reservedTopBytes : 0; }

int TilingSpace::overflowing(const Plan &p, size_t l) const {
  return hw_.overflowingBuffer(l, occupancy(p, l), layer_.output, reserve(l));
}

std::optional<int64_t> TilingSpace::capacity(size_t l, size_t b) const {
  const Buffer &buf = hw_.levels[l].buffers[b];
  if (!buf.capacityBytes)
    return std::nullopt;
  const bool forwarded = buf.holds(TensorRole::Ifm) || buf.holds(layer_.output);
  return *buf.capacityBytes - (forwarded ? reserve(l) : 0);
}

int64_t TilingSpace::tileWords(const Plan &p, size_t l, TensorRole r) const {
  const auto &t = p.levels[l].tile;
  DimVector e{};
  for (size_t i = 0; i < kND; ++i)
    at(e, kIndependentDims[i]) = t[i];
  at(e, Dim::Xi) = windowIn(Dim::Xi, at(e, Dim::Xo), at(e, Dim::R));
  at(e, Dim::Yi) = windowIn(Dim::Yi, at(e, Dim::Yo), at(e, Dim::S));
  return dfl::tileWords(r, e, layer_.channelWise());
}

BufferBytes TilingSpace::occupancy(const Plan &p, size_t l) const {
  std::array<int64_t, kNumRoles> words{};
  for (TensorRole r : roles_)
    words[static_cast<size_t>(r)] = tileWords(p, l, r);
  return hw_.bufferBytes(l, words, layer_.output);
}

bool TilingSpace::fits(const Plan &p, size_t l) const {
  return fitsPartial(p, l) && (l + 2 >= hw_.levels.size() || fitsPartial(stackedAbove(p, l), l + 1));
}

Plan TilingSpace::stackedAbove(const Plan &p, size_t l) {
  Plan q = p;
  for (size_t i = 0; i < kND; ++i)
    q.levels[l + 1].tile[i] = p.levels[l].tile[i] * p.levels[l].repl[i];
  return q;
}

int64_t TilingSpace::unitsAllowed(size_t l) const {
  int64_t u = hw_.levels[l].units();
  if (l + 2 == hw_.levels.size() && options_.maxNodes > 0)
    u = std::min(u, options_.maxNodes);
  return u;
}

bool TilingSpace::arrayFits(const Plan &p, size_t l) const {
  thread_local std::vector<int64_t> repls;   // kept: the descents ask millions of times
  repls.clear();
  for (int64_t r : p.levels[l].repl)
    if (r > 1)
      repls.push_back(r);
  const Level &lv = hw_.levels[l];
  return stacksFit(repls, lv.rows, lv.cols, unitsAllowed(l));
}

int64_t TilingSpace::nextBlocked(int64_t current, int64_t unit, int64_t whole, bool uneven) {
  for (int64_t m : blockedSizes(unit, whole, uneven))
    if (m > current)
      return m;
  return 0;
}

LevelDirectives TilingSpace::directivesFor(const Plan &p, size_t l) const {
  LevelDirectives d;
  // Sized once: the descents build millions of these, a fifth of their
  // allocations the vectors' growth.
  d.tensors.reserve(kNumRoles);
  d.updates.reserve(kND);
  directivesInto(p, l, d);
  return d;
}

void TilingSpace::directivesInto(const Plan &p, size_t l, LevelDirectives &d) const {
  if (const LevelDirectives *g = p.levels[l].fixed ? givenLevel(l) : nullptr) {
    d = *g;
    d.level = static_cast<int>(l);
    return;
  }
  const auto &lp = p.levels[l];
  const Pinned &pin = pinned_[l];
  d.level = static_cast<int>(l);
  d.range = pin.source ? pin.source->range : SourceRange{};
  if (pin.source)
    d.layouts = pin.source->layouts;
  else
    d.layouts.clear();
  auto v = [&](Dim dim) { return lp.tile[index(dim)]; };
  d.tensors.clear();
  for (TensorRole r : roles_) {
    TensorDirective t;
    t.role = r;
    // Where a written tensor pins the tile: a rule it breaks is reported there.
    for (const LevelDirectives *w : {pin.hardware, pin.source})
      if (w)
        for (const TensorDirective &x : w->tensors)
          if (x.role == r)
            t.range = x.range, t.shr = x.shr;
    for (Dim dim : roleDims(r)) {
      Dim c = layer_.channelWise() && dim == Dim::K ? Dim::C : dim;
      int64_t size = dim == Dim::Xi   ? windowIn(Dim::Xi, v(Dim::Xo), v(Dim::R))
                     : dim == Dim::Yi ? windowIn(Dim::Yi, v(Dim::Yo), v(Dim::S))
                                      : v(c);
      if (layer_.channelWise() && r == TensorRole::Wgt && dim == Dim::K)
        continue;   // dwconv weights: [C, R, S]
      at(t.sizes, dim) = size;
    }
    d.tensors.push_back(t);
  }
  // The stacks' and updates' moves are written over those of d's earlier
  // directives, their vectors kept (resized at the end).
  auto moveOf = [&](Dim dim, int64_t amount, std::vector<std::pair<Dim, int64_t>> &m) {
    m.clear();
    m.push_back({dim, amount});
    if (dim == Dim::Xo)
      m.push_back({Dim::Xi, amount * layer_.window.x.stride});
    if (dim == Dim::Yo)
      m.push_back({Dim::Yi, amount * layer_.window.y.stride});
    if (dim == Dim::R)
      m.push_back({Dim::Xi, amount * layer_.window.x.dilation});
    if (dim == Dim::S)
      m.push_back({Dim::Yi, amount * layer_.window.y.dilation});
  };
  size_t stacks = 0;
  if (pin.stacks)   // first, as written (E0813 compares them in order)
    d.stacks = *pin.stacks, stacks = d.stacks.size();
  for (size_t i = 0; i < kND; ++i)
    if (lp.repl[i] > 1 && !pinRepl_[l][i]) {
      StackDirective &s = stacks < d.stacks.size() ? d.stacks[stacks] : d.stacks.emplace_back();
      ++stacks;
      moveOf(kIndependentDims[i], lp.tile[i], s.shifts);
      s.repl = lp.repl[i];
      s.range = {};
    }
  d.stacks.resize(stacks);
  // Written updates are kept, innermost first as written; the dims they do
  // not move get the search's loops outside them (docs/solver.md, "Partial
  // schedules").
  std::array<bool, kND> written{};
  size_t updates = 0;
  for (const LevelDirectives *w : {pin.source, pin.hardware})
    if (w && !w->updates.empty()) {
      d.updates = w->updates, updates = d.updates.size();
      for (const UpdateDirective &u : w->updates)
        for (auto [dim, amount] : u.steps)
          if (Dim c = layer_.channelWise() && dim == Dim::K ? Dim::C : dim; !isInputWindow(c))
            written[index(c)] = true;
      break;
    }
  std::array<Dim, kND> order = loopOrders()[lp.order];
  if (l == top_ && options_.topBatchOutermost)
    std::stable_partition(order.begin(), order.end(), [](Dim dim) { return dim != Dim::N; });
  if (l == top_)
    for (Dim outer : options_.topOutermost)
      if (auto it = std::find(order.begin(), order.end(), outer); it != order.end())
        std::rotate(it, it + 1, order.end());
  for (Dim dim : order) {
    size_t i = index(dim);
    if (written[i])
      continue;
    int64_t step = lp.tile[i] * lp.repl[i];
    if (step < enclosingTile(p, l, i)) {
      UpdateDirective &u = updates < d.updates.size() ? d.updates[updates] : d.updates.emplace_back();
      ++updates;
      moveOf(dim, step, u.steps);
      u.range = {};
    }
  }
  d.updates.resize(updates);
}

namespace {

template <typename T>
const T &pick(const std::vector<T> &v, std::mt19937_64 &rng) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

} // namespace

std::vector<std::pair<int64_t, int64_t>> TilingSpace::tileChoices(const Plan &p, size_t l, size_t i) const {
  const int64_t unit = unitBelow(p, l, i), whole = limit(l, i);
  std::vector<std::pair<int64_t, int64_t>> choices;
  // Tiles and array tiles among the blocked sizes; an array tile that is
  // not a multiple of the tile is the whole, over-covered by a partial stacked tile.
  const std::vector<int64_t> &sizes = blockedSizes(unit, whole);
  // At the intrinsic's level the stack factor is the unit's (initialRepl):
  // any tile it stacks over the whole, a partial last call allowed.
  if (const int64_t unitRepl = initialRepl(l, i); unitRepl > 1) {
    for (int64_t t : sizes)
      if ((!forcedAt(l, i) || t == forcedTile(l, i)) && covers(t, unitRepl, whole))
        choices.emplace_back(t, unitRepl);
    return choices;
  }
  for (int64_t t : sizes)
    if (!forcedAt(l, i) || t == forcedTile(l, i))
      for (int64_t a : sizes) {
        const int64_t r = a % t == 0 ? a / t : a == whole && a > t ? replFor(whole, t) : 0;
        if (r && !stackBarred(l, i, r))
          choices.emplace_back(t, r);
      }
  return choices;
}

bool TilingSpace::drawLevel(Plan &p, size_t l, std::mt19937_64 &rng) const {
  auto &lp = p.levels[l];
  for (size_t i = 0; i < kND; ++i)
    lp.tile[i] = unitBelow(p, l, i);   // every dim at its smallest until drawn
  // Dims in a random order, the forced ones first: each draw keeps the level
  // within its buffers and units with the dims not yet drawn at their
  // smallest, and a level's words and units only grow with a tile or a stack
  // factor, so the last draw leaves a level that fits.
  std::array<size_t, kND> dims;
  std::iota(dims.begin(), dims.end(), size_t{0});
  std::shuffle(dims.begin(), dims.end(), rng);
  std::stable_partition(dims.begin(), dims.end(), [&](size_t i) { return forcedAt(l, i); });
  auto fitsWith = [&](size_t i, int64_t t, int64_t r) {
    const int64_t t0 = lp.tile[i], r0 = lp.repl[i];
    lp.tile[i] = t, lp.repl[i] = r;
    const bool ok = arrayFits(p, l) && fits(p, l);
    lp.tile[i] = t0, lp.repl[i] = r0;
    return ok;
  };
  for (size_t i : dims) {
    const std::vector<std::pair<int64_t, int64_t>> choices = tileChoices(p, l, i);
    // The tile first, among those that fit with their least stack factor
    // (choices list each tile's factors ascending), then its stack factor.
    std::vector<int64_t> tiles;
    for (size_t k = 0; k < choices.size(); ++k)
      if ((k == 0 || choices[k].first != choices[k - 1].first) && fitsWith(i, choices[k].first, choices[k].second))
        tiles.push_back(choices[k].first);
    if (tiles.empty())
      return false;
    const int64_t t = pick(tiles, rng);
    std::vector<int64_t> repls;
    for (auto [ct, r] : choices)
      if (ct == t && fitsWith(i, t, r))
        repls.push_back(r);
    if (repls.empty())
      return false;
    lp.tile[i] = t;
    lp.repl[i] = pick(repls, rng);
  }
  lp.order = std::uniform_int_distribution<size_t>(0, loopOrders().size() - 1)(rng);
  return true;
}

bool TilingSpace::operandsResolved() const {
  return std::all_of(layer_.operands.begin(), layer_.operands.end(), [&](const TensorRef &op) {
    return op.isInput ? static_cast<size_t>(op.index) < net_.inputs.size() : op.index < layerIndex_;
  });
}

std::optional<Plan> TilingSpace::drawPlan(std::mt19937_64 &rng) {
  Plan p = initialPlan();
  for (size_t l = 0; l < p.levels.size(); ++l) {
    if (fixedLevel(l)) {
      if (l > 0)
        for (size_t i = 0; i < kND; ++i)
          p.levels[l].tile[i] = unitBelow(p, l, i);
      absorbFixed(p, l);
    } else if (!drawLevel(p, l, rng)) {
      return std::nullopt;
    }
  }
  return p;
}

} // namespace dfl::intra
