// A loop nest: one statement over a box of named iteration dimensions, with an
// affine access function for every tensor it reads or writes — the polyhedral
// form of a layer (or an intrinsic's compute statement) that the isl, Gecode
// and LLVM stages read (docs/design.md, "The model and its loop nests").
//
// Before: nothing (a nest is built by sema, by the training transform or by
// hand). After: every access has one index expression per tensor dimension,
// every expression refers to dimensions of the nest, and the KAPLA
// nine-dimension view (kaplaBounds) and the isl text (toIslSet, toIslMap) are
// functions of the nest alone.
#pragma once

#include "model/Dims.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dfl {

// ---- affine expressions -----------------------------------------------------

/// Σ coefficient·dimension + constant over a nest's iteration dimensions
/// (dimensions by index). Terms are sorted by dimension, without zeros.
struct AffineExpr {
  std::vector<std::pair<int, int64_t>> terms;
  int64_t constant = 0;

  AffineExpr() = default;
  AffineExpr(int64_t c) : constant(c) {}   // NOLINT: a constant is an expression
  static AffineExpr dim(int index);

  int64_t coefficient(int index) const;
  /// The value at a point (one value per dimension of the nest).
  int64_t evaluate(const std::vector<int64_t> &point) const;

  friend AffineExpr operator+(AffineExpr a, const AffineExpr &b);
  friend AffineExpr operator-(AffineExpr a, const AffineExpr &b);
  friend AffineExpr operator*(AffineExpr a, int64_t k);
  friend AffineExpr operator*(int64_t k, AffineExpr a) { return std::move(a) * k; }
  friend bool operator==(const AffineExpr &, const AffineExpr &) = default;
};

// ---- the nest ---------------------------------------------------------------

/// An iteration dimension: `name` ranges over 0 <= name < extent. `kapla` lists
/// the KAPLA dims it folds into (empty for an intrinsic's dims; two for a
/// channel-wise layer's channel, which is both C and K).
struct IterDim {
  std::string name;
  int64_t extent = 1;
  std::vector<Dim> kapla;
};

/// One tensor access. `index` has one expression per tensor dimension and
/// `extent` the tensor's shape: an index outside [0, extent) reads the padding
/// value (0; −∞ for max) and a write there is dropped. The access is made only
/// at the points where every `guard` expression is >= 0 (one operand of a
/// channel-wise concatenation: the channels it supplies).
struct Access {
  TensorRole role = TensorRole::Ifm;   // the name schedules give it
  std::string tensor;                  // an identifier: the isl tuple name
  std::vector<AffineExpr> index;
  std::vector<int64_t> extent;
  std::vector<AffineExpr> guard;
};

/// The element-wise unary functions, one layer kind and one statement
/// (docs/design.md, "Element-wise unary layers"): a new one is an entry here
/// and in unaryFunctions(), and its integer form in the reference and the kernels.
enum class UnaryFn { Gelu, Silu, Sigmoid };
struct UnaryFnSpec {
  UnaryFn fn;
  const char *name;      // the DFL operator, the layer's kind in reports
  int64_t opsPerPoint;   // the float formula's operations (docs/directives.md §7)
};
/// Every unary function, in UnaryFn's order.
const std::vector<UnaryFnSpec> &unaryFunctions();
const UnaryFnSpec &unarySpec(UnaryFn f);

/// What the statement computes at every point of the domain; the output
/// accesses accumulate over the dimensions they are not indexed by.
enum class Statement {
  Mac,       // out += in · wgt (conv, fc, matmul; an intrinsic)
  Max,       // out = max(out, in) over the window
  Average,   // out += in / (R·S)
  Add,       // out = Σ operands
  Mul,       // out = Π operands
  Copy,      // out = in (concat)
  Unary,     // out = f(in), f the nest's UnaryFn
  Softmax,   // out = in, then each row normalized: exp(in − max) / Σ exp
  LayerNorm, // out = in, then each row normalized: (in − mean) / σ
  RmsNorm,   // out = in, then each row normalized: in / rms
  Rope,      // out = in·cos θ ∓ partner·sin θ (rotary position embedding; two ifm accesses)
  Bilinear,  // out += in·wx·wy / (4·sx·sy), the tap's weights from its phase (bilinear upsample)
};

