// The latency of a spatially pipelined segment (scheduler/analysis/SegmentLatency.h).
#include "scheduler/analysis/SegmentLatency.h"

#include "support/Check.h"
#include "support/IntMath.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

namespace dfl {
namespace {

constexpr int64_t kFree = -1;   // an update left free in a partial step

struct Interval {
  int64_t lo = 0, hi = -1;
  bool empty() const { return lo > hi; }
  Interval hull(const Interval &o) const {
    return empty() ? o : o.empty() ? *this : Interval{std::min(lo, o.lo), std::max(hi, o.hi)};
  }
};
using Box = std::vector<Interval>;   // one interval per tensor dim

/// ⌊a/b⌋ for b > 0.

struct Update {
  Dim dim = Dim::N;   // the independent dim it moves (canonical)
  int64_t amount = 1, count = 1;
};

/// One region: its layer's node-level steps and how they reach tensors.
struct Region {
  const Layer *layer = nullptr;
  bool folds = false;                  // its iteration dims fold into canonical dims
  std::vector<IterDimFold> fold;
  DimVector bounds{}, base{};          // per canonical dim: the layer's bound; a step's span less one
  std::vector<Update> updates;         // outermost first; trips of 1 left out
  int64_t steps = 1;
  double latency = 0;
  const Access *output = nullptr;
  /// Per dim of the output tensor, the canonical dim it is the coordinate of
  /// (kNone for an index 0 of an extent 1), or empty if some output index is
  /// neither.
  static constexpr int kNone = -1;
  std::vector<int> outputDims;

  Dim canon(Dim d) const { return layer->channelWise() && d == Dim::K ? Dim::C : d; }

  int64_t linear(const std::vector<int64_t> &u) const {
    int64_t n = 0;
    for (size_t i = 0; i < updates.size(); ++i)
      n = n * updates[i].count + u[i];
    return n;
  }

  /// The canonical coordinates a (partial) step covers, per independent dim,
  /// clipped to the layer: fixed updates at their values, free ones anywhere.
  std::array<Interval, kNumDims> cover(const std::vector<int64_t> &u) const {
    std::array<Interval, kNumDims> box{};
    for (Dim d : kIndependentDims)
      box[static_cast<size_t>(d)] = {0, at(base, d)};
    for (size_t i = 0; i < updates.size(); ++i) {
      Interval &r = box[static_cast<size_t>(updates[i].dim)];
      int64_t a = updates[i].amount;
      if (u[i] == kFree)
        r.hi += (updates[i].count - 1) * a;
      else
        r.lo += u[i] * a, r.hi += u[i] * a;
    }
    for (Dim d : kIndependentDims) {
      Interval &r = box[static_cast<size_t>(d)];
      r.hi = std::min(r.hi, std::max<int64_t>(1, at(bounds, d)) - 1);
    }
    return box;
  }

  /// The range of iteration dim i over canonical range r: (c / divisor) mod extent.
  Interval iterRange(size_t i, const Interval &r) const {
    const IterDimFold &f = fold[i];
    if (r.empty())
      return r;
    int64_t a = r.lo / f.divisor, b = r.hi / f.divisor;
    if (b - a + 1 >= f.extent || a % f.extent > b % f.extent)
      return {0, f.extent - 1};
    return {a % f.extent, b % f.extent};
  }

  /// If the terms of `e` over dims folding into `d` are the whole coordinate
  /// times a factor (Σ f·divisor_i·i over every dim of d), that factor; else 0.
  int64_t wholeCoordinate(const AffineExpr &e, Dim d) const {
    int64_t factor = 0;
    for (size_t i = 0; i < fold.size(); ++i) {
      if (fold[i].from != d)
        continue;
      int64_t c = e.coefficient(static_cast<int>(i));
      if (c == 0 || c % fold[i].divisor != 0)
        return 0;
      if (factor == 0)
        factor = c / fold[i].divisor;
      else if (c / fold[i].divisor != factor)
        return 0;
    }
    return factor;
  }

