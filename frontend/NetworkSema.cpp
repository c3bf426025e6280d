// Network analysis: names, operators, parameters and layer shape inference
// (docs/language.md, "Operators and shape formulas").
#include "frontend/SemaContext.h"
#include "support/IntMath.h"

#include <array>
#include <algorithm>
#include <optional>
#include <map>
#include <set>
#include <tuple>

namespace dfl::sema {
namespace {

// Axes: `N` or `X x Y` (stride, dilation; positive); Pad: that or
// `X x Y, X x Y` (begin, end; non-negative); Axis: one of C, X, Y; Word:
// one of `words`.
enum class ParamKind { Int, Bool, Axes, Pad, Axis, Word, Index /* an integer >= 0 */ };
struct ParamSpec {
  const char *name;
  ParamKind kind;
  bool required;
  std::vector<std::string> words = {};   // Word: the values it takes
};
struct OpSpec {
  const char *name;
  LayerType type;
  int minOperands, maxOperands;   // maxOperands < 0: unbounded
  std::vector<ParamSpec> params;
  UnaryFn unary = UnaryFn::Gelu;   // LayerType::Unary: the function
  bool rms = false;                // LayerType::LayerNorm: rmsnorm
  bool plane = false;              // LayerType::LayerNorm: groupnorm
};

const std::vector<OpSpec> &opSpecs() {
  static const std::vector<ParamSpec> window = {
      {"R", ParamKind::Int, true}, {"S", ParamKind::Int, false}, {"stride", ParamKind::Axes, false},
      {"pad", ParamKind::Pad, false}, {"dilation", ParamKind::Axes, false}};
  static const std::vector<ParamSpec> pool = {
      {"R", ParamKind::Int, true}, {"S", ParamKind::Int, false}, {"stride", ParamKind::Axes, false},
      {"pad", ParamKind::Pad, false}, {"ceil", ParamKind::Bool, false}};
  static const std::vector<OpSpec> specs = [] {
    std::vector<ParamSpec> conv = window;
    conv.insert(conv.begin(), {"K", ParamKind::Int, true});
    conv.push_back({"groups", ParamKind::Int, false});
    // conv_transpose: conv's spelling without dilation; output_padding (x
    // and y, each below the stride) lengthens the output's end, as PyTorch's.
    std::vector<ParamSpec> convTranspose = conv;
    convTranspose.erase(std::find_if(convTranspose.begin(), convTranspose.end(),
                                     [](const ParamSpec &p) { return std::string(p.name) == "dilation"; }));
    convTranspose.push_back({"output_padding", ParamKind::Pad, false});
    std::vector<OpSpec> specs{
        {"conv", LayerType::Conv, 1, -1, conv},
        {"conv_transpose", LayerType::ConvTranspose, 1, 1, convTranspose},
        {"dwconv", LayerType::DwConv, 1, 1, window},
        {"fc", LayerType::FC, 1, -1, {{"K", ParamKind::Int, true}}},
        {"matmul", LayerType::MatMul, 2, -1,
         {{"heads", ParamKind::Int, false},
          {"kv_heads", ParamKind::Int, false},
          {"transpose_b", ParamKind::Bool, false},
          {"causal", ParamKind::Bool, false}}},
        {"maxpool", LayerType::MaxPool, 1, 1, pool},
        {"avgpool", LayerType::AvgPool, 1, 1, pool},
        {"add", LayerType::Add, 2, -1, {}},
        {"mul", LayerType::Mul, 2, -1, {}},
        {"concat", LayerType::Concat, 2, -1, {{"axis", ParamKind::Axis, false}}},
        {"softmax", LayerType::Softmax, 1, 1, {{"axis", ParamKind::Axis, false}, {"groups", ParamKind::Int, false}, {"causal", ParamKind::Bool, false}}},
        {"layernorm", LayerType::LayerNorm, 1, 1, {{"groups", ParamKind::Int, false}}},
        {"rmsnorm", LayerType::LayerNorm, 1, 1, {{"groups", ParamKind::Int, false}}, UnaryFn::Gelu, true},
        {"groupnorm", LayerType::LayerNorm, 1, 1, {{"groups", ParamKind::Int, false}}, UnaryFn::Gelu, false, true},
        {"upsample", LayerType::Upsample, 1, 1,
         {{"scale", ParamKind::Axes, false}, {"mode", ParamKind::Word, false, {"nearest", "bilinear"}}}},
        {"depth_to_space", LayerType::DepthToSpace, 1, 1,
         {{"block", ParamKind::Int, false}, {"mode", ParamKind::Word, false, {"DCR", "CRD"}}}},
        {"rope", LayerType::Rope, 1, 1, {{"heads", ParamKind::Int, false}, {"pos", ParamKind::Index, false}}},
    };
    for (const UnaryFnSpec &f : unaryFunctions())
      specs.push_back({f.name, LayerType::Unary, 1, 1, {}, f.fn});
    return specs;
  }();
  return specs;
}

std::vector<std::string> allOpNames() {
  std::vector<std::string> names;
  for (const OpSpec &s : opSpecs())
    names.push_back(s.name);
  for (const std::string &a : activationNames())
    if (std::find(names.begin(), names.end(), a) == names.end())   // sigmoid is both
      names.push_back(a);
  return names;
}

std::string shapeText(const TensorShape &s) {
  return "[C=" + std::to_string(s.C) + ", X=" + std::to_string(s.X) + ", Y=" + std::to_string(s.Y) + "]";
}

// A layer's counts for the whole batch (MACs, operations, words of a tensor)
// stay at or below 2^53: exact in a double, with room for the products later
// stages form. Shapes are built from integers below 2^31, so an unchecked
// product of a few of them overflows (undefined behaviour).
constexpr int64_t kMaxCount = int64_t(1) << 53;

struct Factor {
  const char *dim;
  int64_t value;
};


/// A layer's filter window (1 x 1 for the operators without one).
struct Filter {
  int64_t R = 1, S = 1;
};

/// A window attribute's values as written, per axis: x begin, y begin, x end,
/// y end (stride and dilation: the ends repeat the begins).
using AxisValues = std::array<int64_t, 4>;

/// The loop nest of a checked layer (docs/design.md, "The model and its loop
/// nests"): its iteration dims, tagged with the KAPLA dims they fold into, and
/// the access of every operand, the weights and the output, so that
/// kaplaView(nest).bounds are the layer's nine-dim bounds. The windowed
/// operators read ifm[n][c][xo·strideX + r·dilationX − padLeft][yo·strideY + s·dilationY − padTop].
/// Over 150 lines on purpose: one case per layer kind, each that kind's
/// nest as docs/design.md states it, read side by side; the helpers above
/// the switch close over the nest being built, and split per kind they
/// would be passed to every case for nothing.
LoopNest layerNest(const Network &net, const Layer &l, Filter w) {
  LoopNest nest;
  nest.name = l.name;
  const int64_t batch = net.batch;
  auto tensorOf = [&](TensorRef r) {
    return r.isInput ? std::pair(net.inputs[r.index].name, net.inputs[r.index].shape)
                     : std::pair(net.layers[r.index].name, net.layers[r.index].ofmShape);
  };
  auto activation = [&](const TensorShape &s) { return std::vector<int64_t>{batch, s.C, s.X, s.Y}; };
  // The operands concatenated along the layer's concat axis (tensor index j:
  // C, X or Y): operand i supplies indices [offset, offset + extent_i) of it.
  auto readConcatenated = [&](AffineExpr n, const AffineExpr &channel, AffineExpr x, AffineExpr y) {
    const size_t j = l.concatAxis == Dim::Xo ? 2 : l.concatAxis == Dim::Yo ? 3 : 1;
    int64_t offset = 0;
    for (TensorRef op : l.operands) {
      auto [name, shape] = tensorOf(op);
      Access a{TensorRole::Ifm, name, {n, channel, x, y}, activation(shape), {}};
      const AffineExpr joined = a.index[j];
      a.index[j] = joined - offset;
      if (l.operands.size() > 1)
        a.guard = {joined - offset, offset + a.extent[j] - 1 - joined};
      offset += a.extent[j];
      nest.accesses.push_back(std::move(a));
    }
  };
  auto weights = [&](std::vector<AffineExpr> index, std::vector<int64_t> extent) {
    nest.accesses.push_back({TensorRole::Wgt, l.name + "__wgt", std::move(index), std::move(extent), {}});
  };
  auto write = [&](std::vector<AffineExpr> index) {
    nest.accesses.push_back({TensorRole::Ofm, l.name, std::move(index), activation(l.ofmShape), {}});
  };
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  // The output plane and, for the windowed operators, the filter window: the
  // input is read at column x = xo·strideX + r·dilationX − padLeft, row y
  // likewise along the y axis (docs/language.md).
  struct Plane {
    AffineExpr xo, yo, r, s, x, y;
  };
  auto plane = [&](bool windowed) {
    Plane p;
    p.xo = nest.addDim("xo", out.X, {Dim::Xo});
    p.yo = nest.addDim("yo", out.Y, {Dim::Yo});
    if (windowed) {
      p.r = nest.addDim("r", w.R, {Dim::R});
      p.s = nest.addDim("s", w.S, {Dim::S});
    }
    const WindowAxis &ax = l.window.x, &ay = l.window.y;
    p.x = p.xo * ax.stride + p.r * ax.dilation - ax.padBegin;
    p.y = p.yo * ay.stride + p.s * ay.dilation - ay.padBegin;
    return p;
  };
  AffineExpr n = nest.addDim("n", batch, {Dim::N});
  switch (l.type) {
  case LayerType::Conv: {
    // Group g reads channels [g·C/G, (g+1)·C/G) and writes [g·K/G, (g+1)·K/G).
    const int64_t G = l.groups, Cg = in.C / G, Kg = out.C / G;
    AffineExpr g = G > 1 ? nest.addDim("g", G, {Dim::K}) : AffineExpr(0);
    AffineExpr k = nest.addDim("k", Kg, {Dim::K}), c = nest.addDim("c", Cg, {Dim::C});
    Plane p = plane(true);
    readConcatenated(n, g * Cg + c, p.x, p.y);
    weights({g * Kg + k, c, p.r, p.s}, {out.C, Cg, w.R, w.S});
    write({n, g * Kg + k, p.xo, p.yo});
    break;
  }
  case LayerType::ConvTranspose: {
    // The scatter y[k][xi·s − pad + r] += x[c][xi]·w[c][k][r] is the data
    // gradient of the conv from y to x (docs/design.md, "ConvTranspose"): a
    // conv's nest whose ofm is the input x and whose ifm, written, is y.
    // Group g reads x's channels [g·Cin/G, ...) and writes y's [g·Cout/G, ...);
    // the weights are PyTorch's [Cin, Cout/G, R, S], the conv's [K, C/G, R, S].
    const int64_t G = l.groups, Kg = in.C / G, Cg = out.C / G;
    AffineExpr g = G > 1 ? nest.addDim("g", G, {Dim::K}) : AffineExpr(0);
    AffineExpr ci = nest.addDim("ci", Kg, {Dim::K}), co = nest.addDim("co", Cg, {Dim::C});
    AffineExpr xi = nest.addDim("xi", in.X, {Dim::Xo}), yi = nest.addDim("yi", in.Y, {Dim::Yo});
    AffineExpr r = nest.addDim("r", w.R, {Dim::R}), s = nest.addDim("s", w.S, {Dim::S});
    const WindowAxis &ax = l.window.x, &ay = l.window.y;
    nest.accesses.push_back({TensorRole::Ifm, l.name,
                             {n, g * Cg + co, xi * ax.stride + r - ax.padBegin, yi * ay.stride + s - ay.padBegin},
                             activation(out), {}});
    weights({g * Kg + ci, co, r, s}, {in.C, Cg, w.R, w.S});
    nest.accesses.push_back(
        {TensorRole::Ofm, tensorOf(l.operands[0]).first, {n, g * Kg + ci, xi, yi}, activation(in), {}});
    nest.output = TensorRole::Ifm;
    break;
  }
  case LayerType::DwConv:
  case LayerType::MaxPool:
  case LayerType::AvgPool: {
    // One channel dim, both C and K (KAPLA §III-B).
    AffineExpr c = nest.addDim("c", in.C, {Dim::C, Dim::K});
    Plane p = plane(true);
    readConcatenated(n, c, p.x, p.y);
    if (l.type == LayerType::DwConv)
      weights({c, p.r, p.s}, {in.C, w.R, w.S});
    nest.statement = l.type == LayerType::DwConv    ? Statement::Mac
                     : l.type == LayerType::MaxPool ? Statement::Max
                                                    : Statement::Average;
    write({n, c, p.xo, p.yo});
    break;
  }
  case LayerType::FC: {
    // A convolution whose R x S filter is the whole (flattened) input.
    AffineExpr k = nest.addDim("k", out.C, {Dim::K}), c = nest.addDim("c", in.C, {Dim::C});
    AffineExpr r = nest.addDim("r", w.R, {Dim::R}), s = nest.addDim("s", w.S, {Dim::S});
    readConcatenated(n, c, r, s);
    weights({k, c, r, s}, {out.C, in.C, w.R, w.S});
    write({n, k, 0, 0});
    break;
  }
  case LayerType::MatMul: {
    // b's positions (bx, by) flatten row-major: j = bx·Yb + by, Lb = Xb·Yb;
    // several second operands are b joined along X (b_i's columns from off_i).
    TensorShape b = tensorOf(l.operands[1]).second;
    b.X = 0;
    for (size_t i = 1; i < l.operands.size(); ++i)
      b.X += tensorOf(l.operands[i]).second.X;
    const int64_t H = l.groups, Hkv = l.kvHeads, G = H / Hkv, Lb = b.X * b.Y;
    // Every tensor is indexed by the head, as by the sample: in KAPLA's view
    // heads are batch (N = batch·heads), not output channels (K), or the
    // operands would count one head's words (docs/language.md). Grouped-query
    // attention splits query head h = g·G + m into its K/V head g (N) and its
    // member m of the group, which b is not indexed by: m takes the place of
    // the (extent-1) output row, Yo, so a K/V tile is reused across a group's
    // query heads as a conv's weights are across rows.
    AffineExpr g = Hkv > 1 ? nest.addDim(G > 1 ? "g" : "h", Hkv, {Dim::N}) : AffineExpr(0);
    AffineExpr m = G > 1 ? nest.addDim("m", G, {Dim::Yo}) : AffineExpr(0);
    AffineExpr h = g * G + m;
    AffineExpr channel, bChannel, outChannel, bx, by;
    if (!l.transposeB) {   // out[h·Lb + j] = Σ_c a[h·C/H + c] · b[g·C/H + c][j]
      bx = nest.addDim("kx", b.X, {Dim::K});
      by = nest.addDim("ky", b.Y, {Dim::K});
      AffineExpr c = nest.addDim("c", in.C / H, {Dim::C});
      channel = h * (in.C / H) + c;
      bChannel = g * (in.C / H) + c;
      outChannel = h * Lb + bx * b.Y + by;
    } else {   // out[h·Cb/Hkv + k] = Σ_j a[h·Lb + j] · b[g·Cb/Hkv + k][j]
      AffineExpr k = nest.addDim("k", b.C / Hkv, {Dim::K});
      bx = nest.addDim("cx", b.X, {Dim::C});
      by = nest.addDim("cy", b.Y, {Dim::C});
      channel = h * Lb + bx * b.Y + by;
      bChannel = g * (b.C / Hkv) + k;
      outChannel = h * (b.C / Hkv) + k;
    }
    Plane p;   // the output plane; with groups the row is the member (in.Y = 1)
    p.xo = p.x = nest.addDim("xo", out.X, {Dim::Xo});
    p.yo = p.y = G > 1 ? AffineExpr(0) : nest.addDim("yo", out.Y, {Dim::Yo});
    nest.accesses.push_back(
        {TensorRole::Ifm, tensorOf(l.operands[0]).first, {n, channel, p.x, p.y}, activation(in), {}});
    int64_t offset = 0;
    for (size_t i = 1; i < l.operands.size(); ++i) {
      auto [bName, bi] = tensorOf(l.operands[i]);
      Access a{TensorRole::Wgt, bName, {n, bChannel, bx - offset, by}, activation(bi), {}};
      if (l.operands.size() > 2)
        a.guard = {bx - offset, offset + bi.X - 1 - bx};
      nest.accesses.push_back(std::move(a));
      offset += bi.X;
    }
    write({n, outChannel, p.xo, p.yo});
    // Causal: query x sees keys j = bx <= x + offset (Y = Yb = 1, checked).
    if (l.causal)
      nest.guard = {p.xo + l.causalOffset() - bx};
    break;
  }
  case LayerType::Add:
  case LayerType::Mul:
  case LayerType::Concat:
  case LayerType::Softmax:
  case LayerType::LayerNorm:
  case LayerType::Unary: {
    // Element by element; softmax and layernorm then normalize each row of
    // the output (Layer::rowLength), which the schedule keeps whole in one
    // buffer (docs/directives.md §7): the nest is the pass over the elements.
    // A causal softmax's channel is a group's key j: c = g·Lb + j, two dims,
    // so that its guard j <= xo + offset is affine.
    const int64_t keys = out.C / l.normGroups;
    AffineExpr g = l.causal && l.normGroups > 1 ? nest.addDim("g", l.normGroups, {Dim::C, Dim::K}) : AffineExpr(0);
    AffineExpr j = l.causal ? nest.addDim("j", keys, {Dim::C, Dim::K}) : AffineExpr(0);
    AffineExpr c = l.causal ? g * keys + j : nest.addDim("c", out.C, {Dim::C, Dim::K});
    Plane p = plane(false);
    if (l.causal)
      nest.guard = {p.xo + l.causalOffset() - j};
    if (l.type != LayerType::Add && l.type != LayerType::Mul) {
      readConcatenated(n, c, p.x, p.y);
      nest.statement = l.type == LayerType::Softmax     ? Statement::Softmax
                       : l.type == LayerType::LayerNorm ? (l.rms ? Statement::RmsNorm : Statement::LayerNorm)
                       : l.type == LayerType::Unary     ? Statement::Unary
                                                        : Statement::Copy;
      nest.unary = l.unary;
    } else {
      for (TensorRef op : l.ifmOperands())
        nest.accesses.push_back({TensorRole::Ifm, tensorOf(op).first, {n, c, p.x, p.y}, activation(in), {}});
      // The broadcast operand: indexed by the sample and the channel alone,
      // so each of its words is reused across X and Y.
      if (l.broadcast >= 0) {
        auto [name, shape] = tensorOf(l.operands[static_cast<size_t>(l.broadcast)]);
        nest.accesses.push_back({TensorRole::Wgt, name, {n, c, 0, 0}, activation(shape), {}});
      }
      nest.statement = l.type == LayerType::Add ? Statement::Add : Statement::Mul;
    }
    write({n, c, p.xo, p.yo});
    break;
  }
  case LayerType::Rope: {
    // Channel c = i·d + half·d/2 + j: the point reads x at c and at its
    // partner i·d + (1 − half)·d/2 + j, two ifm accesses of one tensor as
    // add's two operands; the dims fold into the one channel dim (C and K).
    const int64_t d = out.C / l.groups, h2 = d / 2;
    AffineExpr i = nest.addDim("i", l.groups, {Dim::C, Dim::K});
    AffineExpr half = nest.addDim("half", 2, {Dim::C, Dim::K});
    AffineExpr j = nest.addDim("j", h2, {Dim::C, Dim::K});
    Plane p = plane(false);
    const std::string x = tensorOf(l.operands[0]).first;
    AffineExpr c = i * d + half * h2 + j;
    nest.accesses.push_back({TensorRole::Ifm, x, {n, c, p.x, p.y}, activation(in), {}});
    nest.accesses.push_back({TensorRole::Ifm, x, {n, i * d + (1 - half) * h2 + j, p.x, p.y}, activation(in), {}});
    nest.statement = Statement::Rope;
    write({n, c, p.xo, p.yo});
    break;
  }
  case LayerType::Upsample: {
    // Each output axis split into (input position q, phase p): out[s·q + p]
    // = in[q]. The channels are batch in the nine-dim view (as a matmul's
    // heads) and the phases its K: the input is read, as a conv's, once for
    // all K, and each tile's words are distinct (docs/design.md,
    // "Resolution changes").
    const int64_t sx = l.resample.x, sy = l.resample.y;
    AffineExpr c = nest.addDim("c", out.C, {Dim::N});
    AffineExpr px = nest.addDim("px", sx, {Dim::K}), py = nest.addDim("py", sy, {Dim::K});
    AffineExpr qx = nest.addDim("qx", in.X, {Dim::Xo}), qy = nest.addDim("qy", in.Y, {Dim::Yo});
    if (l.resample.bilinear) {
      // A 3 x 3 window at q − 1 + u (stride 1, padding 1), the guard keeping
      // the two taps of each axis's phase, u ∈ {b(p), b(p) + 1} (bilinearBase):
      // s·u + s − 2 − 2p >= 0 and 2p + 1 + s − s·u >= 0. Four points per
      // output; the window a conv's, so tiles, halos and moves are.
      AffineExpr u = nest.addDim("u", 3, {Dim::R}), v = nest.addDim("v", 3, {Dim::S});
      readConcatenated(n, c, qx + u - 1, qy + v - 1);
      nest.statement = Statement::Bilinear;
      nest.guard = {u * sx + (sx - 2) - px * 2, px * 2 + (1 + sx) - u * sx,
                    v * sy + (sy - 2) - py * 2, py * 2 + (1 + sy) - v * sy};
    } else {
      readConcatenated(n, c, qx, qy);
      nest.statement = Statement::Copy;
    }
    write({n, c, qx * sx + px, qy * sy + py});
    break;
  }
  case LayerType::DepthToSpace: {
    // out[c][b·x + px][b·y + py] = in[c·b² + py·b + px] (CRD) or
    // in[(py·b + px)·C + c] (DCR), the height's phase first as ONNX's [N,
    // C, H, W] has it: the phases fold with c into the one channel dim (C
    // and K) in the order that makes the input's channel the C coordinate,
    // so the nine-dim view is a channel-wise copy of C·b² channels over the
    // input's plane, every word read and written once.
    const int64_t b = l.resample.x;
    const bool crd = !l.resample.dcr;
    AffineExpr c = crd ? nest.addDim("c", out.C, {Dim::C, Dim::K}) : AffineExpr();
    AffineExpr py = nest.addDim("py", b, {Dim::C, Dim::K}), px = nest.addDim("px", b, {Dim::C, Dim::K});
    if (!crd)
      c = nest.addDim("c", out.C, {Dim::C, Dim::K});
    AffineExpr x = nest.addDim("x", in.X, {Dim::Xo}), y = nest.addDim("y", in.Y, {Dim::Yo});
    readConcatenated(n, crd ? c * (b * b) + py * b + px : (py * b + px) * out.C + c, x, y);
    nest.statement = Statement::Copy;
    write({n, c, x * b + px, y * b + py});
    break;
  }
  }
  return nest;
}

class NetworkAnalysis {
public:
  NetworkAnalysis(const ast::NetworkDecl &decl, DiagnosticsEngine &diags, std::optional<int64_t> batch)
      : decl_(decl), diags_(diags), batchOverride_(batch) {}

