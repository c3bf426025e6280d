#include "model/LoopNest.h"

#include "support/Check.h"
#include "support/IntMath.h"

#include <algorithm>

namespace dfl {
namespace {

/// Adds k·b to a (terms stay sorted and without zeros).
AffineExpr combine(AffineExpr a, const AffineExpr &b, int64_t k) {
  for (auto [dim, coeff] : b.terms) {
    auto it = std::lower_bound(a.terms.begin(), a.terms.end(), dim,
                               [](const std::pair<int, int64_t> &t, int d) { return t.first < d; });
    if (it != a.terms.end() && it->first == dim) {
      it->second += k * coeff;
      if (it->second == 0)
        a.terms.erase(it);
    } else if (k * coeff != 0) {
      a.terms.insert(it, {dim, k * coeff});
    }
  }
  a.constant += k * b.constant;
  return a;
}

std::string tuple(const std::string &name, const std::vector<std::string> &items) {
  std::string out = name + "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + items[i];
  return out + "]";
}

/// `0 <= a < 4 and 0 <= b < 2`, or empty for no bounds.
std::string boxText(const std::vector<std::string> &names, const std::vector<int64_t> &extents) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i ? " and " : "") + std::string("0 <= ") + names[i] + " < " + std::to_string(extents[i]);
  return out;
}

std::string setText(const std::string &tupleText, const std::string &constraints) {
  return "{ " + tupleText + (constraints.empty() ? "" : " : " + constraints) + " }";
}

} // namespace

const char *statementName(Statement s) {
  switch (s) {
  case Statement::Mac: return "mac";
  case Statement::Max: return "max";
  case Statement::Average: return "average";
  case Statement::Add: return "add";
  case Statement::Mul: return "mul";
  case Statement::Copy: return "copy";
  case Statement::Unary: return "unary";
  case Statement::Softmax: return "softmax";
  case Statement::LayerNorm: return "layernorm";
  case Statement::RmsNorm: return "rmsnorm";
  case Statement::Rope: return "rope";
  case Statement::Bilinear: return "bilinear";
  }
  return "?";
}

const std::vector<UnaryFnSpec> &unaryFunctions() {
  // Operations per point: the float formula's, counted as gelu's tanh form
  // is (docs/directives.md §7). sigmoid 1/(1 + exp(−x)): negate, exp, +1,
  // divide. silu x/(1 + exp(−x)), as PyTorch computes it: negate, exp, +1,
  // divide.
  static const std::vector<UnaryFnSpec> fns = {
      {UnaryFn::Gelu, "gelu", 9},   // x^3 (2), *0.044715, +x, *sqrt(2/pi), tanh, +1, *x, *0.5
      {UnaryFn::Silu, "silu", 4},
      {UnaryFn::Sigmoid, "sigmoid", 4},
  };
  return fns;
}

const UnaryFnSpec &unarySpec(UnaryFn f) {
  const auto &fns = unaryFunctions();
  const size_t i = static_cast<size_t>(f);
  DFLC_CHECK(i < fns.size() && fns[i].fn == f) << "UnaryFn " << i << " out of unaryFunctions()' order";
  return fns[i];
}

const char *LoopNest::statementName() const {
  return statement == Statement::Unary ? unarySpec(unary).name : dfl::statementName(statement);
}

// ---- affine expressions -----------------------------------------------------

AffineExpr AffineExpr::dim(int index) {
  AffineExpr e;
  e.terms.push_back({index, 1});
  return e;
}

int64_t AffineExpr::coefficient(int index) const {
  for (auto [dim, coeff] : terms)
    if (dim == index)
      return coeff;
  return 0;
}

int64_t AffineExpr::evaluate(const std::vector<int64_t> &point) const {
  int64_t v = constant;
  for (auto [dim, coeff] : terms) {
    DFLC_CHECK(static_cast<size_t>(dim) < point.size()) << "dimension " << dim << " of a point of " << point.size();
    v += coeff * point[static_cast<size_t>(dim)];
  }
  return v;
}

AffineExpr operator+(AffineExpr a, const AffineExpr &b) { return combine(std::move(a), b, 1); }
AffineExpr operator-(AffineExpr a, const AffineExpr &b) { return combine(std::move(a), b, -1); }
AffineExpr operator*(AffineExpr a, int64_t k) { return combine(AffineExpr(), a, k); }

// ---- the nest ---------------------------------------------------------------

AffineExpr LoopNest::addDim(std::string dimName, int64_t extent, std::vector<Dim> kapla) {
  DFLC_CHECK(findDim(dimName) < 0) << "dimension '" << dimName << "' twice in nest '" << name << "'";
  dims.push_back({std::move(dimName), extent, std::move(kapla)});
  return AffineExpr::dim(static_cast<int>(dims.size() - 1));
}

int LoopNest::findDim(const std::string &dimName) const {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].name == dimName)
      return static_cast<int>(i);
  return -1;
}

std::vector<const Access *> LoopNest::accessesOf(TensorRole r) const {
  std::vector<const Access *> out;
  for (const Access &a : accesses)
    if (a.role == r)
      out.push_back(&a);
  return out;
}

