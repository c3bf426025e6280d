#include "scheduler/graph/SubGraphs.h"

#include "support/Check.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace dfl::graph {
namespace {

/// Algorithm 1, line 4: 1, 2, 4, 8, then 9, 10, … up to the extent; only
/// divisors of the extent, so the instances are homogeneous.
std::vector<int64_t> splitCandidates(int64_t extent) {
  std::vector<int64_t> out;
  for (int64_t v : {1, 2, 4, 8})
    if (v <= extent && extent % v == 0)
      out.push_back(v);
  for (int64_t v = 9; v <= extent; ++v)
    if (extent % v == 0)
      out.push_back(v);
  return out;
}

/// Cycles one point of layer l's nest takes on a cluster's units.
double cyclesPerPoint(const GraphView &g, int l) {
  const DsaHardware &hw = g.hw();
  double rate = hw.rate(g.onMatrixUnit(l) ? DsaUnitKind::Matrix : DsaUnitKind::Vector);
  return 1.0 / (rate * static_cast<double>(hw.coresPerCluster));
}

/// What cutting the exit's output into `f` pieces along d costs beyond
/// computing it whole, summed over the pieces: the points each layer
/// computes again, and the bytes of inputs loaded again (a halo, or a whole
/// input every piece needs). Pieces are equal (f divides the extent) and
/// windows translation-invariant, so the inner pieces match the second; the
/// first and the last differ at the borders.
struct Redundancy {
  std::map<int, int64_t> points;
  int64_t inputBytes = 0, weightBytes = 0;
};

Redundancy redundancy(const GraphView &g, const std::vector<int> &layers, const Box &exitBox, size_t d, int64_t f,
                      const Footprint &whole) {
  Redundancy r;
  auto add = [&](int64_t i, int64_t times) {
    Footprint p = propagate(g, layers, piece(exitBox, d, f, i));
    for (const auto &[l, b] : p.iteration)
      r.points[l] += b.volume() * times;
    for (const auto &[src, b] : p.external)
      r.inputBytes += g.bytes(b) * times;
    for (const auto &[l, b] : p.weights)
      r.weightBytes += g.bytes(b) * times;
  };
  if (f <= 3) {
    for (int64_t i = 0; i < f; ++i)
      add(i, 1);
  } else {
    add(0, 1);
    add(1, f - 2);
    add(f - 1, 1);
  }
  for (auto &[l, points] : r.points)
    points -= whole.iteration.at(l).volume();
  for (const auto &[src, b] : whole.external)
    r.inputBytes -= g.bytes(b);
  for (const auto &[l, b] : whole.weights)
    r.weightBytes -= g.bytes(b);
  return r;
}

} // namespace

bool weightsStaged(const GraphView &g, const std::vector<int> &layers) {
  int64_t words = 0;
  for (int l : layers)
    words += g.net().layers[static_cast<size_t>(l)].wgtSize;
  return words * g.hw().wordBytes() * 2 <= g.hw().gbBytes;
}