  Network run() {
    net_.name = decl_.name.name;
    net_.range = decl_.range;
    net_.nameRange = decl_.name.range;
    // Where every name is defined, so a use before definition can point there.
    for (const ast::NetworkItem &item : decl_.items) {
      if (auto *l = std::get_if<ast::LayerDecl>(&item)) {
        laterDefs_.emplace(l->name.name, l->name.range);
        for (const ast::Ident &o : l->operands)
          ++readers_[o.name];
      } else if (auto *in = std::get_if<ast::InputDecl>(&item))
        laterDefs_.emplace(in->name.name, in->name.range);
    }
    for (const ast::NetworkItem &item : decl_.items)
      if (auto *b = std::get_if<ast::BatchDecl>(&item); b && b->size.value >= 1) {
        batchForLimits_ = b->size.value;   // the layers' limits count the whole batch, declared anywhere
        break;
      }
    if (batchOverride_)   // before any layer: its nest, bounds and limits all count this batch
      net_.batch = batchForLimits_ = *batchOverride_;
    for (const ast::NetworkItem &item : decl_.items)
      std::visit([&](const auto &i) { visit(i); }, item);
    if (net_.inputs.empty() && !hasInputDecl_)
      diags_.report(decl_.name.range, diag::err_no_input) << net_.name;
    // The nests once the batch is known (it may come after the layers); the
    // nine-dim bounds the analysis and the solvers read are derived from them.
    for (size_t i = 0; i < net_.layers.size(); ++i) {
      Layer &l = net_.layers[i];
      l.nest = layerNest(net_, l, windows_[i]);
      l.bounds = kaplaView(l.nest).bounds;
      // The triangle's work: the guarded domain's points, exactly.
      if (l.causal)
        (l.macs ? l.macs : l.ops) = l.nest.points() / net_.batch * (l.macs ? 1 : l.opsPerElement());
    }
    return std::move(net_);
  }

private:
  void visit(const ast::BatchDecl &b) {
    if (batchSeen_) {
      diags_.report(b.dim.range, diag::err_redefinition).note(net_.batchRange, diag::note_previous_definition)
          << "batch" << b.dim.name;
      return;
    }
    batchSeen_ = true;
    net_.batchRange = b.range;
    if (b.dim.name != "N")
      diags_.report(b.dim.range, diag::err_unknown_dimension) << b.dim.name << "a batch declaration" << "N (the batch dimension)";
    if (b.size.value < 1)
      diags_.report(b.size.range, diag::err_value_range) << "batch" << "positive" << b.size.value;
    else if (!batchOverride_)
      net_.batch = b.size.value;
  }

