#include "scheduler/graph/TensorBoxes.h"

#include "model/Geometry.h"

#include "support/Check.h"

#include <algorithm>
#include <set>

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
  int64_t len = box.hi[d] - box.lo[d];
  b.lo[d] = box.lo[d] + len * i / parts;
  b.hi[d] = box.lo[d] + len * (i + 1) / parts;
  return b;
}

int64_t GraphView::activeClusters() const {
  const int64_t clusters = std::max<int64_t>(hw_.clusters, 1), batch = std::max<int64_t>(net_.batch, 1);
  const int64_t share = (batch + clusters - 1) / clusters;
  return (batch + share - 1) / share;
}

GraphView::GraphView(const Network &net, const DsaHardware &hw, int64_t clusterBatch) : net_(net), hw_(hw) {
  clusterBatch_ = clusterBatch > 0 ? clusterBatch : (net.batch + hw.clusters - 1) / hw.clusters;
  for (size_t i = 0; i < net.inputs.size(); ++i)
    sources_[net.inputs[i].name] = -1 - static_cast<int>(i);
  for (size_t l = 0; l < net.layers.size(); ++l)
    sources_[net.layers[l].name] = static_cast<int>(l);
  producers_.resize(net.layers.size());
  consumers_.resize(net.layers.size());
  for (size_t l = 0; l < net.layers.size(); ++l) {
    const LoopNest &nest = net.layers[l].nest;
    for (const Access &a : nest.accesses) {
      if (a.role == TensorRole::Wgt || a.role == nest.output)
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

int GraphView::source(const Access &a) const {
  auto it = sources_.find(a.tensor);
  if (it != sources_.end())
    return it->second;
  auto n = net_.names.find(a.tensor);   // an alias of a fused activation
  DFLC_CHECK(n != net_.names.end()) << "access to unknown tensor '" << a.tensor << "'";
  return n->second.isInput ? -1 - n->second.index : n->second.index;
}

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

/// The iteration box of `nest` whose output access covers `out`: dims indexing
/// the output take the range they index (a folded index, several dims in one
/// tensor dimension, cuts its outermost dim and keeps the others whole);
/// reduction dims are whole.
Box iterationBox(const LoopNest &nest, const Access &outAccess, const Box &out) {
  Box it;
  for (const IterDim &d : nest.dims) {
    it.lo.push_back(0);
    it.hi.push_back(d.extent);
  }
  for (size_t j = 0; j < outAccess.index.size(); ++j) {
    const AffineExpr &e = outAccess.index[j];
    if (e.terms.empty() || (out.lo[j] <= 0 && out.hi[j] >= outAccess.extent[j]))
      continue;
    auto outer = std::max_element(e.terms.begin(), e.terms.end(),
                                  [](const auto &a, const auto &b) { return a.second < b.second; });
    const size_t i = static_cast<size_t>(outer->first);
    const int64_t c = outer->second, lo = out.lo[j] - e.constant, hi = out.hi[j] - e.constant;
    if (c <= 0)
      continue;
    it.lo[i] = std::max(it.lo[i], lo / c);
    it.hi[i] = std::min(it.hi[i], (hi - 1) / c + 1);
  }
  return it;
}

/// The box of tensor elements access `a` touches over iteration box `it`
/// (guards of one dim tighten it; an access its guards exclude touches nothing).
Box accessBox(const Access &a, const Box &it) {
  std::vector<Interval> iters;
  for (size_t k = 0; k < it.lo.size(); ++k)
    iters.push_back({it.lo[k], it.hi[k] - 1});
  Box b;
  if (it.lo.empty() || !narrowByGuards(a, iters) ||
      std::any_of(iters.begin(), iters.end(), [](const Interval &r) { return r.empty(); })) {
    b.lo.assign(a.extent.size(), 0);
    b.hi.assign(a.extent.size(), 0);
    return b;
  }
  for (size_t j = 0; j < a.index.size(); ++j) {
    const Interval image = affineImage(a.index[j], iters);
    b.lo.push_back(std::clamp<int64_t>(image.lo, 0, a.extent[j]));
    b.hi.push_back(std::clamp<int64_t>(image.hi + 1, 0, a.extent[j]));
  }
  return b;
}

} // namespace

Footprint propagate(const GraphView &g, const std::vector<int> &layers, const Box &exitBox) {
  Footprint f;
  const std::set<int> inside(layers.begin(), layers.end());
  f.output[layers.back()] = exitBox;
  for (auto l = layers.rbegin(); l != layers.rend(); ++l) {
    const Box &out = f.output[*l];
    if (out.empty())
      continue;
    const LoopNest &nest = g.net().layers[static_cast<size_t>(*l)].nest;
    Box it = iterationBox(nest, g.outputAccess(*l), out);
    f.iteration[*l] = it;
    for (const Access &a : nest.accesses) {
      if (a.role == nest.output)
        continue;
      Box b = accessBox(a, it);
      if (a.role == TensorRole::Wgt) {
        f.weights[*l].hull(b);
        continue;
      }
      int s = g.source(a);
      (inside.count(s) ? f.output[s] : f.external[s]).hull(b);
    }
  }
  // The live bytes of a run in order (for the peak).
  std::map<int, size_t> lastReader;
  for (size_t k = 0; k < layers.size(); ++k)
    for (const Access &a : g.net().layers[static_cast<size_t>(layers[k])].nest.accesses)
      if (a.role != TensorRole::Wgt && a.role != g.net().layers[static_cast<size_t>(layers[k])].nest.output)
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
