#include "scheduler/embedding/IntrinsicEmbedding.h"

#include "scheduler/embedding/GecodeLimitStop.h"
#include "support/Check.h"
#include "support/IntMath.h"

#include <gecode/int.hh>
#include <gecode/minimodel.hh>
#include <gecode/search.hh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

namespace dfl {

const char *embeddingModelName(EmbeddingModel m) {
  switch (m) {
  case EmbeddingModel::Strict: return "strict";
  case EmbeddingModel::Relaxed: return "relaxed";
  case EmbeddingModel::Padded: return "padded";
  }
  return "?";
}

int64_t Embedding::sideOf(size_t o) const {
  int64_t s = 1;
  for (const auto &row : side)
    s *= row[o];
  return s;
}

namespace {

using namespace Gecode;


/// The two nests seen as dataflow graphs: which tensors every dim indexes
/// (its label, §3.1) and how every operator dim may be accessed (§4.2.3).
struct Setup {
  const LoopNest &op, &in;
  bool swapped;
  // The intrinsic's accesses by role (out, lhs, rhs) and the operator's
  // accesses they read: ofm, then ifm and wgt (or wgt and ifm if swapped).
  const Access *inAcc[3]{}, *opAcc[3]{};
  std::vector<unsigned> inLabel, opLabel;   // bit r: indexes tensor r
  std::vector<bool> stencil, strided;       // per operator dim
  std::vector<std::vector<int>> elementDims; // per intrinsic role: its index dims
  int64_t maxSide = 1;

  Setup(const LoopNest &o, const LoopNest &i, bool swap) : op(o), in(i), swapped(swap) {
    inAcc[0] = in.accessesOf(TensorRole::Ofm)[0];
    inAcc[1] = in.accessesOf(TensorRole::Ifm)[0];
    inAcc[2] = in.accessesOf(TensorRole::Wgt)[0];
    opAcc[0] = op.accessesOf(TensorRole::Ofm)[0];
    opAcc[1] = op.accessesOf(swap ? TensorRole::Wgt : TensorRole::Ifm)[0];
    opAcc[2] = op.accessesOf(swap ? TensorRole::Ifm : TensorRole::Wgt)[0];
    inLabel.assign(in.dims.size(), 0);
    for (int r = 0; r < 3; ++r) {
      elementDims.emplace_back();
      for (const AffineExpr &x : inAcc[r]->index) {
        int d = x.terms.at(0).first;
        inLabel[static_cast<size_t>(d)] |= 1u << r;
        elementDims.back().push_back(d);
      }
    }
    for (const IterDim &d : in.dims)
      maxSide = std::max(maxSide, d.extent);
    const size_t nO = op.dims.size();
    opLabel.assign(nO, 0);
    stencil.assign(nO, false);
    strided.assign(nO, false);
    for (int r = 0; r < 3; ++r)
      for (const AffineExpr &x : opAcc[r]->index) {
        int iterators = 0;
        for (auto [o, c] : x.terms)
          iterators += op.dims[static_cast<size_t>(o)].extent > 1;
        for (auto [o, c] : x.terms) {
          opLabel[static_cast<size_t>(o)] |= 1u << r;
          if (iterators > 1 && op.dims[static_cast<size_t>(o)].extent > 1)
            stencil[static_cast<size_t>(o)] = true;
          if (c != 1)
            strided[static_cast<size_t>(o)] = true;
        }
      }
  }
  size_t points() const { return static_cast<size_t>(in.points()); }
  /// Intrinsic point number n as coordinates (the first dim outermost).
  std::vector<int64_t> point(size_t n) const {
    std::vector<int64_t> p(in.dims.size());
    for (size_t d = in.dims.size(); d-- > 0;) {
      p[d] = static_cast<int64_t>(n) % in.dims[d].extent;
      n /= static_cast<size_t>(in.dims[d].extent);
    }
    return p;
  }
  /// The number of the role-r data element point p reads.
  size_t element(int r, const std::vector<int64_t> &p) const {
    size_t q = 0;
    for (int d : elementDims[static_cast<size_t>(r)])
      q = q * static_cast<size_t>(in.dims[static_cast<size_t>(d)].extent) + static_cast<size_t>(p[static_cast<size_t>(d)]);
    return q;
  }
  size_t elements(int r) const {
    size_t n = 1;
    for (int d : elementDims[static_cast<size_t>(r)])
      n *= static_cast<size_t>(in.dims[static_cast<size_t>(d)].extent);
    return n;
  }
};

/// The CSP of §4.1: a variable per intrinsic node, valued in the operator's
/// instance set (operations) or tensors (data elements), one coordinate per
/// variable so no domain grows with the operator.
class EmbeddingSpace : public Space {
public:
  IntVarArray side;      // [d][o]: the rectangle's side lengths (Fig. 3's DimTable)
  IntVarArray origin;    // [o]
  IntVarArray point;     // [p][o]: the operations
  IntVarArray element;   // data elements of out, lhs, rhs: [q][t] per role, concatenated