  void visit(const ast::InputDecl &in) {
    hasInputDecl_ = true;
    if (!names_.define(in.name, "tensor", diags_))
      return;
    Input input;
    input.name = in.name.name;
    input.range = in.range;
    input.nameRange = in.name.range;
    std::map<std::string, SourceRange> seen;
    bool hasC = false;
    for (const ast::DimSize &d : in.shape) {
      if (auto [it, inserted] = seen.emplace(d.dim.name, d.dim.range); !inserted) {
        diags_.report(d.dim.range, diag::err_duplicate_dimension).note(it->second, diag::note_previous_use)
            << d.dim.name;
        continue;
      }
      int64_t *slot = d.dim.name == "C" ? &input.shape.C
                      : d.dim.name == "X" ? &input.shape.X
                      : d.dim.name == "Y" ? &input.shape.Y
                                          : nullptr;
      if (!slot) {
        diags_.report(d.dim.range, diag::err_unknown_dimension) << d.dim.name << "an input shape" << "one of C, X or Y";
        continue;
      }
      hasC |= slot == &input.shape.C;
      if (d.size.value < 1)
        diags_.report(d.size.range, diag::err_nonpositive_amount) << "the size of " + d.dim.name << d.size.value;
      else
        *slot = d.size.value;
    }
    if (!hasC)
      diags_.report(in.name.range, diag::err_missing_dimension) << "input '" + in.name.name + "'" << "C";
    net_.names[input.name] = {true, static_cast<int>(net_.inputs.size())};
    shapes_[input.name] = input.shape;
    net_.inputs.push_back(std::move(input));
  }