int64_t LoopNest::points() const {
  // The dims no guard names multiply; over the guarded ones, all but the
  // longest are enumerated and its interval solved from each guard (a
  // triangle: O(its shorter side), not O(its points)).
  std::vector<int> guarded;
  for (const AffineExpr &g : guard)
    for (auto [dim, coeff] : g.terms)
      if (std::find(guarded.begin(), guarded.end(), dim) == guarded.end())
        guarded.push_back(dim);
  int64_t p = 1;
  for (size_t i = 0; i < dims.size(); ++i)
    if (std::find(guarded.begin(), guarded.end(), static_cast<int>(i)) == guarded.end())
      p *= dims[i].extent;
  // The longest last: it is the one solved.
  std::stable_sort(guarded.begin(), guarded.end(), [&](int x, int y) {
    return dims[static_cast<size_t>(x)].extent < dims[static_cast<size_t>(y)].extent;
  });
  if (guarded.empty())
    return p;
  const int last = guarded.back();
  const int64_t extent = dims[static_cast<size_t>(last)].extent;
  std::vector<int64_t> point(dims.size(), 0);
  int64_t sum = 0;
  while (true) {
    int64_t lo = 0, hi = extent - 1;   // last's values satisfying every guard
    for (const AffineExpr &g : guard) {
      const int64_t a = g.coefficient(last), rest = g.evaluate(point) - a * point[static_cast<size_t>(last)];
      if (a > 0)
        lo = std::max(lo, -floorDiv(rest, a));   // a·v + rest >= 0: v >= ⌈−rest/a⌉
      else if (a < 0)
        hi = std::min(hi, floorDiv(rest, -a));
      else if (rest < 0)
        hi = -1;
    }
    sum += std::max<int64_t>(0, hi - lo + 1);
    size_t i = guarded.size() - 1;   // the next point of the others, odometer-wise
    while (i-- > 0) {
      int64_t &v = point[static_cast<size_t>(guarded[i])];
      if (++v < dims[static_cast<size_t>(guarded[i])].extent)
        break;
      v = 0;
    }
    if (i == static_cast<size_t>(-1))
      break;
  }
  return p * sum;
}

bool LoopNest::inDomain(const std::vector<int64_t> &point) const {
  return std::all_of(guard.begin(), guard.end(), [&](const AffineExpr &g) { return g.evaluate(point) >= 0; });
}

std::vector<int> LoopNest::reductionDims() const {
  std::vector<bool> indexes(dims.size(), false);
  for (const Access *a : accessesOf(output))
    for (const AffineExpr &e : a->index)
      for (auto [dim, coeff] : e.terms)
        indexes[static_cast<size_t>(dim)] = true;
  std::vector<int> out;
  for (size_t i = 0; i < dims.size(); ++i)
    if (!indexes[i])
      out.push_back(static_cast<int>(i));
  return out;
}

std::string LoopNest::exprText(const AffineExpr &e) const {
  std::string out;
  for (auto [dim, coeff] : e.terms) {
    DFLC_CHECK(static_cast<size_t>(dim) < dims.size()) << "dimension " << dim << " in nest '" << name << "'";
    int64_t mag = coeff < 0 ? -coeff : coeff;
    out += out.empty() ? (coeff < 0 ? "-" : "") : (coeff < 0 ? " - " : " + ");
    out += (mag == 1 ? "" : std::to_string(mag) + "*") + dims[static_cast<size_t>(dim)].name;
  }
  if (out.empty())
    return std::to_string(e.constant);
  if (e.constant != 0)
    out += (e.constant < 0 ? " - " : " + ") + std::to_string(e.constant < 0 ? -e.constant : e.constant);
  return out;
}

std::string LoopNest::toIslSet() const {
  std::vector<std::string> names;
  std::vector<int64_t> extents;
  for (const IterDim &d : dims) {
    names.push_back(d.name);
    extents.push_back(d.extent);
  }
  std::string constraints = boxText(names, extents);
  for (const AffineExpr &g : guard)
    constraints += " and " + exprText(g) + " >= 0";
  return setText(tuple(name.empty() ? "S" : name, names), constraints);
}

std::string LoopNest::toIslMap(const Access &a) const {
  std::vector<std::string> names, index;
  for (const IterDim &d : dims)
    names.push_back(d.name);
  for (const AffineExpr &e : a.index)
    index.push_back(exprText(e));
  std::string guard;
  for (const AffineExpr &g : a.guard)
    guard += (guard.empty() ? "" : " and ") + exprText(g) + " >= 0";
  return setText(tuple(name.empty() ? "S" : name, names) + " -> " + tuple(a.tensor, index), guard);
}

std::string LoopNest::toIslTensorSet(const Access &a) {
  std::vector<std::string> names;
  for (size_t i = 0; i < a.extent.size(); ++i)
    names.push_back("i" + std::to_string(i));
  return setText(tuple(a.tensor, names), boxText(names, a.extent));
}