  /// `asset` < 0: no branching yet (a portfolio's master: slave() posts it).
  /// Over 150 lines on purpose: a Gecode space posts its whole model in its
  /// constructor, into variables it owns, and the sections below follow the
  /// paper's §4.2 constraint by constraint; split, they would pass the
  /// variable arrays and their index lambdas around for nothing.
  EmbeddingSpace(const Setup &s, EmbeddingModel model, bool outputsFirst, int asset) {
    const size_t nI = s.in.dims.size(), nO = s.op.dims.size(), nP = s.points();
    side = IntVarArray(*this, static_cast<int>(nI * nO));
    origin = IntVarArray(*this, static_cast<int>(nO), 0, 0);
    point = IntVarArray(*this, static_cast<int>(nP * nO));
    auto sideAt = [&](size_t d, size_t o) -> IntVar & { return side[static_cast<int>(d * nO + o)]; };

    // Labels and access kinds (§4.2.1 labels, §4.2.3 linear access and
    // dense): intrinsic dim d may take points of operator dim o only if both
    // index the same tensors; the strict model also keeps stencil and
    // strided dims out. Strict and relaxed sides divide their dim (no
    // padding); padded sides only divide the intrinsic's.
    for (size_t d = 0; d < nI; ++d) {
      const int64_t e = s.in.dims[d].extent;
      for (size_t o = 0; o < nO; ++o) {
        const int64_t E = s.op.dims[o].extent;
        bool allowed = s.inLabel[d] == s.opLabel[o];
        if (model == EmbeddingModel::Strict && (s.stencil[o] || s.strided[o]))
          allowed = false;
        std::vector<int> values{1};
        for (int64_t v = 2; allowed && v <= e; ++v)
          if (e % v == 0 && (model == EmbeddingModel::Padded || E % v == 0))
            values.push_back(static_cast<int>(v));
        sideAt(d, o) = IntVar(*this, IntSet(IntArgs(values)));
      }
    }
    // Hyper-rectangle (§4.2.2): the sides of intrinsic dim d multiply to its
    // extent, and every operator dim is a side of at most one intrinsic dim.
    for (size_t d = 0; d < nI; ++d) {
      const int e = static_cast<int>(s.in.dims[d].extent);
      IntVar product = sideAt(d, 0);
      for (size_t o = 1; o < nO; ++o) {
        IntVar next(*this, 1, e);
        mult(*this, product, sideAt(d, o), next);
        product = next;
      }
      rel(*this, product, IRT_EQ, e);
    }
    for (size_t o = 0; o < nO; ++o) {
      BoolVarArgs used;
      for (size_t d = 0; d < nI; ++d)
        used << expr(*this, sideAt(d, o) > 1);
      linear(*this, used, IRT_LQ, 1);
    }
    // Fixed origin: the first match sits at the operator's origin.
    // (origin was created fixed at 0; a relaxed origin would widen its domain.)

    // The operations: intrinsic point p covers operator coordinate
    // origin + digit, the digit of p_d in the mixed radix of d's sides (the
    // operator's later dims innermost); dense: consecutive points one apart.
    // Domain-size reduction (§7 B): a coordinate stays below the largest
    // intrinsic dim.
    std::vector<std::vector<std::vector<IntVar>>> digit(nI, std::vector<std::vector<IntVar>>(nO));
    for (size_t d = 0; d < nI; ++d) {
      const int e = static_cast<int>(s.in.dims[d].extent);
      IntVar radix(*this, 1, 1);
      for (size_t o = nO; o-- > 0;) {
        for (int v = 0; v < e; ++v) {
          if (sideAt(d, o).assigned() && sideAt(d, o).val() == 1) {
            digit[d][o].push_back(IntVar(*this, 0, 0));
            continue;
          }
          IntVar quotient(*this, 0, e - 1), rest(*this, 0, e - 1);
          div(*this, IntVar(*this, v, v), radix, quotient);
          mod(*this, quotient, sideAt(d, o), rest);
          digit[d][o].push_back(rest);
        }
        IntVar next(*this, 1, e);
        mult(*this, radix, sideAt(d, o), next);
        radix = next;
      }
    }
    for (size_t n = 0; n < nP; ++n) {
      std::vector<int64_t> p = s.point(n);
      for (size_t o = 0; o < nO; ++o) {
        const int64_t E = s.op.dims[o].extent;
        const int64_t bound = model == EmbeddingModel::Padded ? s.maxSide : std::min(E, s.maxSide);
        IntVar &x = point[static_cast<int>(n * nO + o)];
        x = IntVar(*this, 0, static_cast<int>(bound - 1));
        IntVarArgs terms;
        terms << origin[static_cast<int>(o)];
        for (size_t d = 0; d < nI; ++d)
          terms << digit[d][o][static_cast<size_t>(p[d])];
        linear(*this, terms, IRT_EQ, x);
      }
    }

    // The data elements and the dataflow edges (§4.2.1, Fig. 2): every
    // operation reads its intrinsic elements at the operator tensor index
    // the operator's access relation gives its point. Operations that share
    // an intrinsic element (reuse, the reduction's self-edge) must therefore
    // share the operator's element.
    std::vector<size_t> base(3);
    size_t total = 0;
    for (int r = 0; r < 3; ++r) {
      base[static_cast<size_t>(r)] = total;
      total += s.elements(r) * s.opAcc[r]->index.size();
    }
    element = IntVarArray(*this, static_cast<int>(total));
    for (int r = 0; r < 3; ++r) {
      const Access &a = *s.opAcc[r];
      for (size_t q = 0; q < s.elements(r); ++q)
        for (size_t t = 0; t < a.index.size(); ++t) {
          int64_t lo = a.index[t].constant, hi = lo;
          for (auto [o, c] : a.index[t].terms) {
            int64_t top = c * (static_cast<int64_t>(point[static_cast<int>(o)].max()));
            lo += std::min<int64_t>(0, top);
            hi += std::max<int64_t>(0, top);
          }
          Int::Limits::check(static_cast<long long int>(lo), "embedding");   // throws, not wraps
          Int::Limits::check(static_cast<long long int>(hi), "embedding");
          element[static_cast<int>(base[static_cast<size_t>(r)] + q * a.index.size() + t)] =
              IntVar(*this, static_cast<int>(lo), static_cast<int>(hi));
        }
    }
    auto elementVar = [&](int r, size_t q, size_t t) -> IntVar & {
      return element[static_cast<int>(base[static_cast<size_t>(r)] + q * s.opAcc[r]->index.size() + t)];
    };
    for (size_t n = 0; n < nP; ++n) {
      std::vector<int64_t> p = s.point(n);
      for (int r = 0; r < 3; ++r) {
        const Access &a = *s.opAcc[r];
        size_t q = s.element(r, p);
        for (size_t t = 0; t < a.index.size(); ++t) {
          IntArgs coefficients;
          IntVarArgs vars;
          for (auto [o, c] : a.index[t].terms) {
            coefficients << static_cast<int>(c);
            vars << point[static_cast<int>(n * nO + static_cast<size_t>(o))];
          }
          coefficients << -1;
          vars << elementVar(r, q, t);
          linear(*this, coefficients, vars, IRT_EQ, static_cast<int>(-a.index[t].constant));
        }
      }
    }

    // All-different (§4.2.1): distinct intrinsic nodes take distinct operator
    // nodes: the operations, the output elements and, in the strict model,
    // the input elements (the relaxed ones repeat a stencil's shared inputs,
    // which im2col then copies apart).
    std::vector<IntVarArgs> ops(nP);
    for (size_t n = 0; n < nP; ++n)
      for (size_t o = 0; o < nO; ++o)
        ops[n] << point[static_cast<int>(n * nO + o)];
    allDifferent(ops);
    for (int r = 0; r < 3; ++r) {
      if (r > 0 && model != EmbeddingModel::Strict)
        continue;
      std::vector<IntVarArgs> elems(s.elements(r));
      for (size_t q = 0; q < elems.size(); ++q)
        for (size_t t = 0; t < s.opAcc[r]->index.size(); ++t)
          elems[q] << elementVar(r, q, t);
      allDifferent(elems);
    }

    outputDim_.resize(nI);
    for (size_t d = 0; d < nI; ++d)
      outputDim_[d] = (s.inLabel[d] & 1u) != 0;
    nO_ = nO;
    outputsFirst_ = outputsFirst;
    if (asset >= 0)
      postBranching(asset);
  }