  /// Resolves an operand; reports E0202 (with a note if defined later).
  std::optional<TensorRef> resolve(const ast::Ident &operand) {
    if (auto it = net_.names.find(operand.name); it != net_.names.end())
      return it->second;
    if (failed_.count(operand.name))
      return std::nullopt;   // its own definition was already reported
    auto later = laterDefs_.find(operand.name);
    if (later != laterDefs_.end()) {
      diags_.report(operand.range, diag::err_unknown_name).note(later->second, diag::note_defined_here, operand.name)
          << "tensor" << operand.name << "; layers may only use inputs and layers defined before them";
    } else {
      std::vector<std::string> known;
      for (const auto &[n, r] : net_.names)
        known.push_back(n);
      diags_.report(operand.range, diag::err_unknown_name) << "tensor" << operand.name << Suggestion{operand.range, operand.name, known};
    }
    return std::nullopt;
  }

  TensorShape shapeOf(TensorRef ref) const {
    return ref.isInput ? net_.inputs[ref.index].shape : net_.layers[ref.index].ofmShape;
  }

  /// A layer's parameters as written, by kind.
  struct LayerParams {
    std::map<std::string, int64_t> ints;
    std::map<std::string, AxisValues> axes;
    std::map<std::string, bool> bools;
    std::map<std::string, std::string> axisNames;   // an axis or a word
  };

  /// Reads layer `l`'s parameters against its operator's `spec` (none: an
  /// activation, which takes none); false, each error reported, if one is
  /// unknown, repeated, of the wrong kind or missing.
  bool readParams(const ast::LayerDecl &l, const OpSpec *spec, LayerParams &out) {
    const std::string &op = l.op.name;
    auto &[ints, axes, bools, axisNames] = out;
    std::map<std::string, SourceRange> paramRanges;
    std::vector<std::string> allowed;
    if (spec)
      for (const ParamSpec &p : spec->params)
        allowed.push_back(p.name);
    bool ok = true;
    for (const ast::KeywordArg &a : l.params) {
      const ParamSpec *ps = nullptr;
      if (spec)
        for (const ParamSpec &p : spec->params)
          if (a.key.name == p.name)
            ps = &p;
      if (!ps) {
        diags_.report(a.key.range, diag::err_unknown_parameter)
            << op << a.key.name
            << Suggestion{a.key.range, a.key.name, allowed,
                          allowed.empty() ? "; it takes no parameters" : "; it takes " + joinList(allowed, ", ", " and ")};
        ok = false;
        continue;
      }
      if (!paramRanges.emplace(a.key.name, a.key.range).second) {
        diags_.report(a.key.range, diag::err_duplicate_parameter).note(paramRanges[a.key.name], diag::note_previous_use)
            << a.key.name;
        ok = false;
        continue;
      }
      if (ps->kind == ParamKind::Axes || ps->kind == ParamKind::Pad) {
        if (auto v = axisValues(a, ps->kind == ParamKind::Pad))
          axes[a.key.name] = *v;
        else
          ok = false;
        continue;
      }
      if (a.end) {
        diags_.report(a.end->range, diag::err_parameter_value)
            << a.key.name << "one value" << valueText(a.value) + ", " + valueText(*a.end);
        ok = false;
        continue;
      }
      if (ps->kind == ParamKind::Axis) {
        if (a.value.kind == ast::Value::Kind::Word && (a.value.text == "C" || a.value.text == "X" || a.value.text == "Y")) {
          axisNames[a.key.name] = a.value.text;
        } else {
          diags_.report(a.value.range, diag::err_parameter_value)
              << a.key.name << "one of the axes C, X or Y" << valueText(a.value);
          ok = false;
        }
        continue;
      }
      if (ps->kind == ParamKind::Word) {
        if (a.value.kind == ast::Value::Kind::Word &&
            std::find(ps->words.begin(), ps->words.end(), a.value.text) != ps->words.end()) {
          axisNames[a.key.name] = a.value.text;
        } else {
          diags_.report(a.value.range, diag::err_parameter_value)
              << a.key.name << (ps->words.size() == 1 ? ps->words[0] : "one of " + joinList(ps->words, ", ", " or "))
              << valueText(a.value);
          ok = false;
        }
        continue;
      }
      if (ps->kind == ParamKind::Int || ps->kind == ParamKind::Index) {
        if (auto v = positiveInteger(a.value, a.key.name, diags_, ps->kind == ParamKind::Index ? 0 : 1))
          ints[a.key.name] = *v;
        else
          ok = false;
      } else if (auto b = boolean(a.value, a.key.name, diags_)) {
        bools[a.key.name] = *b;
      } else {
        ok = false;
      }
    }
    if (spec)
      for (const ParamSpec &p : spec->params)
        if (p.required && !paramRanges.count(p.name)) {
          diags_.report(l.op.range, diag::err_missing_parameter) << op << p.name;
          ok = false;
        }
    return ok;
  }

