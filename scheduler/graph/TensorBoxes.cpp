#include "scheduler/graph/TensorBoxes.h"

#include "model/Geometry.h"

#include "support/Check.h"

#include <algorithm>

namespace dfl::graph {

int64_t Box::volume() const {
  if (lo.empty())
    return 0;
  int64_t v = 1;
  for (size_t i = 0; i < lo.size(); ++i)
    v *= std::max<int64_t>(0, hi[i] - lo[i]);
  return v;
}

bool Box::empty() const {
  if (lo.empty())
    return true;   // default-constructed: nothing yet
  for (size_t i = 0; i < lo.size(); ++i)
    if (hi[i] <= lo[i])
      return true;
  return false;
}

void Box::hull(const Box &o) {
  if (o.empty())
    return;
  if (empty()) {
    *this = o;
    return;
  }
  for (size_t i = 0; i < lo.size(); ++i) {
    lo[i] = std::min(lo[i], o.lo[i]);
    hi[i] = std::max(hi[i], o.hi[i]);
  }
}

bool Box::intersects(const Box &o) const {
  if (empty() || o.empty())
    return false;
  for (size_t i = 0; i < lo.size(); ++i)
    if (std::max(lo[i], o.lo[i]) >= std::min(hi[i], o.hi[i]))
      return false;
  return true;
}

Box Box::intersect(const Box &o) const {
  Box b = *this;
  for (size_t i = 0; i < lo.size(); ++i) {
    b.lo[i] = std::max(lo[i], o.lo[i]);
    b.hi[i] = std::max(b.lo[i], std::min(hi[i], o.hi[i]));
  }
  return b;
}

Box piece(const Box &box, size_t d, int64_t parts, int64_t i) {
  Box b = box;
  const Interval p = equalPiece({box.lo[d], box.hi[d] - 1}, parts, i);
  b.lo[d] = p.lo;
  b.hi[d] = p.hi + 1;
  return b;
}

int64_t GraphView::activeClusters() const {
  const int64_t clusters = std::max<int64_t>(hw_.clusters, 1), batch = std::max<int64_t>(net_.batch, 1);
  const int64_t share = (batch + clusters - 1) / clusters;
  return (batch + share - 1) / share;
}

GraphView::GraphView(const Network &net, const DsaHardware &hw, int64_t clusterBatch) : net_(net), hw_(hw) {
  clusterBatch_ = clusterBatch > 0 ? clusterBatch : (net.batch + hw.clusters - 1) / hw.clusters;
  producers_.resize(net.layers.size());
  consumers_.resize(net.layers.size());
  for (size_t l = 0; l < net.layers.size(); ++l) {
    const LoopNest &nest = net.layers[l].nest;
    double box = 1;
    for (const IterDim &d : nest.dims)
      box *= static_cast<double>(d.extent);
    density_.push_back(nest.guard.empty() ? 1.0 : static_cast<double>(nest.points()) / box);
    for (const Access &a : nest.accesses) {
      if (!readsSource(net, a, nest.output))
        continue;
      int s = source(a);
      auto &p = producers_[l];
      if (s >= 0 && std::find(p.begin(), p.end(), s) == p.end()) {
        p.push_back(s);
        consumers_[static_cast<size_t>(s)].push_back(static_cast<int>(l));
      }
    }
  }
}

int GraphView::source(const Access &a) const { return tensorSource(net_, a.tensor); }

const Access &GraphView::outputAccess(int l) const {
  const LoopNest &nest = net_.layers[static_cast<size_t>(l)].nest;
  auto out = nest.accessesOf(nest.output);
  DFLC_CHECK(!out.empty()) << "layer '" << net_.layers[static_cast<size_t>(l)].name << "' writes no tensor";
  return *out[0];
}

Box GraphView::outputBox(int l) const {
  const Access &a = outputAccess(l);
  const LoopNest &nest = net_.layers[static_cast<size_t>(l)].nest;
  Box b{std::vector<int64_t>(a.extent.size(), 0), a.extent};
  for (size_t j = 0; j < a.index.size(); ++j)
    if (a.index[j].terms.size() == 1) {
      const IterDim &d = nest.dims[static_cast<size_t>(a.index[j].terms[0].first)];
      if (std::find(d.kapla.begin(), d.kapla.end(), Dim::N) != d.kapla.end())
        b.hi[j] = std::min(b.hi[j], clusterBatch_);
    }
  return b;
}

bool GraphView::onMatrixUnit(int l) const {
  const Layer &layer = net_.layers[static_cast<size_t>(l)];
  return layer.nest.statement == Statement::Mac && !layer.channelWise();
}

namespace {

IntervalBox toIntervals(const Box &b) {
  IntervalBox out;
  for (size_t i = 0; i < b.lo.size(); ++i)
    out.push_back({b.lo[i], b.hi[i] - 1});
  return out;
}

Box toBox(const IntervalBox &r) {
  Box b;
  for (const Interval &x : r) {
    b.lo.push_back(x.lo);
    b.hi.push_back(x.hi + 1);
  }
  return b;
}

std::map<int, Box> toBoxes(const std::map<int, IntervalBox> &m) {
  std::map<int, Box> out;
  for (const auto &[k, r] : m)
    out.emplace(k, toBox(r));
  return out;
}

} // namespace

Footprint propagate(const GraphView &g, const std::vector<int> &layers, const Box &exitBox) {
  // The halos are the model's (model/Geometry.h): the instances' of the
  // memory-hierarchy target are the same rule.
  const Halos h = propagateHalos(g.net(), layers, toIntervals(exitBox));
  Footprint f;
  f.iteration = toBoxes(h.iteration);
  f.output = toBoxes(h.output);
  f.weights = toBoxes(h.weights);
  f.external = toBoxes(h.external);
  // The live bytes of a run in order (for the peak).
  std::map<int, size_t> lastReader;
  for (size_t k = 0; k < layers.size(); ++k)
    for (const Access &a : g.net().layers[static_cast<size_t>(layers[k])].nest.accesses)
      if (readsSource(g.net(), a, g.net().layers[static_cast<size_t>(layers[k])].nest.output))
        lastReader[g.source(a)] = k;
  for (size_t k = 0; k < layers.size(); ++k) {
    int64_t live = 0;
    for (const auto &[s, b] : f.external)
      if (lastReader[s] >= k)
        live += g.bytes(b);
    for (size_t p = 0; p <= k; ++p) {
      int l = layers[p];
      bool exit = p + 1 == layers.size();
      if (p == k || exit || (lastReader.count(l) && lastReader[l] >= k))
        live += g.bytes(f.output[l]);
    }
    f.peakBytes = std::max(f.peakBytes, live);
  }
  return f;
}

} // namespace dfl::graph