  EmbeddingSpace(EmbeddingSpace &other)
      : Space(other), outputDim_(other.outputDim_), nO_(other.nO_), outputsFirst_(other.outputsFirst_) {
    side.update(*this, other.side);
    origin.update(*this, other.origin);
    point.update(*this, other.point);
    element.update(*this, other.element);
  }
  Space *copy() override { return new EmbeddingSpace(*this); }

  /// A portfolio asset (§7, strategy A): the same model searched with the
  /// operator's dims in another order.
  bool slave(const MetaInfo &mi) override {
    if (mi.type() == MetaInfo::PORTFOLIO)
      postBranching(static_cast<int>(mi.asset()));
    return true;
  }

private:
  std::vector<bool> outputDim_;   // per intrinsic dim: indexes the output
  size_t nO_ = 0;
  bool outputsFirst_ = true;

  /// Branching from the outputs (§4.3): the sides of the dims the output is
  /// indexed by first, the largest side first (an unfused, unpadded
  /// rectangle), the operator's dims from dim `asset` on (asset search, §7
  /// A: each asset traverses the instance set in another order); the nodes
  /// are then assigned by propagation.
  void postBranching(int asset) {
    IntVarArgs outputs, reductions;
    for (size_t d = 0; d < outputDim_.size(); ++d)
      for (size_t k = 0; k < nO_; ++k) {
        size_t o = (k + static_cast<size_t>(asset)) % nO_;
        (outputDim_[d] ? outputs : reductions) << side[static_cast<int>(d * nO_ + o)];
      }
    IntVarArgs order = outputsFirst_ ? outputs + reductions : reductions + outputs;
    branch(*this, order, INT_VAR_NONE(), INT_VAL_MAX());
    branch(*this, point, INT_VAR_NONE(), INT_VAL_MIN());
    branch(*this, element, INT_VAR_NONE(), INT_VAL_MIN());
  }