  void visit(const ast::LayerDecl &l) {
    if (!names_.define(l.name, "tensor", diags_))
      return;
    const std::string &op = l.op.name;
    bool isActivation = std::find(activationNames().begin(), activationNames().end(), op) != activationNames().end();
    const OpSpec *spec = nullptr;
    for (const OpSpec &s : opSpecs())
      if (op == s.name)
        spec = &s;
    if (!spec && !isActivation) {
      diags_.report(l.op.range, diag::err_unknown_operator) << op << Suggestion{l.op.range, op, allOpNames()};
      failed_.insert(l.name.name);
      return;
    }

    // Operands.
    std::vector<TensorRef> operands;
    bool ok = true;
    for (const ast::Ident &o : l.operands) {
      auto ref = resolve(o);
      if (ref)
        operands.push_back(*ref);
      ok &= ref.has_value();
    }
    int minOps = spec ? spec->minOperands : 1, maxOps = spec ? spec->maxOperands : 1;
    int n = static_cast<int>(l.operands.size());
    if (n < minOps || (maxOps >= 0 && n > maxOps)) {
      std::string count = maxOps < 0 ? "at least " + std::to_string(minOps)
                          : minOps == maxOps ? std::to_string(minOps)
                                             : std::to_string(minOps) + " to " + std::to_string(maxOps);
      diags_.report(l.op.range, diag::err_operand_count) << op << count << (maxOps == 1 ? "" : "s") << n;
      ok = false;
    }

    // Parameters.
    LayerParams params;
    ok = readParams(l, spec, params) && ok;
    auto &ints = params.ints;   // named, not bound: lambdas below capture them
    auto &axes = params.axes;
    auto &bools = params.bools;
    auto &axisNames = params.axisNames;
    if (!ok) {
      failed_.insert(l.name.name);
      return;
    }

    // A function that is both (sigmoid) fuses where fusing keeps its
    // operand's value for every other reader; otherwise it is a layer.
    if (isActivation && spec)
      isActivation = !operands[0].isInput && readers_[l.operands[0].name] == 1;
    if (isActivation) {
      fuseActivation(l, operands[0]);
      return;
    }
    noteRawUses(l);

    Layer layer;
    layer.name = l.name.name;
    layer.type = spec->type;
    layer.unary = spec->unary;
    layer.rms = spec->rms;
    layer.normPlane = spec->plane;
    layer.operands = operands;
    for (const ast::Ident &o : l.operands)
      layer.operandNames.push_back(o.name);
    layer.range = l.range;
    layer.nameRange = l.name.range;
    layer.opRange = l.op.range;
    auto param = [&](const char *k, int64_t dflt) { return ints.count(k) ? ints[k] : dflt; };
    // A window attribute per axis (x, y); `dflt` for both when not written.
    auto window = [&](const char *k, int64_t dflt) {
      AxisValues v = axes.count(k) ? axes[k] : AxisValues{dflt, dflt, dflt, dflt};
      return std::pair(v[0], v[1]);
    };
    auto pads = [&](const char *k = "pad") { return axes.count(k) ? axes[k] : AxisValues{0, 0, 0, 0}; };
    Filter filter;
    layer.resample.bilinear = axisNames.count("mode") && axisNames["mode"] == "bilinear";
    if (axisNames.count("mode"))
      layer.resample.dcr = axisNames["mode"] == "DCR";
    else
      layer.resample.dcr = layer.type == LayerType::DepthToSpace;   // ONNX's default
    if (axisNames.count("axis"))
      (layer.type == LayerType::Concat ? layer.concatAxis : layer.normAxis) =
          axisNames["axis"] == "C" ? Dim::C : axisNames["axis"] == "X" ? Dim::Xo : Dim::Yo;
    if (!inferShape(layer, l, param, window, pads, bools, filter)) {
      failed_.insert(l.name.name);
      return;
    }
    net_.names[layer.name] = {false, static_cast<int>(net_.layers.size())};
    net_.layers.push_back(std::move(layer));
    windows_.push_back(filter);
  }

  /// A window attribute's values (docs/language.md): `N` (both axes), `X x Y`,
  /// and for `pad` also `X x Y, X x Y` (begin, end). Stride and dilation are
  /// positive, padding non-negative; E0210 at the value otherwise.
  std::optional<AxisValues> axisValues(const ast::KeywordArg &a, bool pad) {
    const int64_t least = pad ? 0 : 1;
    const char *expected = pad ? "N, X x Y or X x Y, X x Y (begin, end) of non-negative integers"
                               : "a positive integer or X x Y of positive integers";
    auto pair = [&](const ast::Value &v) -> std::optional<std::pair<int64_t, int64_t>> {
      if (v.kind == ast::Value::Kind::Quantity && v.isInteger && v.unit.empty() && v.numeric >= least)
        return std::pair(static_cast<int64_t>(v.numeric), static_cast<int64_t>(v.numeric));
      if (v.kind == ast::Value::Kind::Array && v.rows >= least && v.cols >= least)
        return std::pair(v.rows, v.cols);
      diags_.report(v.range, diag::err_parameter_value) << a.key.name << expected << valueText(v);
      return std::nullopt;
    };
    auto begin = pair(a.value);
    if (!begin)
      return std::nullopt;
    std::pair<int64_t, int64_t> end = *begin;
    if (a.end) {
      if (!pad) {
        diags_.report(a.end->range, diag::err_parameter_value)
            << a.key.name << expected << valueText(a.value) + ", " + valueText(*a.end);
        return std::nullopt;
      }
      auto e = pair(*a.end);
      if (!e)
        return std::nullopt;
      end = *e;
    }
    return AxisValues{begin->first, begin->second, end.first, end.second};
  }

  /// Reports E0308 unless the batch times the factors stays within kMaxCount.
  /// Every factor is at least 1, so the counts made of fewer of them fit too.
  bool fits(const ast::LayerDecl &l, std::initializer_list<Factor> factors) {
    std::vector<Factor> all{{"N", batchForLimits_}};
    all.insert(all.end(), factors.begin(), factors.end());
    int64_t p = 1;
    bool ok = true;
    for (const Factor &f : all)
      ok = ok && f.value >= 0 && !__builtin_mul_overflow(p, f.value, &p) && p <= kMaxCount;
    if (ok)
      return true;
    std::string dims, values;
    for (const Factor &f : all) {
      dims += (dims.empty() ? "" : "*") + std::string(f.dim);
      values += (values.empty() ? "" : "*") + std::to_string(f.value);
    }
    diags_.report(l.name.range, diag::err_layer_too_large) << l.name.name << dims << values;
    return false;
  }