  /// The range of an affine expression over a step's coverage; `iters` the
  /// iteration dims' ranges (guards applied), `box` the canonical ranges.
  Interval range(const AffineExpr &e, const std::vector<Interval> &iters,
                 const std::array<Interval, kNumDims> &box) const {
    Interval out{e.constant, e.constant};
    std::array<bool, kNumDims> whole{};
    for (auto [i, c] : e.terms) {
      Dim d = fold[static_cast<size_t>(i)].from;
      if (whole[static_cast<size_t>(d)])
        continue;
      int64_t f = wholeCoordinate(e, d);
      bool alone = std::count_if(fold.begin(), fold.end(), [&](const IterDimFold &x) { return x.from == d; }) == 1;
      Interval r = iters[static_cast<size_t>(i)];
      if (f != 0 && !alone) {   // the coordinate itself: exact where the dims' ranges wrap
        whole[static_cast<size_t>(d)] = true;
        r = box[static_cast<size_t>(d)];
        c = f;
      }
      if (r.empty())
        return r;
      out.lo += c > 0 ? c * r.lo : c * r.hi;
      out.hi += c > 0 ? c * r.hi : c * r.lo;
    }
    return out;
  }

  /// What a (partial) step reads of `tensor`: the hull over its accesses,
  /// each clipped to the tensor and its guards (`clip`), or unclipped: the
  /// index ranges themselves, which only grow with the step. Empty if none.
  std::optional<Box> reads(const std::string &tensor, const std::vector<int64_t> &u, bool clip) const {
    std::array<Interval, kNumDims> box = cover(u);
    std::optional<Box> out;
    for (const Access &a : layer->nest.accesses) {
      if (a.role == layer->output || a.tensor != tensor)
        continue;
      std::vector<Interval> iters(fold.size());
      for (size_t i = 0; i < fold.size(); ++i)
        iters[i] = iterRange(i, box[static_cast<size_t>(fold[i].from)]);
      bool none = false;
      if (clip)
        for (const AffineExpr &g : a.guard)   // g >= 0; a one-dim guard narrows its dim
          if (g.terms.size() == 1) {
            auto [i, c] = g.terms[0];
            Interval &r = iters[static_cast<size_t>(i)];
            // c·x + k >= 0: x >= ⌈−k/c⌉ (c > 0) or x <= ⌊k/−c⌋ (c < 0).
            if (c > 0)
              r.lo = std::max(r.lo, -floorDiv(g.constant, c));
            else
              r.hi = std::min(r.hi, floorDiv(g.constant, -c));
            none = none || r.empty();
          }
      if (none)
        continue;
      Box b(a.index.size());
      for (size_t t = 0; t < a.index.size() && !none; ++t) {
        b[t] = range(a.index[t], iters, box);
        if (clip)
          b[t] = {std::max<int64_t>(b[t].lo, 0), std::min(b[t].hi, a.extent[t] - 1)};
        none = b[t].empty();
      }
      if (none)
        continue;
      if (!out)
        out = b;
      else
        for (size_t t = 0; t < b.size(); ++t)
          (*out)[t] = (*out)[t].hull(b[t]);
    }
    return out;
  }

  /// The last of this (producer) region's steps that finalizes an element
  /// of `box` (a box of its output tensor): a lexmax, update by update from
  /// the outermost: one moving a dim the output is not indexed by (a
  /// reduction) at its last iteration, one moving an output coordinate at
  /// the last iteration that starts at or below the box's end.
  int64_t lastWriter(const Box &box) const {
    std::vector<int64_t> u(updates.size());
    DimVector fixed{};
    for (size_t i = 0; i < updates.size(); ++i) {
      const Update &up = updates[i];
      auto t = std::find(outputDims.begin(), outputDims.end(), static_cast<int>(up.dim));
      if (t == outputDims.end()) {
        u[i] = up.count - 1;
        continue;
      }
      int64_t hi = box[static_cast<size_t>(t - outputDims.begin())].hi - at(fixed, up.dim);
      u[i] = std::clamp<int64_t>(hi < 0 ? 0 : hi / up.amount, 0, up.count - 1);
      at(fixed, up.dim) += u[i] * up.amount;
    }
    return linear(u);
  }

  /// What this (producer) region's last step writes of its output tensor.
  Box lastStepBox() const {
    std::vector<int64_t> u(updates.size());
    for (size_t i = 0; i < updates.size(); ++i)
      u[i] = updates[i].count - 1;
    std::array<Interval, kNumDims> box = cover(u);
    Box out;
    for (int d : outputDims)
      out.push_back(d == kNone ? Interval{0, 0} : box[static_cast<size_t>(d)]);
    return out;
  }