  /// All-different over tuples: Gecode's distinct over one key per tuple
  /// when the mixed-radix keys fit an int, pairwise lexicographic
  /// disequality otherwise (a few tuples only).
  void allDifferent(const std::vector<IntVarArgs> &tuples) {
    if (tuples.size() < 2)
      return;
    const int width = tuples[0].size();
    std::vector<int> lo(static_cast<size_t>(width)), span(static_cast<size_t>(width));
    int64_t keys = 1;
    for (int t = 0; t < width; ++t) {
      int l = std::numeric_limits<int>::max(), h = std::numeric_limits<int>::min();
      for (const IntVarArgs &x : tuples)
        l = std::min(l, x[t].min()), h = std::max(h, x[t].max());
      lo[static_cast<size_t>(t)] = l;
      span[static_cast<size_t>(t)] = h - l + 1;
      keys *= span[static_cast<size_t>(t)];
      if (keys > (int64_t{1} << 30))
        break;
    }
    if (keys <= (int64_t{1} << 30)) {
      IntVarArgs key;
      for (const IntVarArgs &x : tuples) {
        IntArgs radix;
        int offset = 0, r = 1;
        IntVarArgs vars;
        for (int t = width; t-- > 0;) {
          if (span[static_cast<size_t>(t)] == 1)
            continue;
          radix << r;
          vars << x[t];
          offset += r * lo[static_cast<size_t>(t)];
          r *= span[static_cast<size_t>(t)];
        }
        IntVar k(*this, 0, static_cast<int>(keys - 1));
        radix << -1;
        vars << k;
        linear(*this, radix, vars, IRT_EQ, offset);
        key << k;
      }
      distinct(*this, key);
      return;
    }
    for (size_t a = 0; a < tuples.size(); ++a)
      for (size_t b = a + 1; b < tuples.size(); ++b)
        rel(*this, tuples[a], IRT_NQ, tuples[b]);
  }
};

/// One tensor's size after the layout changes an embedding implies: a
/// dimension indexed by one mapped dim is padded to whole tiles; one whose
/// index mixes dims of which one is mapped (stencil, stride) is unrolled into
/// one dimension per dim (im2col, image packing).
int64_t transformedSize(const LoopNest &op, const Access &a, const Embedding &e) {
  int64_t size = 1;
  for (size_t t = 0; t < a.index.size(); ++t) {
    const AffineExpr &x = a.index[t];
    int iterators = 0;
    bool mapped = false;
    for (auto [o, c] : x.terms)
      if (op.dims[static_cast<size_t>(o)].extent > 1 || e.sideOf(static_cast<size_t>(o)) > 1) {
        ++iterators;
        mapped |= e.sideOf(static_cast<size_t>(o)) > 1;
      }
    auto padded = [&](int o) {
      int64_t E = op.dims[static_cast<size_t>(o)].extent, S = e.sideOf(static_cast<size_t>(o));
      return ceilDiv(E, S) * S;
    };
    if (!mapped) {
      size *= a.extent[t];
    } else if (iterators == 1 && x.terms.size() == 1 && x.terms[0].second == 1) {
      size *= std::max(a.extent[t], padded(x.terms[0].first));
    } else {
      for (auto [o, c] : x.terms)
        size *= padded(o);
    }
  }
  return size;
}

void cost(const Setup &s, Embedding &e, const EmbeddingOptions &options) {
  e.macs = e.macsMin = 1;
  for (size_t o = 0; o < s.op.dims.size(); ++o) {
    const int64_t E = s.op.dims[o].extent, S = e.sideOf(o);
    e.macsMin *= E;
    e.macs *= ceilDiv(E, S) * S;
  }
  e.data = e.dataMin = 0;
  for (const Access *a : s.opAcc) {
    int64_t n = 1;
    for (int64_t x : a->extent)
      n *= x;
    e.dataMin += n;
    e.data += transformedSize(s.op, *a, e);
  }
  const double mac = options.macWeight * static_cast<double>(e.macs - e.macsMin);
  const double data = options.dataWeight * static_cast<double>(e.data - e.dataMin);
  e.overhead = std::sqrt(mac * mac + data * data);
}

std::string dimList(const LoopNest &n, const std::vector<int> &dims) {
  std::string out;
  for (int d : dims)
    out += (out.empty() ? "" : ", ") + n.dims[static_cast<size_t>(d)].name + " (" +
           std::to_string(n.dims[static_cast<size_t>(d)].extent) + ")";
  return out.empty() ? "none" : out;
}

const char *roleWord(unsigned label) {
  switch (label) {
  case 0: return "no tensor";
  case 1: return "out only";
  case 2: return "the lhs only";
  case 3: return "out and lhs";
  case 4: return "the rhs only";
  case 5: return "out and rhs";
  case 6: return "lhs and rhs";
  default: return "out, lhs and rhs";
  }
}

/// Why model `m` has no solution for this operand order: the first
/// intrinsic dim that no operator dim has the label of (§4.2.1), or whose
/// extent no product of allowed sides reaches (§4.2.2), or else the dims that
/// compete for the same operator dims (one use each).
std::string infeasibleReason(const Setup &s, EmbeddingModel m) {
  for (size_t d = 0; d < s.in.dims.size(); ++d) {
    const int64_t e = s.in.dims[d].extent;
    std::vector<int> same, allowed;
    for (size_t o = 0; o < s.op.dims.size(); ++o)
      if (s.opLabel[o] == s.inLabel[d]) {
        same.push_back(static_cast<int>(o));
        if (m != EmbeddingModel::Strict || !(s.stencil[o] || s.strided[o]))
          allowed.push_back(static_cast<int>(o));
      }
    if (same.empty() && e > 1) {
      std::string labels;
      for (size_t o = 0; o < s.op.dims.size(); ++o)
        labels += (labels.empty() ? "" : ", ") + s.op.dims[o].name + " indexes " + roleWord(s.opLabel[o]);
      return "dataflow edge: intrinsic dim " + s.in.dims[d].name + " (" + std::to_string(e) + ") indexes " +
             roleWord(s.inLabel[d]) + " and no operator dim does (" + labels + ")";
    }
    // The products the allowed sides reach (each side divides e, and E
    // unless padded).
    std::vector<bool> reach(static_cast<size_t>(e) + 1, false);
    reach[1] = true;
    for (int o : allowed) {
      std::vector<bool> next = reach;
      for (int64_t v = 2; v <= e; ++v)
        if (e % v == 0 && (m == EmbeddingModel::Padded || s.op.dims[static_cast<size_t>(o)].extent % v == 0))
          for (int64_t p = 1; p * v <= e; ++p)
            if (reach[static_cast<size_t>(p)])
              next[static_cast<size_t>(p * v)] = true;
      reach = next;
    }
    if (!reach[static_cast<size_t>(e)]) {
      std::string why = "hyper-rectangle: no sides over " + dimList(s.op, allowed) + " multiply to intrinsic dim " +
                        s.in.dims[d].name + " (" + std::to_string(e) + ")";
      if (allowed.size() < same.size()) {
        std::vector<int> excluded;
        for (int o : same)
          if (std::find(allowed.begin(), allowed.end(), o) == allowed.end())
            excluded.push_back(o);
        why += "; linear access and dense exclude " + dimList(s.op, excluded);
      }
      return why + (m == EmbeddingModel::Padded ? "" : " without padding");
    }
  }
  std::vector<int> dims;
  for (size_t d = 0; d < s.in.dims.size(); ++d)
    dims.push_back(static_cast<int>(d));
  return "all-different: intrinsic dims " + dimList(s.in, dims) + " cannot each take their own operator dims";
}

std::string unsupportedReason(const LoopNest &n, const char *what) {
  if (n.statement != Statement::Mac)
    return std::string(what) + " computes " + n.statementName() + ", not a multiply-accumulate";
  for (TensorRole r : {TensorRole::Ofm, TensorRole::Ifm, TensorRole::Wgt}) {
    auto acc = n.accessesOf(r);
    if (acc.size() != 1)
      return std::string(what) + " has " + std::to_string(acc.size()) + " " + roleName(r) + " accesses, not one";
    if (!acc[0]->guard.empty())
      return std::string(what) + " reads a concatenation (a guarded access)";
  }
  return "";
}

} // namespace

std::vector<int64_t> embeddedPoint(const LoopNest &op, const LoopNest &in, const Embedding &e,
                                   const std::vector<int64_t> &p) {
  std::vector<int64_t> x(op.dims.size(), 0);
  for (size_t d = 0; d < in.dims.size(); ++d) {
    int64_t rest = p[d];
    for (size_t o = op.dims.size(); o-- > 0;) {
      x[o] += rest % e.side[d][o];
      rest /= e.side[d][o];
    }
  }
  return x;
}

namespace {
int64_t flatIndex(const Access &a, const std::vector<int64_t> &x) {
  int64_t flat = 0;
  for (size_t t = 0; t < a.index.size(); ++t) {
    int64_t i = a.index[t].evaluate(x);
    if (i < 0 || i >= a.extent[t])
      return -1;
    flat = flat * a.extent[t] + i;
  }
  return flat;
}
} // namespace

std::vector<int64_t> runEmbedded(const LoopNest &op, const LoopNest &in, const Embedding &e,
                                 const std::vector<int64_t> &ifm, const std::vector<int64_t> &wgt) {
  Setup s(op, in, e.operandsSwapped);
  const std::vector<int64_t> *operand[3] = {nullptr, e.operandsSwapped ? &wgt : &ifm, e.operandsSwapped ? &ifm : &wgt};
  int64_t outSize = 1;
  for (int64_t x : s.opAcc[0]->extent)
    outSize *= x;
  std::vector<int64_t> ofm(static_cast<size_t>(outSize), 0);
  const size_t nO = op.dims.size();
  std::vector<int64_t> tiles(nO), sides(nO);
  int64_t tileCount = 1;
  for (size_t o = 0; o < nO; ++o) {
    sides[o] = e.sideOf(o);
    tiles[o] = ceilDiv(op.dims[o].extent, sides[o]);
    tileCount *= tiles[o];
  }
  std::vector<std::vector<int64_t>> offsets(s.points());
  for (size_t n = 0; n < s.points(); ++n)
    offsets[n] = embeddedPoint(op, in, e, s.point(n));
  for (int64_t t = 0; t < tileCount; ++t) {
    std::vector<int64_t> base(nO);
    for (size_t o = nO, rest = static_cast<size_t>(t); o-- > 0;) {
      base[o] = static_cast<int64_t>(rest % static_cast<size_t>(tiles[o])) * sides[o];
      rest /= static_cast<size_t>(tiles[o]);
    }
    // Pack the call's operands: element q of role r, gathered once.
    std::vector<std::vector<int64_t>> packed(3), outIndex(1);
    for (int r = 0; r < 3; ++r)
      packed[static_cast<size_t>(r)].assign(s.elements(r), std::numeric_limits<int64_t>::min());
    outIndex[0].assign(s.elements(0), -1);
    for (size_t n = 0; n < s.points(); ++n) {
      std::vector<int64_t> x(nO);
      for (size_t o = 0; o < nO; ++o)
        x[o] = base[o] + offsets[n][o];
      std::vector<int64_t> p = s.point(n);
      for (int r = 1; r < 3; ++r) {
        int64_t &v = packed[static_cast<size_t>(r)][s.element(r, p)];
        if (v == std::numeric_limits<int64_t>::min()) {
          int64_t i = flatIndex(*s.opAcc[r], x);
          v = i < 0 ? 0 : (*operand[r])[static_cast<size_t>(i)];
        }
      }
      int64_t &o = outIndex[0][s.element(0, p)];
      if (o == -1)
        o = flatIndex(*s.opAcc[0], x) + 1;   // 0: out of range, dropped
    }
    // The intrinsic's statement on the packed operands.
    std::vector<int64_t> acc(s.elements(0), 0);
    for (size_t n = 0; n < s.points(); ++n) {
      std::vector<int64_t> p = s.point(n);
      acc[s.element(0, p)] += packed[1][s.element(1, p)] * packed[2][s.element(2, p)];
    }
    for (size_t q = 0; q < acc.size(); ++q)
      if (outIndex[0][q] > 0)
        ofm[static_cast<size_t>(outIndex[0][q] - 1)] += acc[q];
  }
  return ofm;
}

namespace {
constexpr int64_t kMaxIntrinsicPoints = 65536;

/// The constraint model's size (variables + propagators) before it is built,
/// counted as EmbeddingSpace posts them (the largest of the operand orders):
/// the sides and their products, the mixed-radix digits, one coordinate and
/// one linear per operation and operator dim, one variable per element index
/// and one linear per operation and index, one key per all-different tuple.
int64_t modelSize(const LoopNest &op, const LoopNest &in) {
  int64_t most = 0;
  for (bool swapped : {false, true}) {
    Setup s(op, in, swapped);
    const int64_t nI = static_cast<int64_t>(in.dims.size()), nO = static_cast<int64_t>(op.dims.size());
    const int64_t nP = in.points();
    int64_t size = 4 * nI * nO + 2 * nO;
    for (const IterDim &d : in.dims)
      size += 5 * d.extent * nO;
    size += 2 * nP * nO;
    for (int r = 0; r < 3; ++r) {
      const auto idx = static_cast<int64_t>(s.opAcc[r]->index.size());
      const auto elements = static_cast<int64_t>(s.elements(r));
      size += elements * idx + nP * idx + 2 * elements;
    }
    size += 2 * nP;
    most = std::max(most, size);
  }
  return most;
}

void solveModels(const LoopNest &op, const LoopNest &in, const EmbeddingOptions &options, EmbeddingResult &result);
} // namespace

EmbeddingResult embedIntrinsic(const LoopNest &op, const LoopNest &in, const EmbeddingOptions &options) {
  EmbeddingResult result;
  for (auto [n, what] : {std::pair{&op, "the operator"}, {&in, "the intrinsic"}})
    if (std::string why = unsupportedReason(*n, what); !why.empty()) {
      result.status = EmbeddingResult::Status::Unsupported;
      result.reason = why;
      return result;
    }
  // One variable per intrinsic operation: a bounded intrinsic keeps the
  // model small whatever the operator's size.
  if (in.points() > kMaxIntrinsicPoints) {
    result.status = EmbeddingResult::Status::Unsupported;
    result.reason = "the intrinsic has " + std::to_string(in.points()) + " operations; the model takes at most " +
                    std::to_string(kMaxIntrinsicPoints);
    return result;
  }
  // The model's size bounds its memory (each copy the search keeps is about
  // that many Gecode objects): refused up front, with the numbers.
  result.modelSize = modelSize(op, in);
  if (result.modelSize > options.maxModelSize) {
    result.status = EmbeddingResult::Status::Unsupported;
    result.reason = "the constraint model would have " + std::to_string(result.modelSize) +
                    " variables and propagators (the intrinsic's " + std::to_string(in.points()) + " operations x " +
                    std::to_string(op.dims.size()) + " operator dims, and their elements); the embedding takes at most " +
                    std::to_string(options.maxModelSize) + " (docs/limits.md)";
    return result;
  }
  result.nodeLimit = std::min<uint64_t>(
      options.nodeLimit, std::max<uint64_t>(1, options.workLimit / static_cast<uint64_t>(std::max<int64_t>(1, result.modelSize))));
  const auto start = std::chrono::steady_clock::now();
  try {
    solveModels(op, in, options, result);
  } catch (const Gecode::Int::OutOfLimits &e) {
    // An index constant beyond Gecode's integer range (|v| < 2^30).
    result.candidates.clear();
    result.status = EmbeddingResult::Status::Unsupported;
    result.reason = std::string("the operator's indices exceed the solver's integer range (") + e.what() + ")";
    return result;
  }
  result.stats.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::stable_sort(result.candidates.begin(), result.candidates.end(),
                   [](const Embedding &a, const Embedding &b) { return a.overhead < b.overhead; });
  if (!result.candidates.empty())
    result.status = EmbeddingResult::Status::Found;
  else if (result.hitLimit)
    result.status = EmbeddingResult::Status::Limit;
  else {
    result.status = EmbeddingResult::Status::Infeasible;
    result.reason = "lhs on ifm: " + infeasibleReason(Setup(op, in, false), options.lastModel) +
                    "; lhs on wgt: " + infeasibleReason(Setup(op, in, true), options.lastModel);
  }
  return result;
}

namespace {

void solveModels(const LoopNest &op, const LoopNest &in, const EmbeddingOptions &options, EmbeddingResult &result) {
  for (EmbeddingModel model : {EmbeddingModel::Strict, EmbeddingModel::Relaxed, EmbeddingModel::Padded}) {
    if (model > options.lastModel)
      break;
    for (bool swapped : {false, true}) {
      Setup s(op, in, swapped);
      const bool portfolio = options.portfolioAssets > 0;
      auto *root = new EmbeddingSpace(s, model, options.outputsFirst, portfolio ? -1 : 0);
      Search::Options so;
      std::optional<WorkLimitStop::Clock::time_point> deadline;
      if (options.timeLimit)
        deadline = WorkLimitStop::Clock::now() + *options.timeLimit;
      WorkLimitStop stop(result.nodeLimit, options.failureLimit, deadline);
      so.stop = &stop;
      so.clone = false;   // the engine owns the root
      so.threads = 1;     // assets take turns (slices of failures) on one thread
      so.assets = portfolio ? options.portfolioAssets : 1;
      std::unique_ptr<Search::Base<EmbeddingSpace>> engine;
      if (portfolio)
        engine = std::make_unique<PBS<EmbeddingSpace, DFS>>(root, so);
      else
        engine = std::make_unique<DFS<EmbeddingSpace>>(root, so);
      const size_t limit = portfolio ? 1 : options.solutionLimit;
      size_t found = 0;
      while (EmbeddingSpace *sol = engine->next()) {
        Embedding e;
        e.model = model;
        e.operandsSwapped = swapped;
        e.side.assign(in.dims.size(), std::vector<int64_t>(op.dims.size()));
        for (size_t d = 0; d < in.dims.size(); ++d)
          for (size_t o = 0; o < op.dims.size(); ++o)
            e.side[d][o] = sol->side[static_cast<int>(d * op.dims.size() + o)].val();
        cost(s, e, options);
        result.candidates.push_back(std::move(e));
        delete sol;
        if (++found >= limit) {
          result.solutionLimitHit = !portfolio;
          break;
        }
      }
      Search::Statistics st = engine->statistics();
      result.stats.nodes += st.node;
      result.stats.failures += st.fail;
      result.stats.solutions += found;
      result.hitLimit |= engine->stopped();
      result.timeLimitHit |= stop.timedOut();
    }
    if (!result.candidates.empty())
      break;
  }
}

} // namespace

} // namespace dfl