  /// Concatenates operands `from` on along `axis` (the layer's concat axis:
  /// C unless a concat says X or Y; a matmul's second operands: X); they must
  /// agree on the other two dims.
  std::optional<TensorShape> concatOperands(const ast::LayerDecl &l, const Layer &layer, size_t from = 0) {
    const Dim axis = layer.type == LayerType::MatMul ? Dim::Xo : layer.concatAxis;
    TensorShape first = shapeOf(layer.operands[from]);
    auto joined = [&](TensorShape &s) -> int64_t & { return axis == Dim::Xo ? s.X : axis == Dim::Yo ? s.Y : s.C; };
    const char *others = axis == Dim::Xo   ? "channels or heights (joined along X)"
                         : axis == Dim::Yo ? "channels or widths (joined along Y)"
                                           : "widths or heights (joined along C)";
    TensorShape out = first;
    joined(out) = 0;
    for (size_t i = from; i < layer.operands.size(); ++i) {
      TensorShape s = shapeOf(layer.operands[i]);
      const int64_t along = joined(s);
      joined(s) = joined(first);
      if (!(s == first)) {
        joined(s) = along;
        diags_.report(l.operands[i].range, diag::err_shape_mismatch)
            << l.name.name << others << l.operands[from].name << shapeText(first) << l.operands[i].name
            << shapeText(s);
        return std::nullopt;
      }
      joined(out) += along;
    }
    return out;
  }

  /// The layer's window per axis from its attributes: stride and dilation
  /// (x, y) and the pads (x begin, y begin, x end, y end).
  static Window windowOf(std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> dilation, AxisValues pad) {
    Window w;
    w.x = {stride.first, dilation.first, pad[0], pad[2]};
    w.y = {stride.second, dilation.second, pad[1], pad[3]};
    return w;
  }

  /// A window's output size per axis: o = ⌊(i + padBegin + padEnd − dilation·(taps − 1) − 1) / stride⌋ + 1
  /// (E0307 if not positive).
  std::optional<std::pair<int64_t, int64_t>> windowOutput(const ast::LayerDecl &l, const TensorShape &in, int64_t R,
                                                          int64_t S, const Window &w, bool ceil) {
    // With ceil, the last windows may start in the end padding (or past
    // the input): they read nothing and are dropped, as Caffe, PyTorch and
    // ONNX do (docs/language.md): window o starts at o·stride − padBegin,
    // which must be below the input's size.
    auto out = [&](int64_t size, int64_t win, const WindowAxis &a) {
      int64_t span = size + a.padBegin + a.padEnd - a.dilation * (win - 1) - 1;
      if (!ceil)
        return floorDiv(span, a.stride) + 1;
      return std::min(ceilDiv(span, a.stride), floorDiv(size + a.padBegin - 1, a.stride)) + 1;
    };
    int64_t xo = out(in.X, R, w.x), yo = out(in.Y, S, w.y);
    if (xo < 1 || yo < 1) {
      bool xBad = xo < 1;
      const WindowAxis &a = xBad ? w.x : w.y;
      std::string pad = a.padBegin == a.padEnd ? std::to_string(a.padBegin)
                                               : std::to_string(a.padBegin) + " + " + std::to_string(a.padEnd);
      diags_.report(l.op.range, diag::err_shape_nonpositive)
          << l.name.name << (xBad ? "Xo" : "Yo") << (xBad ? xo : yo) << (xBad ? "width " : "height ") +
                 std::to_string(xBad ? in.X : in.Y) << (xBad ? R : S) << a.stride << pad << a.dilation;
      return std::nullopt;
    }
    return std::make_pair(xo, yo);
  }

  /// A matmul's shapes: [C, X, Y] x [C', X', Y'] contracting over channels per
  /// head, or with transpose_b over the second's positions (docs/language.md);
  /// several second operands are read as one, joined along X (a KV cache and
  /// the new token's key or value).
  template <class Param>
  bool inferMatMul(Layer &layer, const ast::LayerDecl &l, Param param, std::map<std::string, bool> &bools) {
    TensorShape a = shapeOf(layer.operands[0]);
    std::optional<TensorShape> joinedB = concatOperands(l, layer, 1);
    if (!joinedB)
      return false;
    const TensorShape bm = *joinedB;
    std::string bName = l.operands[1].name;
    for (size_t i = 2; i < l.operands.size(); ++i)
      bName += "' + '" + l.operands[i].name;
    int64_t h = param("heads", 1);
    if (!fits(l, {{"heads", h}, {"X", bm.X}, {"Y", bm.Y}}) || !fits(l, {{"C", a.C}, {"X", a.X}, {"Y", a.Y}}) ||
        !fits(l, {{"C", bm.C}, {"X", bm.X}, {"Y", bm.Y}}))
      return false;
    layer.transposeB = bools.count("transpose_b") && bools["transpose_b"];
    int64_t Lb = bm.X * bm.Y;
    auto fail = [&](const std::string &why) {
      diags_.report(l.op.range, diag::err_matmul_shape) << l.name.name << why;
      return false;
    };
    // Grouped-query attention: b has kv heads, each read by heads/kv query heads.
    int64_t kv = param("kv_heads", h);
    if (kv < 1 || h % kv != 0)
      return fail("kv_heads=" + std::to_string(kv) + " must divide heads=" + std::to_string(h));
    if (kv < h && a.Y != 1)   // the group's member is the nest's output row (layerNest)
      return fail("kv_heads needs a first operand of height 1 (tokens along X), but '" + l.operands[0].name +
                  "' has Y=" + std::to_string(a.Y));
    if (a.C % h != 0 || bm.C % kv != 0)
      return fail("heads=" + std::to_string(h) + " must divide the channels of " +
                  (kv < h ? "'" + l.operands[0].name + "' and kv_heads=" + std::to_string(kv) + " those of '" +
                                bName + "'"
                          : std::string("both operands")) +
                  " (" + std::to_string(a.C) + " and " + std::to_string(bm.C) + ")");
    int64_t K, C;
    if (!layer.transposeB) {
      if (a.C / h != bm.C / kv)
        return fail("the operands must have equal channels" + std::string(kv < h ? " per head" : "") +
                    " to contract over, but '" + l.operands[0].name +
                    "' has C=" + std::to_string(a.C) + " and '" + bName + "' has C=" + std::to_string(bm.C) +
                    (kv < h ? " for heads=" + std::to_string(h) + ", kv_heads=" + std::to_string(kv) : ""));
      K = h * Lb;
      C = a.C / h;
    } else {
      if (a.C != h * Lb)
        return fail("with transpose_b, '" + l.operands[0].name + "' must have heads x (X*Y of '" +
                    bName + "') = " + std::to_string(h * Lb) + " channels, but has C=" +
                    std::to_string(a.C));
      K = bm.C / kv * h;
      C = Lb;
    }
    if (!fits(l, {{"K", K}, {"C", C}, {"X", a.X}, {"Y", a.Y}}))
      return false;
    layer.causal = bools.count("causal") && bools["causal"];
    if (layer.causal && !causalShape(l, "matmul", a, Lb, a.Y == 1 && bm.Y == 1))
      return false;
    layer.groups = h;
    layer.kvHeads = kv;
    layer.ifmShape = a;
    layer.ofmShape = {K, a.X, a.Y};
    layer.wgtSize = bm.C * Lb;   // K·C without groups; the kv heads' alone with them
    layer.macs = a.X * a.Y * K * C;
    return true;
  }