std::string LoopNest::text() const {
  auto accessText = [&](const Access &a) {
    std::vector<std::string> index;
    for (const AffineExpr &e : a.index)
      index.push_back(exprText(e));
    return std::string(roleName(a.role)) + " " + tuple(a.tensor, index);
  };
  std::string out, in;
  for (const Access &a : accesses) {
    std::string &list = a.role == output ? out : in;
    list += (list.empty() ? "" : ", ") + accessText(a);
  }
  std::string where;
  for (const AffineExpr &g : guard)
    where += (where.empty() ? " : " : " and ") + exprText(g) + " >= 0";
  return out + " <- " + statementName() + "(" + in + ")" + where;
}

// ---- the KAPLA nine-dimension view ------------------------------------------

KaplaView kaplaView(const LoopNest &nest) {
  KaplaView v;
  v.bounds.fill(1);
  for (const IterDim &d : nest.dims) {
    for (Dim k : d.kapla)
      at(v.bounds, k) *= d.extent;
    v.channelWise |= std::find(d.kapla.begin(), d.kapla.end(), Dim::C) != d.kapla.end() &&
                     std::find(d.kapla.begin(), d.kapla.end(), Dim::K) != d.kapla.end();
  }
  std::vector<const Access *> ifm = nest.accessesOf(TensorRole::Ifm);
  DFLC_CHECK(!ifm.empty() && ifm[0]->extent.size() == 4) << "nest '" << nest.name << "' has no [N, C, X, Y] ifm";
  at(v.bounds, Dim::Xi) = ifm[0]->extent[2];
  at(v.bounds, Dim::Yi) = ifm[0]->extent[3];
  // A concatenation along the width or height (guarded operands whose index
  // there is offset): the input spans all of theirs.
  if (ifm.size() > 1 && !ifm[0]->guard.empty())
    for (int j : {2, 3})
      if (!(ifm[1]->index[j] == ifm[0]->index[j])) {
        int64_t &joined = at(v.bounds, j == 2 ? Dim::Xi : Dim::Yi);
        joined = 0;
        for (const Access *a : ifm)
          joined += a->extent[static_cast<size_t>(j)];
      }
  // A Yo-dim the ifm's rows are not indexed by (grouped-query attention's
  // member of a group, which indexes channels, docs/language.md): the view
  // counts its ifm words as rows, Yi = Yo, as a 1 x 1 window reads them.
  int64_t rows = ifm[0]->extent[3];
  if (at(v.bounds, Dim::Yo) > 1 && ifm[0]->index[3].terms.empty())
    rows = at(v.bounds, Dim::Yi) = at(v.bounds, Dim::Yo);
  // Per axis: the width index (2) for Xo and R, the height index (3) for Yo and S.
  auto axis = [&](int index, Dim out, Dim tap, int64_t extent) {
    const AffineExpr &e = ifm[0]->index[index];
    WindowAxis a;
    for (size_t i = 0; i < nest.dims.size(); ++i) {
      const std::vector<Dim> &k = nest.dims[i].kapla;
      int64_t c = e.coefficient(static_cast<int>(i));
      if (c && std::find(k.begin(), k.end(), out) != k.end())
        a.stride = c;
      if (c && std::find(k.begin(), k.end(), tap) != k.end())
        a.dilation = c;
    }
    a.padBegin = -e.constant;
    a.padEnd = std::max<int64_t>(0, windowSpan(at(v.bounds, out), at(v.bounds, tap), a) - a.padBegin - extent);
    return a;
  };
  v.window.x = axis(2, Dim::Xo, Dim::R, ifm[0]->extent[2]);
  v.window.y = axis(3, Dim::Yo, Dim::S, rows);
  return v;
}

int64_t windowTaps(int64_t span, int64_t outputs, int64_t stride, int64_t dilation) {
  int64_t rest = span - (outputs - 1) * stride - 1;
  return rest >= 0 && rest % dilation == 0 ? rest / dilation + 1 : 0;
}

void deriveInputExtents(DimVector &e, const Window &w) {
  at(e, Dim::Xi) = windowSpan(at(e, Dim::Xo), at(e, Dim::R), w.x);
  at(e, Dim::Yi) = windowSpan(at(e, Dim::Yo), at(e, Dim::S), w.y);
}

bool foldIterDims(const LoopNest &nest, bool channelWise, std::vector<IterDimFold> &out, std::string &why) {
  auto canon = [&](Dim d) { return channelWise && d == Dim::K ? Dim::C : d; };
  out.resize(nest.dims.size());
  for (size_t i = nest.dims.size(); i-- > 0;) {
    const IterDim &dim = nest.dims[i];
    if (dim.kapla.empty()) {
      why = "iteration dim '" + dim.name + "' folds into no loop dim";
      return false;
    }
    Dim from = canon(dim.kapla[0]);
    int64_t divisor = 1;
    for (size_t j = i + 1; j < nest.dims.size(); ++j)
      if (!nest.dims[j].kapla.empty() && canon(nest.dims[j].kapla[0]) == from)
        divisor *= nest.dims[j].extent;
    out[i] = {from, divisor, dim.extent};
  }
  return true;
}

} // namespace dfl