SplitResult splitInfo(const GraphView &g, const std::vector<int> &layers) {
  SplitResult r;
  const int exit = layers.back();
  const Box exitBox = g.outputBox(exit);
  const Footprint whole = propagate(g, layers, exitBox);
  r.peakBytes = whole.peakBytes;
  const int64_t lb = g.hw().clusterLbBytes();
  for (size_t d = 0; d < exitBox.lo.size(); ++d) {   // line 2: outermost first
    const int64_t extent = exitBox.hi[d] - exitBox.lo[d];
    std::optional<int64_t> f;   // lines 3-6
    for (int64_t v : splitCandidates(extent))
      if ((r.peakBytes + v - 1) / v <= lb) {
        f = v;
        break;
      }
    if (!f)
      continue;
    Split s{g.opCount(exit), *f, static_cast<int>(d)};
    if (*f > 1) {   // lines 7-11: the intermediates the split cuts too
      Footprint first = propagate(g, layers, piece(exitBox, d, *f, 0));
      for (size_t k = 0; k + 1 < layers.size(); ++k) {
        const Box &all = whole.output.at(layers[k]), &part = first.output.at(layers[k]);
        if (part.empty() && !all.empty()) {   // the piece needs none of it (a concatenation's other operand)
          s.ops += g.opCount(layers[k]);
          continue;
        }
        for (size_t j = 0; j < all.lo.size() && !part.empty(); ++j)
          if (part.hi[j] - part.lo[j] < all.hi[j] - all.lo[j]) {   // match_dim(t, d)
            if ((all.hi[j] - all.lo[j]) % *f == 0)
              s.ops += g.opCount(layers[k]);
            break;
          }
      }
      // The recomputation guard: what the pieces compute and load again must
      // not cost more than the round trips the split saves — each
      // intermediate through DDR (what fusing avoids) and the output through
      // the GB (what fitting LB avoids).
      const Redundancy extra = redundancy(g, layers, exitBox, d, *f, whole);
      const DsaHardware &hw = g.hw();
      double cost = static_cast<double>(extra.inputBytes) / hw.gbBytesPerCycle +
                    static_cast<double>(extra.weightBytes) /
                        (weightsStaged(g, layers) ? hw.gbBytesPerCycle : g.ddrBytesPerCycle());
      for (const auto &[l, points] : extra.points)
        cost += static_cast<double>(points) * cyclesPerPoint(g, l);
      double saved = 2.0 * static_cast<double>(g.bytes(exitBox)) / hw.gbBytesPerCycle;
      for (size_t k = 0; k + 1 < layers.size(); ++k)
        saved += 2.0 * static_cast<double>(g.bytes(whole.output.at(layers[k]))) / g.ddrBytesPerCycle();
      if (cost > saved) {
        r.rejectedByRecomputation.push_back(static_cast<int>(d));
        continue;
      }
    }
    r.info.push_back(s);
  }
  r.best = bestSplit(r.info);
  return r;
}

std::optional<Split> bestSplit(const std::vector<Split> &info) {
  std::optional<Split> best;
  for (const Split &s : info)
    if (!best || std::make_tuple(s.ops, -s.factor, -s.dim) > std::make_tuple(best->ops, -best->factor, -best->dim))
      best = s;
  return best;
}

// ---- Algorithm 2 ---------------------------------------------------------------

SubGraphSet::SubGraphSet(const GraphView &g) : g_(g) {
  for (int l = 0; l < g.layers(); ++l)
    sgs_.push_back({{l}, splitInfo(g, {l})});
  rebuildOwners();
}

void SubGraphSet::rebuildOwners() {
  std::sort(sgs_.begin(), sgs_.end(), [](const SubGraph &a, const SubGraph &b) { return a.exit() < b.exit(); });
  owner_.assign(static_cast<size_t>(g_.layers()), -1);
  for (size_t s = 0; s < sgs_.size(); ++s)
    for (int l : sgs_[s].layers)
      owner_[static_cast<size_t>(l)] = static_cast<int>(s);
}