  /// A causal layer's queries are the X positions of a sequence [C, X, 1]
  /// (`alongX`: its keys too; a softmax's rows along C) and its keys at least
  /// as many as its queries, so every query sees one key (E0312 otherwise).
  bool causalShape(const ast::LayerDecl &l, const char *kind, const TensorShape &queries, int64_t keys, bool alongX) {
    std::string why;
    if (!alongX)
      why = std::string(kind) == "softmax" ? "its rows must be along C (the keys) of a sequence [C, X, Y=1]"
                                           : "its operands must be sequences along X ([C, X, Y=1])";
    else if (keys < queries.X)
      why = "it has " + std::to_string(keys) + " keys for " + std::to_string(queries.X) +
            " queries; the first queries would see no key";
    if (why.empty())
      return true;
    diags_.report(l.op.range, diag::err_causal_shape) << kind << l.name.name << why;
    return false;
  }

  template <class Param, class Axes, class Pads>
  bool inferShape(Layer &layer, const ast::LayerDecl &l, Param param, Axes axes, Pads pads,
                  std::map<std::string, bool> &bools, Filter &filter) {
    switch (layer.type) {
    case LayerType::Conv:
    case LayerType::DwConv: {
      auto in = layer.type == LayerType::Conv ? concatOperands(l, layer) : std::optional(shapeOf(layer.operands[0]));
      if (!in)
        return false;
      int64_t R = param("R", 1), S = param("S", R);
      layer.window = windowOf(axes("stride", 1), axes("dilation", 1), pads());
      auto o = windowOutput(l, *in, R, S, layer.window, false);
      if (!o)
        return false;
      int64_t K = layer.type == LayerType::Conv ? param("K", 1) : in->C;
      layer.groups = layer.type == LayerType::Conv ? param("groups", 1) : in->C;
      if (in->C % layer.groups != 0 || K % layer.groups != 0) {
        diags_.report(l.op.range, diag::err_groups_divide) << layer.groups << l.name.name << in->C << K;
        return false;
      }
      // MACs N*K*Xo*Yo*(C/groups)*R*S bound the weights and the output too; the input is apart.
      bool macsFit = layer.type == LayerType::Conv
                         ? fits(l, {{"K", K}, {"Xo", o->first}, {"Yo", o->second}, {"C", in->C}, {"R", R}, {"S", S}})
                         : fits(l, {{"C", in->C}, {"Xo", o->first}, {"Yo", o->second}, {"R", R}, {"S", S}});
      if (!macsFit || !fits(l, {{"C", in->C}, {"Xi", in->X}, {"Yi", in->Y}}))
        return false;
      layer.ifmShape = *in;
      layer.ofmShape = {K, o->first, o->second};
      filter = {R, S};
      layer.wgtSize = layer.type == LayerType::DwConv ? in->C * R * S : K * (in->C / layer.groups) * R * S;
      layer.macs = layer.type == LayerType::DwConv ? in->C * o->first * o->second * R * S
                                                   : K * o->first * o->second * (in->C / layer.groups) * R * S;
      break;
    }
    case LayerType::ConvTranspose: {
      // PyTorch's output size per axis: (i − 1)·stride − padBegin − padEnd +
      // taps + output_padding; the nest's window is the conv's from the
      // output back to the input, whose end padding is what it reaches past
      // the output's end (padEnd − output_padding, if positive).
      TensorShape in = shapeOf(layer.operands[0]);
      const int64_t R = param("R", 1), S = param("S", R), K = param("K", 1);
      layer.groups = param("groups", 1);
      const AxisValues op = pads("output_padding");
      auto [sx, sy] = axes("stride", 1);
      const AxisValues pad = pads();
      auto fail = [&](const std::string &why) {
        diags_.report(l.op.range, diag::err_conv_transpose_shape) << l.name.name << why;
        return false;
      };
      if (op[0] != op[2] || op[1] != op[3])
        return fail("output_padding takes one value per axis (N or X x Y), not begin and end");
      if (op[0] >= sx || op[1] >= sy)
        return fail("output_padding " + std::to_string(op[0]) + " x " + std::to_string(op[1]) +
                    " must be below the stride " + std::to_string(sx) + " x " + std::to_string(sy) +
                    " (PyTorch's rule: a larger one adds outputs no input position reaches)");
      if (in.C % layer.groups != 0 || K % layer.groups != 0) {
        diags_.report(l.op.range, diag::err_groups_divide) << layer.groups << l.name.name << in.C << K;
        return false;
      }
      // Each factor is below 2^31, so the sizes below fit in 64 bits.
      const int64_t xo = (in.X - 1) * sx - pad[0] - pad[2] + R + op[0];
      const int64_t yo = (in.Y - 1) * sy - pad[1] - pad[3] + S + op[1];
      if (xo < 1 || yo < 1)
        return fail(std::string("the output's ") + (xo < 1 ? "width" : "height") + " (i - 1)·stride - pads + taps + output_padding is " +
                    std::to_string(xo < 1 ? xo : yo) + ", not positive");
      if (!fits(l, {{"C", in.C}, {"K", K}, {"Xi", in.X}, {"Yi", in.Y}, {"R", R}, {"S", S}}) ||
          !fits(l, {{"K", K}, {"Xo", xo}, {"Yo", yo}}))
        return false;
      layer.window = windowOf({sx, sy}, {1, 1}, {pad[0], pad[1], std::max<int64_t>(0, pad[2] - op[0]),
                                                  std::max<int64_t>(0, pad[3] - op[1])});
      layer.output = TensorRole::Ifm;
      layer.ifmShape = in;
      layer.ofmShape = {K, xo, yo};
      filter = {R, S};
      layer.wgtSize = in.C * (K / layer.groups) * R * S;
      layer.macs = layer.wgtSize * in.X * in.Y;   // every tap of every input word, those landing in the padding too
      break;
    }
    case LayerType::FC: {
      auto in = concatOperands(l, layer);
      if (!in)
        return false;
      int64_t K = param("K", 1);
      if (!fits(l, {{"K", K}, {"C", in->C}, {"Xi", in->X}, {"Yi", in->Y}}))
        return false;
      layer.ifmShape = *in;
      layer.ofmShape = {K, 1, 1};
      // As nn_dataflow: a convolution whose filter covers the whole input.
      filter = {in->X, in->Y};
      layer.wgtSize = K * in->size();
      layer.macs = K * in->size();
      break;
    }
    case LayerType::MatMul:
      if (!inferMatMul(layer, l, param, bools))
        return false;
      break;
    case LayerType::MaxPool:
    case LayerType::AvgPool: {
      TensorShape in = shapeOf(layer.operands[0]);
      int64_t R = param("R", 1), S = param("S", R);
      layer.window = windowOf(axes("stride", R), {1, 1}, pads());
      layer.ceilMode = bools.count("ceil") && bools["ceil"];
      // Every side's padding is smaller than the window, the larger of R and S.
      const WindowAxis &px = layer.window.x, &py = layer.window.y;
      if (int64_t pad = std::max({px.padBegin, px.padEnd, py.padBegin, py.padEnd}); pad >= std::max(R, S)) {
        diags_.report(l.op.range, diag::err_pool_window) << pad << l.name.name << std::max(R, S);
        return false;
      }
      auto o = windowOutput(l, in, R, S, layer.window, layer.ceilMode);
      if (!o)
        return false;
      if (!fits(l, {{"C", in.C}, {"Xo", o->first}, {"Yo", o->second}, {"R", R}, {"S", S}}) ||
          !fits(l, {{"C", in.C}, {"Xi", in.X}, {"Yi", in.Y}}))
        return false;
      layer.ifmShape = in;
      layer.ofmShape = {in.C, o->first, o->second};
      filter = {R, S};
      layer.ops = in.C * o->first * o->second * R * S;
      break;
    }
    case LayerType::Add:
    case LayerType::Mul:
    case LayerType::Concat: {
      TensorShape first = shapeOf(layer.operands[0]);
      if (layer.type == LayerType::Concat) {
        auto in = concatOperands(l, layer);
        if (!in || !fits(l, {{"C", in->C}, {"X", in->X}, {"Y", in->Y}}))
          return false;
        layer.ifmShape = *in;
        layer.ofmShape = *in;
      } else {
        // Two operands, one [C,1,1] and the other [C,X,Y]: the small one is
        // broadcast over X and Y (docs/language.md); else every shape is equal.
        if (layer.operands.size() == 2) {
          const TensorShape second = shapeOf(layer.operands[1]);
          auto pointwise = [](const TensorShape &a, const TensorShape &b) {
            return a.X == 1 && a.Y == 1 && a.C == b.C && b.X * b.Y > 1;
          };
          layer.broadcast = pointwise(second, first) ? 1 : pointwise(first, second) ? 0 : -1;
          if (layer.broadcast == 0)
            first = second;
        }
        for (size_t i = 1; i < layer.operands.size() && layer.broadcast < 0; ++i) {
          TensorShape s = shapeOf(layer.operands[i]);
          if (!(s == first)) {
            diags_.report(l.operands[i].range, diag::err_shape_mismatch)
                << l.name.name << "shapes" << l.operands[0].name << shapeText(first) << l.operands[i].name
                << shapeText(s);
            return false;
          }
        }
        if (layer.broadcast >= 0)
          layer.wgtSize = first.C;   // per sample, like a matmul's second operand
        int64_t operands = static_cast<int64_t>(layer.operands.size());
        if (!fits(l, {{"operands", operands}, {"C", first.C}, {"X", first.X}, {"Y", first.Y}}))
          return false;
        layer.ifmShape = first;
        layer.ofmShape = first;
        layer.ops = static_cast<int64_t>(layer.operands.size() - 1) * first.size();
      }
      break;
    }
    case LayerType::Softmax:
    case LayerType::LayerNorm:
    case LayerType::Unary: {
      TensorShape in = shapeOf(layer.operands[0]);
      const int64_t perElement = layer.opsPerElement();
      if (!fits(l, {{"ops", perElement}, {"C", in.C}, {"X", in.X}, {"Y", in.Y}}))
        return false;
      layer.normGroups = param("groups", 1);
      if (layer.normGroups > 1 && (layer.normAxis != Dim::C || in.C % layer.normGroups != 0)) {
        diags_.report(l.op.range, diag::err_norm_groups)
            << layer.normGroups << l.name.name << (layer.normAxis != Dim::C ? "its axis is not C" : "it has C=" + std::to_string(in.C));
        return false;
      }
      layer.causal = bools.count("causal") && bools["causal"];
      if (layer.causal && !causalShape(l, "softmax", in, in.C / layer.normGroups, layer.normAxis == Dim::C && in.Y == 1))
        return false;
      layer.ifmShape = in;
      layer.ofmShape = in;
      layer.ops = perElement * in.size();
      break;
    }
    case LayerType::Rope: {
      // Element-wise over [h·d, L, Y]: each head's two halves rotated by the
      // token's angle (docs/language.md); d even.
      TensorShape in = shapeOf(layer.operands[0]);
      layer.groups = param("heads", 1);
      layer.ropePos = param("pos", 0);
      if (!fits(l, {{"C", in.C}, {"X", in.X}, {"Y", in.Y}, {"heads", layer.groups}, {"pos", layer.ropePos},
                    {"ops", layer.opsPerElement()}}))
        return false;
      if (in.C % (2 * layer.groups) != 0) {
        diags_.report(l.op.range, diag::err_rope_channels) << l.name.name << 2 * layer.groups << l.operands[0].name << in.C;
        return false;
      }
      layer.ifmShape = in;
      layer.ofmShape = in;
      layer.ops = layer.opsPerElement() * in.size();
      break;
    }
    case LayerType::Upsample:
    case LayerType::DepthToSpace: {
      // A copy, no arithmetic: out has sx·sy times the input's positions;
      // depth_to_space takes them from b² times fewer channels.
      TensorShape in = shapeOf(layer.operands[0]);
      int64_t sx, sy;
      if (layer.type == LayerType::Upsample)
        std::tie(sx, sy) = axes("scale", 2);
      else
        sx = sy = param("block", 2);
      layer.resample.x = sx, layer.resample.y = sy;
      if (!fits(l, {{"C", in.C}, {"X", in.X}, {"Y", in.Y}, {"sx", sx}, {"sy", sy}}))
        return false;
      TensorShape out{in.C, in.X * sx, in.Y * sy};
      if (layer.type == LayerType::DepthToSpace) {
        if (in.C % (sx * sy) != 0) {
          diags_.report(l.op.range, diag::err_block_channels) << l.name.name << sx * sy << l.operands[0].name << in.C;
          return false;
        }
        out.C = in.C / (sx * sy);
      }
      // bilinear: four weighted taps per output word (docs/language.md), of
      // a 3 x 3 window's box the kernels walk.
      if (layer.resample.bilinear && !fits(l, {{"C", in.C}, {"X", in.X}, {"Y", in.Y}, {"sx", sx}, {"sy", sy}, {"taps", 9}}))
        return false;
      layer.ops = layer.resample.bilinear ? 4 * out.size() : 0;
      if (layer.resample.bilinear)   // the nest's 3 x 3 window at q − 1 + u
        layer.window.x = layer.window.y = WindowAxis{1, 1, 1, 1};
      layer.ifmShape = in;
      layer.ofmShape = out;
      break;
    }
    }
    return true;
  }