/// rope's integer form (docs/simulator.md), shared by the reference and the
/// kernels: a rotation by a multiple a of 45°, a = ((t + pos) >> min(j, 62))
/// mod 8 (the frequency halving per pair j, as base^(−2j/d) falls), with
/// cos and sin scaled by 16 and rounded (11 for √2/2·16).
constexpr int32_t kRopeCos16[8] = {16, 11, 0, -11, -16, -11, 0, 11};
inline int64_t ropeAngle(int64_t position, int64_t pair) { return (position >> (pair < 62 ? pair : 62)) & 7; }
inline int32_t ropeCos16(int64_t a) { return kRopeCos16[a & 7]; }
inline int32_t ropeSin16(int64_t a) { return kRopeCos16[(a + 6) & 7]; }   // sin θ = cos(θ − 90°)
/// bilinear upsample's integer form (docs/simulator.md), as the nest and the
/// kernels have it: output o = s·q + p of an axis scaled by s reads input
/// q − 1 + u at taps u ∈ {b, b + 1}, b = 1 if 2p + 1 >= s (the half-pixel
/// source (o + ½)/s − ½ at or past q) else 0; the tap b + 1's weight is
/// 2p + 1 + s − 2s·b and tap b's 2s minus it, in units of 1/(2s): PyTorch's
/// align_corners=False weights, exact. A tap past the input's edge weighs 0
/// and the other 2s (PyTorch clamps the source to the edge).
inline int64_t bilinearBase(int64_t p, int64_t s) { return 2 * p + 1 >= s ? 1 : 0; }
inline int64_t bilinearWeight(int64_t p, int64_t s, int64_t u) {
  const int64_t b = bilinearBase(p, s), far = 2 * p + 1 + s - 2 * s * b;
  return u == b + 1 ? far : u == b ? 2 * s - far : 0;
}
const char *statementName(Statement s);   // "unary" for Unary: LoopNest::statementName names f

struct LoopNest {
  std::string name;   // the statement's isl tuple name (the layer's name)
  Statement statement = Statement::Mac;
  UnaryFn unary = UnaryFn::Gelu;   // statement Unary: the function
  std::vector<IterDim> dims;
  std::vector<Access> accesses;
  /// The domain's guard: the statement runs only at the points of the box
  /// where every expression is >= 0 (a causal mask's triangle, j <= x +
  /// offset; docs/design.md, "Causal attention"). Empty: the whole box.
  std::vector<AffineExpr> guard;
  /// The role written: ofm forward; ifm or wgt for training's backward layers
  /// (the same domain and accesses, another output). The other roles are read.
  TensorRole output = TensorRole::Ofm;

  /// The statement's name: the unary function's for Unary.
  const char *statementName() const;
  /// Appends a dimension and returns it as an expression.
  AffineExpr addDim(std::string dimName, int64_t extent, std::vector<Dim> kapla = {});
  int findDim(const std::string &dimName) const;   // -1 if absent
  /// The accesses of role r, in order (several operands: several accesses).
  std::vector<const Access *> accessesOf(TensorRole r) const;
  /// The number of points of the domain (statement instances), the guard's
  /// exactly: a sum over the guarded dims but one, the last solved per guard.
  int64_t points() const;
  /// Whether a point (one value per dim, inside the box) satisfies the guard.
  bool inDomain(const std::vector<int64_t> &point) const;
  /// The dimensions no output access is indexed by: those the statement reduces over.
  std::vector<int> reductionDims() const;

  /// isl text of the domain: `{ S[n, k] : 0 <= n < 2 and 0 <= k < 16 }`, and the guard.
  std::string toIslSet() const;
  /// isl text of one access relation, without the domain's bounds (intersect
  /// it with toIslSet()) and with the guard: `{ S[n, c] -> b[n, c - 3] : c - 3 >= 0 }`.
  std::string toIslMap(const Access &a) const;
  /// isl text of the tensor's valid indices: `{ b[i0, i1] : 0 <= i0 < 2 and 0 <= i1 < 5 }`.
  static std::string toIslTensorSet(const Access &a);
  /// An expression printed over this nest's dimension names: `2*xo + r - 1`.
  std::string exprText(const AffineExpr &e) const;
  /// The statement as one line, outputs first: `ofm c1[n, k] <- mac(ifm x[n, c], wgt c1__wgt[k, c])`.
  std::string text() const;
};

