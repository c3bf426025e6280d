// Tile geometry (model/Geometry.h).
#include "model/Geometry.h"

#include "support/IntMath.h"

#include <array>
#include <numeric>

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

} // namespace dfl