namespace {

/// Sorted, without repeats (a vector: Algorithm 2's sweeps ask millions of times).
std::vector<int> distinct(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

} // namespace

std::vector<int> SubGraphSet::producers(int s) const {
  std::vector<int> out;
  for (int l : sgs_[static_cast<size_t>(s)].layers)
    for (int p : g_.producers(l))
      if (of(p) != s)
        out.push_back(of(p));
  return distinct(std::move(out));
}

std::vector<int> SubGraphSet::consumers(int s) const {
  std::vector<int> out;
  for (int l : sgs_[static_cast<size_t>(s)].layers)
    for (int c : g_.consumers(l))
      if (of(c) != s)
        out.push_back(of(c));
  return distinct(std::move(out));
}

bool SubGraphSet::tryMerge(const std::vector<int> &members, const std::function<bool(const SplitResult &)> &allowed) {
  std::vector<int> layers;
  for (int s : members)
    for (int l : sgs_[static_cast<size_t>(s)].layers)
      layers.push_back(l);
  std::sort(layers.begin(), layers.end());
  SplitResult r = splitInfo(g_, layers);
  // A grouping must keep a split: one that fits no LB is no kernel of ours.
  if (!r.best || !allowed(r))
    return false;
  std::vector<SubGraph> next;
  for (size_t s = 0; s < sgs_.size(); ++s)
    if (std::find(members.begin(), members.end(), static_cast<int>(s)) == members.end())
      next.push_back(std::move(sgs_[s]));
  next.push_back({std::move(layers), std::move(r)});
  sgs_ = std::move(next);
  rebuildOwners();
  return true;
}

int SubGraphSet::straightMerge() {
  int merged = 0;
  for (int a = 0; a < static_cast<int>(sgs_.size()); ++a) {
    auto cons = consumers(a);
    if (cons.size() != 1)
      continue;
    int b = cons[0];
    if (producers(b) != std::vector<int>{a})
      continue;
    // Rule (i): f(SG2) >= f(SG1) (a down-sampling SG2 stops the propagation)
    // and f(SG) <= f(SG2) (the group keeps SG2's use of LB).
    const int64_t f1 = sgs_[static_cast<size_t>(a)].split.factor(), f2 = sgs_[static_cast<size_t>(b)].split.factor();
    if (f2 >= f1 && tryMerge({a, b}, [&](const SplitResult &r) { return r.factor() <= f2; })) {
      ++merged;
      a = -1;   // indices moved: sweep again
    }
  }
  return merged;
}

int SubGraphSet::branchMerge() {
  int merged = 0;
  for (int x = 0; x < static_cast<int>(sgs_.size()); ++x) {
    std::set<int> sources;   // sub-graphs and network inputs x reads
    for (int l : sgs_[static_cast<size_t>(x)].layers)
      for (const Access &a : g_.net().layers[static_cast<size_t>(l)].nest.accesses)
        if (a.role == TensorRole::Ifm && (g_.source(a) < 0 || of(g_.source(a)) != x))
          sources.insert(g_.source(a) < 0 ? g_.source(a) : of(g_.source(a)));
    const int paths = static_cast<int>(sources.size());
    if (paths < 2)
      continue;
    for (int p : producers(x)) {
      if (consumers(p) != std::vector<int>{x})
        continue;
      // Rule (i) with SG2 = p, SG3 = x.
      const int64_t f2 = sgs_[static_cast<size_t>(p)].split.factor(), f3 = sgs_[static_cast<size_t>(x)].split.factor();
      if (f3 >= f2 && tryMerge({p, x}, [&](const SplitResult &r) { return r.factor() <= f3; })) {
        ++merged;
        x = -1;
        break;
      }
    }
  }
  return merged;
}

int SubGraphSet::diamondMerge() {
  int merged = 0;
  for (int x = 0; x < static_cast<int>(sgs_.size()); ++x) {
    if (producers(x).size() < 2)
      continue;
    // Ancestors of x, nearest first (sub-graphs are ordered by exit).
    std::set<int> anc;
    std::vector<int> stack{x};
    while (!stack.empty()) {
      int s = stack.back();
      stack.pop_back();
      for (int p : producers(s))
        if (anc.insert(p).second)
          stack.push_back(p);
    }
    for (auto e = anc.rbegin(); e != anc.rend(); ++e) {
      auto econs = consumers(*e);
      if (econs.size() < 2)
        continue;
      // The middle: descendants of e that are ancestors of x.
      std::set<int> desc, mid;
      std::vector<int> st{*e};
      while (!st.empty()) {
        int s = st.back();
        st.pop_back();
        for (int c : consumers(s))
          if (c != x && desc.insert(c).second)
            st.push_back(c);
      }
      for (int s : desc)
        if (anc.count(s))
          mid.insert(s);
      auto inside = [&](int s, bool entry, bool exit) {
        return mid.count(s) || (entry && s == *e) || (exit && s == x);
      };
      bool ok = !mid.empty();
      for (int m : mid) {
        for (int p : producers(m))
          ok = ok && inside(p, true, false);
        for (int c : consumers(m))
          ok = ok && inside(c, false, true);
      }
      for (int p : producers(x))
        ok = ok && inside(p, true, false);
      int paths = 0;
      for (int c : econs)
        paths += inside(c, false, true) ? 1 : 0;
      if (!ok || paths < 2)
        continue;   // not a diamond with this entry; a farther one may be
      // Rule (ii): f(SG) <= max over SG2..SG4.
      std::vector<int> members(mid.begin(), mid.end());
      members.push_back(x);
      int64_t fmax = 0;
      for (int m : members)
        fmax = std::max(fmax, sgs_[static_cast<size_t>(m)].split.factor());
      if (tryMerge(members, [&](const SplitResult &r) { return r.factor() <= fmax; })) {
        ++merged;
        x = -1;
      }
      break;   // the nearest diamond decides
    }
  }
  return merged;
}

void SubGraphSet::group() {
  for (;;) {
    int merged = straightMerge();
    merged += diamondMerge();
    merged += branchMerge();
    if (merged == 0)
      return;
  }
}

} // namespace dfl::graph