// ---- the KAPLA nine-dimension view ------------------------------------------

/// One axis of a windowed layer (docs/language.md): output o and filter tap t
/// read the input at o·stride + t·dilation − padBegin; padEnd is the padding
/// declared past the input's end (ONNX's begin and end pads).
struct WindowAxis {
  int64_t stride = 1, dilation = 1, padBegin = 0, padEnd = 0;
  friend bool operator==(const WindowAxis &, const WindowAxis &) = default;
};

/// A layer's window geometry per axis: x along the width (Xo, R, Xi), y along
/// the height (Yo, S, Yi). The default is the identity: stride, dilation 1, no padding.
struct Window {
  WindowAxis x, y;
  /// The axis dim d runs along: x for Xi, Xo and R, y for Yi, Yo and S.
  const WindowAxis &along(Dim d) const { return alongWidth(d) ? x : y; }
  /// Whether any side is padded.
  bool padded() const { return x.padBegin > 0 || x.padEnd > 0 || y.padBegin > 0 || y.padEnd > 0; }
  friend bool operator==(const Window &, const Window &) = default;
};

/// A layer nest seen in KAPLA's nine dims (§III-B): each dim's bound is the
/// product of the extents of the iteration dims that fold into it (1 if none);
/// Xi and Yi, which no iteration dim is (the input window is derived), are the
/// first ifm access's width and height extents. The window's stride, dilation
/// and begin padding per axis are the coefficients of the Xo- and R-dims (Yo-
/// and S-dims) and the negated constant in that access's width (height) index
/// (1, 1, 0 when it has none); its end padding is what the window reaches past
/// the input's end (0 if nothing).
struct KaplaView {
  DimVector bounds{};
  Window window;
  bool channelWise = false;   // one iteration dim is both C and K
};
KaplaView kaplaView(const LoopNest &nest);

/// The input extent a window of `outputs` outputs at `stride` with `taps`
/// filter taps at `dilation` spans: (outputs−1)·stride + (taps−1)·dilation + 1,
/// the span of the index stride·xo + dilation·r over xo < outputs, r < taps.
/// The one window formula: tiles, bounds and moves all use it.
inline int64_t windowSpan(int64_t outputs, int64_t taps, int64_t stride, int64_t dilation) {
  return (outputs - 1) * stride + (taps - 1) * dilation + 1;
}
inline int64_t windowSpan(int64_t outputs, int64_t taps, const WindowAxis &a) {
  return windowSpan(outputs, taps, a.stride, a.dilation);
}

/// The inverse: the taps whose window of `outputs` outputs spans exactly
/// `span`, or 0 if none does.
int64_t windowTaps(int64_t span, int64_t outputs, int64_t stride, int64_t dilation);

/// How an iteration dim of a nest is recovered from the canonical KAPLA
/// coordinate it folds into (its first KAPLA dim; K is C in a channel-wise
/// layer): (coordinate / divisor) mod extent, the first-added dim of a
/// coordinate the most significant. The kernels' plans, the dependences and
/// the segment latency model (scheduler/analysis/SegmentLatency.h) read steps through it.
struct IterDimFold {
  Dim from = Dim::N;
  int64_t divisor = 1, extent = 1;
};

/// The fold of every iteration dim of `nest`; false and `why` if one folds
/// into no KAPLA dim (an intrinsic's nest).
bool foldIterDims(const LoopNest &nest, bool channelWise, std::vector<IterDimFold> &out, std::string &why);

/// A tile's derived input extents: Xi and Yi of `e` from its Xo, R and Yo, S,
/// each along its own axis of `w`.
void deriveInputExtents(DimVector &e, const Window &w);

} // namespace dfl