  void fuseActivation(const ast::LayerDecl &l, TensorRef producer) {
    if (producer.isInput) {
      if (l.op.name != "identity")   // an identity dropped changes nothing
        diags_.report(l.op.range, diag::warn_activation_on_input) << l.op.name << l.operands[0].name << l.name.name;
    } else {
      Layer &p = net_.layers[producer.index];
      if (auto it = rawUsers_.find(producer.index); it != rawUsers_.end())
        diags_.report(l.op.range, diag::warn_activation_shared) << l.op.name << p.name << it->second;
      p.activations.push_back(l.op.name);
      activated_.insert(producer.index);
    }
    net_.names[l.name.name] = producer;
  }

  /// Remembers who reads a layer's output by the layer's own name (for W0306).
  void noteRawUses(const ast::LayerDecl &l) {
    for (const ast::Ident &o : l.operands) {
      int idx = net_.findLayer(o.name);
      if (idx < 0)
        continue;
      if (activated_.count(idx))
        diags_.report(o.range, diag::warn_activation_shared)
            << net_.layers[idx].activations.back() << o.name << l.name.name;
      rawUsers_.emplace(idx, l.name.name);
    }
  }

  const ast::NetworkDecl &decl_;
  DiagnosticsEngine &diags_;
  Network net_;
  Scope names_;
  std::map<std::string, SourceRange> laterDefs_;
  std::map<std::string, TensorShape> shapes_;
  std::set<std::string> failed_;
  std::map<int, std::string> rawUsers_;
  std::map<std::string, int> readers_;   // layers reading each name, as written
  std::set<int> activated_;
  std::vector<Filter> windows_;   // per layer, for its nest
  bool batchSeen_ = false, hasInputDecl_ = false;
  int64_t batchForLimits_ = 1;
  std::optional<int64_t> batchOverride_;   // --batch
};

} // namespace

Network analyzeNetwork(const ast::NetworkDecl &decl, DiagnosticsEngine &diags, std::optional<int64_t> batch) {
  return NetworkAnalysis(decl, diags, batch).run();
}

} // namespace dfl::sema
