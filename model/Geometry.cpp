// Tile geometry (model/Geometry.h).
#include "model/Geometry.h"

#include "model/Network.h"
#include "support/Check.h"
#include "support/IntMath.h"

#include <array>
#include <numeric>
#include <optional>
#include <set>

namespace dfl {

namespace {

std::vector<Dim> makeTileDims(TensorRole r, bool channelWise, bool perSample) {
  std::vector<Dim> out;
  if (perSample && r == TensorRole::Wgt)
    out.push_back(Dim::N);
  for (Dim d : roleDims(r))
    if (!(channelWise && r == TensorRole::Wgt && d == Dim::K))
      out.push_back(canonicalDim(d, channelWise));
  return out;
}

} // namespace

bool boxEmpty(const IntervalBox &b) {
  return b.empty() || std::any_of(b.begin(), b.end(), [](const Interval &r) { return r.empty(); });
}

void hullInto(IntervalBox &acc, const IntervalBox &b) {
  if (boxEmpty(b))
    return;
  if (boxEmpty(acc)) {
    acc = b;
    return;
  }
  for (size_t t = 0; t < acc.size(); ++t)
    acc[t] = acc[t].hull(b[t]);
}

Interval equalPiece(const Interval &whole, int64_t parts, int64_t i) {
  const int64_t len = whole.hi - whole.lo + 1;
  return {whole.lo + len * i / parts, whole.lo + len * (i + 1) / parts - 1};
}

const std::vector<Dim> &tileDims(TensorRole r, bool channelWise, bool perSample) {
  // Built once: the tiling solver asks for them in its inner loops.
  static const auto table = [] {
    std::array<std::vector<Dim>, kNumRoles * 4> t;
    for (size_t r = 0; r < kNumRoles; ++r)
      for (int k = 0; k < 4; ++k)
        t[r * 4 + static_cast<size_t>(k)] = makeTileDims(static_cast<TensorRole>(r), k & 1, k & 2);
    return t;
  }();
  return table[static_cast<size_t>(r) * 4 + (channelWise ? 1 : 0) + (perSample ? 2 : 0)];
}

bool wgtPerSample(const LoopNest &nest) {
  for (const Access *a : nest.accessesOf(TensorRole::Wgt))
    for (const AffineExpr &e : a->index)
      for (auto [dim, coefficient] : e.terms) {
        const std::vector<Dim> &k = nest.dims[static_cast<size_t>(dim)].kapla;
        if (std::find(k.begin(), k.end(), Dim::N) != k.end())
          return true;
      }
  return false;
}

int64_t tileWords(TensorRole r, const DimVector &extent, bool channelWise, bool perSample) {
  int64_t words = 1;
  for (Dim d : tileDims(r, channelWise, perSample))
    words *= at(extent, d);
  return words;
}

Interval affineImage(const AffineExpr &e, const std::vector<Interval> &box) {
  Interval out{e.constant, e.constant};
  for (auto [i, c] : e.terms) {
    const Interval &r = box[static_cast<size_t>(i)];
    if (r.empty())
      return r;
    out.lo += c > 0 ? c * r.lo : c * r.hi;
    out.hi += c > 0 ? c * r.hi : c * r.lo;
  }
  return out;
}

int64_t affineStride(const AffineExpr &e, const std::vector<Interval> &box) {
  int64_t g = 0;
  for (auto [i, c] : e.terms)
    if (box[static_cast<size_t>(i)].size() > 1)
      g = std::gcd(g, c < 0 ? -c : c);
  return g > 0 ? g : 1;
}

Interval onLattice(const Interval &r, int64_t origin, int64_t stride) {
  if (r.empty())
    return r;
  return {origin + ceilDiv(r.lo - origin, stride) * stride, origin + floorDiv(r.hi - origin, stride) * stride};
}

bool narrowByGuards(const Access &a, std::vector<Interval> &box) {
  for (const AffineExpr &g : a.guard) {
    if (g.terms.size() != 1)
      continue;
    auto [i, c] = g.terms[0];
    Interval &r = box[static_cast<size_t>(i)];
    // c·x + k >= 0: x >= ⌈−k/c⌉ (c > 0) or x <= ⌊k/−c⌋ (c < 0).
    if (c > 0)
      r.lo = std::max(r.lo, -floorDiv(g.constant, c));
    else
      r.hi = std::min(r.hi, floorDiv(g.constant, -c));
    if (r.empty())
      return false;
  }
  return true;
}

Interval foldImage(const IterDimFold &f, const Interval &c) {
  if (c.empty())
    return c;
  int64_t a = c.lo / f.divisor, b = c.hi / f.divisor;
  if (b - a + 1 >= f.extent || a % f.extent > b % f.extent)
    return {0, f.extent - 1};
  return {a % f.extent, b % f.extent};
}

IntervalBox outputPreimage(const LoopNest &nest, const Access &out, const IntervalBox &box) {
  IntervalBox it;
  for (const IterDim &d : nest.dims)
    it.push_back({0, d.extent - 1});
  for (size_t j = 0; j < out.index.size(); ++j) {
    const AffineExpr &e = out.index[j];
    if (e.terms.empty() || (box[j].lo <= 0 && box[j].hi >= out.extent[j] - 1))
      continue;
    auto outer = std::max_element(e.terms.begin(), e.terms.end(),
                                  [](const auto &a, const auto &b) { return a.second < b.second; });
    const auto [i, c] = *outer;
    if (c <= 0)
      continue;
    // The other terms' range: below c in a mixed-radix index (s·q + p), a
    // window's taps in a scatter (a conv_transpose's xi·s + r − pad), where
    // an outer value is needed if any tap reaches the box.
    int64_t least = 0, most = 0;
    for (const auto &[d, k] : e.terms)
      if (d != i)
        (k > 0 ? most : least) += k * (nest.dims[static_cast<size_t>(d)].extent - 1);
    Interval &r = it[static_cast<size_t>(i)];
    r.lo = std::max(r.lo, ceilDiv(box[j].lo - e.constant - most, c));
    r.hi = std::min(r.hi, floorDiv(box[j].hi - e.constant - least, c));
  }
  return it;
}

IntervalBox accessImage(const Access &a, std::vector<Interval> iters) {
  if (iters.empty() || !narrowByGuards(a, iters) || boxEmpty(iters))
    return IntervalBox(a.extent.size(), Interval{0, -1});
  IntervalBox out;
  for (size_t j = 0; j < a.index.size(); ++j) {
    const Interval image = affineImage(a.index[j], iters);
    out.push_back({std::clamp<int64_t>(image.lo, 0, a.extent[j]), std::clamp<int64_t>(image.hi, -1, a.extent[j] - 1)});
  }
  return out;
}

namespace {

std::optional<int> findSource(const Network &net, const std::string &name) {
  if (auto n = net.names.find(name); n != net.names.end())
    return n->second.isInput ? -1 - n->second.index : n->second.index;
  // A network built by hand, without names.
  for (size_t l = 0; l < net.layers.size(); ++l)
    if (net.layers[l].name == name)
      return static_cast<int>(l);
  for (size_t i = 0; i < net.inputs.size(); ++i)
    if (net.inputs[i].name == name)
      return -1 - static_cast<int>(i);
  return std::nullopt;
}

} // namespace

int tensorSource(const Network &net, const std::string &name) {
  std::optional<int> s = findSource(net, name);
  DFLC_CHECK(s) << "access to unknown tensor '" << name << "'";
  return *s;
}

bool readsSource(const Network &net, const Access &a, TensorRole output) {
  return a.role != output && (a.role != TensorRole::Wgt || findSource(net, a.tensor));
}

Halos propagateHalos(const Network &net, const std::vector<int> &layers, const IntervalBox &exitBox) {
  Halos h;
  const std::set<int> inside(layers.begin(), layers.end());
  h.output[layers.back()] = exitBox;
  for (auto l = layers.rbegin(); l != layers.rend(); ++l) {
    const IntervalBox out = h.output[*l];
    if (boxEmpty(out))
      continue;   // no later layer needs any of it
    const Layer &layer = net.layers[static_cast<size_t>(*l)];
    const LoopNest &nest = layer.nest;
    std::vector<const Access *> writes = nest.accessesOf(nest.output);
    DFLC_CHECK(!writes.empty()) << "layer '" << layer.name << "' writes no tensor";
    const IntervalBox it = outputPreimage(nest, *writes[0], out);
    h.iteration[*l] = it;
    for (const Access &a : nest.accesses) {
      if (a.role == nest.output)
        continue;
      const IntervalBox b = accessImage(a, it);
      if (!readsSource(net, a, nest.output)) {
        hullInto(h.weights[*l], b);
        continue;
      }
      const int s = tensorSource(net, a.tensor);
      hullInto(inside.count(s) ? h.output[s] : h.external[s], b);
    }
  }
  return h;
}

} // namespace dfl