  /// The first of this (consumer) region's steps that reads some element of
  /// `box` of `tensor`: a lexmin, update by update from the outermost, each
  /// the least value whose reads (inner updates free) reach the box's start
  /// in every dim (a binary search: the reads only grow with the value).
  std::optional<int64_t> firstReader(const std::string &tensor, const Box &box) const {
    std::vector<int64_t> u(updates.size(), kFree);
    auto reaches = [&]() {
      std::optional<Box> r = reads(tensor, u, false);
      if (!r)
        return false;
      for (size_t t = 0; t < box.size() && t < r->size(); ++t)
        if ((*r)[t].hi < box[t].lo)
          return false;
      return true;
    };
    if (!reaches())
      return std::nullopt;
    for (size_t i = 0; i < updates.size(); ++i) {
      int64_t lo = 0, hi = updates[i].count - 1;
      while (lo < hi) {
        u[i] = lo + (hi - lo) / 2;
        if (reaches())
          hi = u[i];
        else
          lo = u[i] + 1;
      }
      u[i] = lo;
    }
    return linear(u);
  }

  std::vector<int64_t> point(int64_t step) const {
    std::vector<int64_t> u(updates.size());
    for (size_t i = updates.size(); i-- > 0;) {
      u[i] = step % updates[i].count;
      step /= updates[i].count;
    }
    return u;
  }
};

Region region(const Network &net, const Hardware &hw, int l, const LayerScheduleModel *schedule,
              const LayerResult &result) {
  const size_t top = hw.levels.size() - 2;
  Region r;
  r.layer = &net.layers[static_cast<size_t>(l)];
  r.latency = result.latencyCycles;
  std::string why;
  r.folds = foldIterDims(r.layer->nest, r.layer->channelWise(), r.fold, why);
  for (Dim d : kIndependentDims)
    at(r.bounds, r.canon(d)) = std::max(at(r.bounds, r.canon(d)), at(result.levels.back().extent, d));
  const LevelResult &lr = result.levels[top];
  for (Dim d : kIndependentDims)
    at(r.base, r.canon(d)) = std::max(at(r.base, r.canon(d)), at(lr.extent, d) - 1);
  const LevelDirectives *ld = nullptr;
  if (schedule)
    for (const LevelDirectives &d : schedule->levels)
      if (d.level == static_cast<int>(top))
        ld = &d;
  auto independent = [&](const std::vector<std::pair<Dim, int64_t>> &moves) -> std::optional<std::pair<Dim, int64_t>> {
    for (auto [d, a] : moves)
      if (d != Dim::Xi && d != Dim::Yi)
        return std::pair{r.canon(d), a};
    return std::nullopt;
  };
  if (ld) {
    for (const StackDirective &s : ld->stacks)
      for (auto [d, a] : s.shifts)
        if (d != Dim::Xi && d != Dim::Yi)
          at(r.base, r.canon(d)) += (s.repl - 1) * a;
    for (size_t i = ld->updates.size(); i-- > 0;) {
      int64_t count = i < lr.trips.size() ? lr.trips[i] : 1;
      if (auto m = independent(ld->updates[i].steps); m && count > 1) {
        r.updates.push_back({m->first, m->second, count});
        r.steps *= count;
      }
    }
  }
  std::vector<const Access *> outs = r.layer->nest.accessesOf(r.layer->output);
  if (!outs.empty())
    r.output = outs[0];
  // The output tensor's dims as canonical coordinates: each index the whole
  // coordinate of one dim, factor 1, no constant.
  if (r.folds && r.output) {
    for (size_t t = 0; t < r.output->index.size(); ++t) {
      const AffineExpr &e = r.output->index[t];
      if (e.terms.empty() && e.constant == 0 && r.output->extent[t] == 1) {
        r.outputDims.push_back(Region::kNone);
        continue;
      }
      if (e.terms.empty() || e.constant != 0)
        break;
      Dim d = r.fold[static_cast<size_t>(e.terms[0].first)].from;
      if (r.wholeCoordinate(e, d) != 1 ||
          std::any_of(e.terms.begin(), e.terms.end(), [&](auto &x) { return r.fold[static_cast<size_t>(x.first)].from != d; }) ||
          std::find(r.outputDims.begin(), r.outputDims.end(), static_cast<int>(d)) != r.outputDims.end())
        break;
      r.outputDims.push_back(static_cast<int>(d));
    }
    if (r.outputDims.size() != r.output->index.size())
      r.outputDims.clear();
  }
  return r;
}

/// The edge's samples (p and c positions in the segment); none if c reads nothing of p.
SegmentEdgeTiming edge(const std::vector<Region> &regions, int p, int c) {
  const Region &pr = regions[static_cast<size_t>(p)], &cr = regions[static_cast<size_t>(c)];
  SegmentEdgeTiming e;
  e.producer = p, e.consumer = c;
  const std::string &tensor = pr.output->tensor;
  bool reads = std::any_of(cr.layer->nest.accesses.begin(), cr.layer->nest.accesses.end(),
                           [&](const Access &a) { return a.role != cr.layer->output && a.tensor == tensor; });
  if (!reads)
    return e;
  if (pr.folds && cr.folds && !pr.outputDims.empty()) {
    Box all;
    for (int64_t x : pr.output->extent)
      all.push_back({0, x - 1});
    std::optional<int64_t> first = cr.firstReader(tensor, all);
    if (first) {
      e.derived = true;
      auto sample = [&](int64_t j) {
        if (std::optional<Box> b = cr.reads(tensor, cr.point(j), true))
          e.samples.push_back({j, pr.lastWriter(*b)});
      };
      sample(*first);
      // The end of the first iteration of each update (outer ones at 0).
      int64_t inner = 1;
      for (size_t i = cr.updates.size(); i-- > 0;) {
        inner *= cr.updates[i].count;
        if (inner - 1 > *first)
          sample(inner - 1);
      }
      std::optional<int64_t> last = cr.firstReader(tensor, pr.lastStepBox());
      e.samples.push_back({last.value_or(cr.steps - 1), pr.steps - 1});
      return e;
    }
  }
  // Perfect overlap: step j needs the producer's first ⌈(j+1)·S_p/S_c⌉ steps.
  e.samples.push_back({0, (pr.steps + cr.steps - 1) / cr.steps - 1});
  e.samples.push_back({cr.steps - 1, pr.steps - 1});
  return e;
}

} // namespace

PipelinedTiming pipelinedTiming(const Network &net, const Hardware &hw, const std::vector<int> &layers,
                                const std::vector<const LayerScheduleModel *> &schedules,
                                const std::vector<const LayerResult *> &results) {
  DFLC_CHECK(layers.size() == schedules.size() && layers.size() == results.size()) << "one schedule and result a layer";
  DFLC_CHECK(hw.levels.size() >= 2) << "a pipelined segment needs a node level";
  std::vector<Region> regions;
  for (size_t k = 0; k < layers.size(); ++k)
    regions.push_back(region(net, hw, layers[k], schedules[k], *results[k]));
  PipelinedTiming out;
  // Per region, when its steps may start at the earliest: step j not before
  // T (its samples' producer steps ended). Step i then ends at
  // max(0, T_j over the waits with j <= i + (i − j)·step) + step: the
  // max-plus solution of "after the step before it and after its data".
  std::vector<std::vector<std::pair<int64_t, double>>> waits(regions.size());
  auto ends = [&](size_t r, int64_t i) {
    const double step = out.regions[r].stepCycles;
    double t = static_cast<double>(i + 1) * step;
    for (auto [j, from] : waits[r])
      if (j <= i)
        t = std::max(t, from + static_cast<double>(i - j + 1) * step);
    return t;
  };
  for (size_t c = 0; c < regions.size(); ++c) {
    const Region &cr = regions[c];
    SegmentRegionTiming t;
    t.steps = cr.steps;
    t.stepCycles = cr.latency / static_cast<double>(cr.steps);
    out.regions.push_back(t);
    for (size_t p = 0; p < c; ++p)
      if (regions[p].output) {
        SegmentEdgeTiming e = edge(regions, static_cast<int>(p), static_cast<int>(c));
        for (const StepNeed &n : e.samples)
          waits[c].push_back({n.step, ends(p, n.needs)});
        if (!e.samples.empty())
          out.edges.push_back(std::move(e));
      }
    SegmentRegionTiming &done = out.regions.back();
    for (auto [j, from] : waits[c])
      if (j == 0)
        done.start = std::max(done.start, from);
    done.end = ends(c, cr.steps - 1);
    out.cycles = std::max(out.cycles, done.end);
  }
  return out;
}

} // namespace dfl
