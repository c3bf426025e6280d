#include "backend/Reference.h"

#include "support/Check.h"
#include "support/IntMath.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace dfl::sim {
namespace {

// ---- wrap-around arithmetic -------------------------------------------------

// In uint32_t, where overflow is defined: the sum and product modulo 2^32.
Word add(Word a, Word b) { return static_cast<Word>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
Word mul(Word a, Word b) { return static_cast<Word>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b)); }
/// a / d rounded toward zero (d > 0): an average's per-element term.
Word divide(Word a, int64_t d) { return static_cast<Word>(static_cast<int64_t>(a) / d); }

/// Max pooling's padding and the maximum of nothing: −∞.
constexpr Word kMinusInfinity = std::numeric_limits<Word>::min();

// ---- the layer kinds' index relations ---------------------------------------
//
// Each enumerator visits every point of a layer kind's computation whose input
// index falls inside the input, written from the layer's parameters, as runs:
// the t-th point of a run (t < count) pairs the output element o + t·dO, the
// input element i + t·dI and, for the multiply-accumulate kinds, the weight
// w + t·dW (row-major offsets). Points whose input index is padding, or lies
// past the input in a ceil-mode window, are not visited: they read 0 (−∞ for
// max), which leaves every sum (and max) as it is, and a data gradient's
// write there is dropped. A forward layer, its data gradient and its weight
// gradient are the same relation read three ways.

struct Run {
  int64_t o, i, w, dO, dI, dW, count;
};

/// The filter and its window per axis (x: width, R; y: height, S).
struct Filter {
  int64_t R, S;
  WindowAxis x, y;
};

Filter windowOf(const Layer &l) { return {at(l.bounds, Dim::R), at(l.bounds, Dim::S), l.window.x, l.window.y}; }


/// The outputs o in [0, outputs) whose input index o·stride + offset lies in
/// [0, extent): [first, first + count).
struct Span {
  int64_t first, count;
};
Span inside(int64_t outputs, int64_t stride, int64_t offset, int64_t extent) {
  const int64_t first = std::max<int64_t>(0, -floorDiv(offset, stride));   // ceil(-offset / stride)
  const int64_t end = std::min(outputs, floorDiv(extent - 1 - offset, stride) + 1);
  return {first, std::max<int64_t>(0, end - first)};
}

/// The sliding-window kinds (conv, dwconv, pools) over one output plane:
/// output (xo, yo) and tap (r, s) read input x = xo·strideX + r·dilationX − padLeft,
/// y = yo·strideY + s·dilationY − padTop. The runs go along the longer output
/// axis, over the outputs whose input index on it is inside; their offsets
/// are from the plane's first output and input elements and its filter's
/// first weight. The same for every plane of a layer: derived once.
std::vector<Run> planeRuns(const TensorShape &in, const TensorShape &out, const Filter &w) {
  // One axis of the plane: its outputs and taps, the input's extent, the
  // offset steps of one output, input element and tap along it, and its window.
  struct Axis {
    int64_t outputs, taps, extent, outStep, inStep, tapStep;
    WindowAxis w;
  };
  Axis across{out.X, w.R, in.X, out.Y, in.Y, w.S, w.x}, along{out.Y, w.S, in.Y, 1, 1, 1, w.y};
  if (out.Y < out.X)
    std::swap(across, along);
  const WindowAxis &wa = across.w, &wb = along.w;
  std::vector<Run> runs;
  for (int64_t a = 0; a < across.outputs; ++a)
    for (int64_t ta = 0; ta < across.taps; ++ta) {
      const int64_t position = a * wa.stride + ta * wa.dilation - wa.padBegin;
      if (position < 0 || position >= across.extent)
        continue;
      for (int64_t tb = 0; tb < along.taps; ++tb) {
        const int64_t offset = tb * wb.dilation - wb.padBegin;
        const Span b = inside(along.outputs, wb.stride, offset, along.extent);
        if (b.count > 0)
          runs.push_back(Run{a * across.outStep + b.first * along.outStep,
                             position * across.inStep + (b.first * wb.stride + offset) * along.inStep,
                             ta * across.tapStep + tb * along.tapStep, along.outStep, wb.stride * along.inStep, 0,
                             b.count});
      }
    }
  return runs;
}

/// The plane's runs from output `o`, input `i` and weight `wgt`.
template <class F> void windowRuns(const std::vector<Run> &runs, int64_t o, int64_t i, int64_t wgt, F &&f) {
  for (const Run &r : runs)
    f(Run{o + r.o, i + r.i, wgt + r.w, r.dO, r.dI, r.dW, r.count});
}

/// conv: out[n][g·K/G + k][xo][yo] += in[n][g·C/G + c][x][y] · w[g·K/G + k][c][r][s]
/// with x = xo·strideX + r·dilationX − padLeft, y = yo·strideY + s·dilationY − padTop.
template <class F> void convMacs(const Network &net, const Layer &l, F &&f) {
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  const Filter w = windowOf(l);
  const int64_t G = l.groups, Cg = in.C / G, Kg = out.C / G;
  const int64_t inPlane = in.X * in.Y, outPlane = out.X * out.Y;
  const std::vector<Run> runs = planeRuns(in, out, w);
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t k = 0; k < Kg; ++k) {
        const int64_t kOut = g * Kg + k;
        for (int64_t c = 0; c < Cg; ++c)
          windowRuns(runs, (n * out.C + kOut) * outPlane, (n * in.C + g * Cg + c) * inPlane,
                     (kOut * Cg + c) * w.R * w.S, f);
      }
}

/// conv_transpose, from PyTorch's definition: every input word scatters its
/// taps, out[n][g·K/G + k][xi·strideX + r − padLeft][yi·strideY + s − padTop]
/// += in[n][g·C/G + c][xi][yi] · w[g·C/G + c][k][r][s]; taps outside the
/// output (in its padding) are dropped. Independent of the nest's form.
/// f(o, i, w) gets the offsets of every tap that lands: output, input, weight.
template <class F> void forEachConvTransposeTap(const Network &net, const Layer &l, F &&f) {
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  const Filter w = windowOf(l);
  const int64_t Cg = in.C / l.groups, Kg = out.C / l.groups;
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t c = 0; c < in.C; ++c)
      for (int64_t k = 0; k < Kg; ++k)
        for (int64_t xi = 0; xi < in.X; ++xi)
          for (int64_t yi = 0; yi < in.Y; ++yi)
            for (int64_t r = 0; r < w.R; ++r)
              for (int64_t s = 0; s < w.S; ++s) {
                const int64_t xo = xi * w.x.stride + r - w.x.padBegin, yo = yi * w.y.stride + s - w.y.padBegin;
                if (xo < 0 || xo >= out.X || yo < 0 || yo >= out.Y)
                  continue;
                f(static_cast<size_t>(((n * out.C + c / Cg * Kg + k) * out.X + xo) * out.Y + yo),
                  static_cast<size_t>(((n * in.C + c) * in.X + xi) * in.Y + yi),
                  static_cast<size_t>(((c * Kg + k) * w.R + r) * w.S + s));
              }
}

/// dwconv: out[n][c][xo][yo] += in[n][c][x][y] · w[c][r][s], x and y as conv's.
template <class F> void dwconvMacs(const Network &net, const Layer &l, F &&f) {
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  const Filter w = windowOf(l);
  const std::vector<Run> runs = planeRuns(in, out, w);
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t c = 0; c < in.C; ++c)
      windowRuns(runs, (n * in.C + c) * out.X * out.Y, (n * in.C + c) * in.X * in.Y, c * w.R * w.S, f);
}

/// fc: out[n][k] += in[n][c][x][y] · w[k][c][x][y] over the whole input.
template <class F> void fcMacs(const Network &net, const Layer &l, F &&f) {
  const int64_t K = l.ofmShape.C, inputs = l.ifmShape.size();
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t k = 0; k < K; ++k)   // the run: e = (c·X + x)·Y + y
      f(Run{n * K + k, n * inputs, k * inputs, 0, 1, 1, inputs});
}

/// matmul with H heads, a = [Ca][X][Y], b = [Cb][Lb] (Lb = Xb·Yb, position
/// j = bx·Yb + by) of Hkv heads, query head h reading b's head g = h / (H/Hkv)
/// (Hkv = H but for grouped-query attention):
///   without transpose_b  out[n][h·Lb + j][x][y] += a[n][h·Ca/H + c][x][y] · b[n][g·Ca/H + c][j]
///   with transpose_b     out[n][h·Cb/Hkv + k][x][y] += a[n][h·Lb + j][x][y] · b[n][g·Cb/Hkv + k][j]
/// The "weight" offset is into b; a run covers the output plane (x, y).
template <class F> void matmulMacs(const Network &net, const Layer &l, const TensorShape &b, F &&f) {
  const TensorShape &a = l.ifmShape, &out = l.ofmShape;
  const int64_t H = l.groups, Lb = b.X * b.Y, plane = a.X * a.Y;
  // Per head: `outer` output channels, each the sum of `inner` products.
  const int64_t outer = l.transposeB ? b.C / l.kvHeads : Lb, inner = l.transposeB ? Lb : a.C / H;
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t u = 0; u < outer; ++u)
        for (int64_t v = 0; v < inner; ++v) {
          // Without transpose_b: u = j, v = c; with it: u = k, v = j.
          const int64_t g = h / (H / l.kvHeads);
          const int64_t outChannel = h * outer + u;
          const int64_t aChannel = l.transposeB ? h * Lb + v : h * inner + v;
          const int64_t bElement = l.transposeB ? (g * outer + u) * Lb + v : (g * inner + v) * Lb + u;
          // Causal (Y = 1, the plane a sequence): key j is seen by the queries
          // x >= j − offset, so the run starts there.
          const int64_t key = l.transposeB ? v : u;
          const int64_t x0 = l.causal ? std::clamp<int64_t>(key - l.causalOffset(), 0, plane) : 0;
          f(Run{(n * out.C + outChannel) * plane + x0, (n * a.C + aChannel) * plane + x0, n * b.C * Lb + bElement, 1,
                1, 0, plane - x0});
        }
}

/// A matmul's second operands, joined along X: b, read as the wgt.
std::vector<TensorRef> secondOperands(const Layer &l) { return {l.operands.begin() + 1, l.operands.end()}; }
TensorShape secondShape(const Network &net, const Layer &l) {
  TensorShape b = operandShape(net, l.operands[1]);
  b.X = 0;
  for (TensorRef op : secondOperands(l))
    b.X += operandShape(net, op).X;
  return b;
}

/// Every multiply-accumulate of a conv, dwconv, fc or matmul layer.
template <class F> void forEachMac(const Network &net, const Layer &l, F &&f) {
  switch (l.type) {
  case LayerType::Conv: return convMacs(net, l, f);
  case LayerType::DwConv: return dwconvMacs(net, l, f);
  case LayerType::FC: return fcMacs(net, l, f);
  case LayerType::MatMul: return matmulMacs(net, l, secondShape(net, l), f);
  default: DFLC_UNREACHABLE(std::string("no multiply-accumulates in a ") + l.kindName());
  }
}

/// pools: every tap (r, s) inside the input of every output's window,
/// out[n][c][xo][yo] and in[n][c][xo·strideX + r − padLeft][yo·strideY + s − padTop].
template <class F> void forEachTap(const Network &net, const Layer &l, F &&f) {
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  const std::vector<Run> runs = planeRuns(in, out, windowOf(l));
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t c = 0; c < in.C; ++c)
      windowRuns(runs, (n * in.C + c) * out.X * out.Y, (n * in.C + c) * in.X * in.Y, 0, f);
}

/// dst[t·dD] += a[t·dA] · b[t·dB] for t < count, modulo 2^32 (a sum in a
/// register where dst stays put).
void macRun(Word *dst, int64_t dD, const Word *a, int64_t dA, const Word *b, int64_t dB, int64_t count) {
  if (dD == 0) {
    uint32_t sum = static_cast<uint32_t>(*dst);
    if (dA == 1 && dB == 1)   // contiguous (fc): vectorized
      for (int64_t t = 0; t < count; ++t)
        sum += static_cast<uint32_t>(a[t]) * static_cast<uint32_t>(b[t]);
    else
      for (int64_t t = 0; t < count; ++t)
        sum += static_cast<uint32_t>(a[t * dA]) * static_cast<uint32_t>(b[t * dB]);
    *dst = static_cast<Word>(sum);
    return;
  }
  if (dD == 1 && dB == 0) {   // a window's tap along an output row: one weight
    const uint32_t w = static_cast<uint32_t>(*b);
    uint32_t *__restrict d = reinterpret_cast<uint32_t *>(dst);
    const uint32_t *__restrict x = reinterpret_cast<const uint32_t *>(a);
    if (dA == 1)   // contiguous: vectorized
      for (int64_t t = 0; t < count; ++t)
        d[t] += x[t] * w;
    else
      for (int64_t t = 0; t < count; ++t)
        d[t] += x[t * dA] * w;
    return;
  }
  for (int64_t t = 0; t < count; ++t)
    dst[t * dD] = add(dst[t * dD], mul(a[t * dA], b[t * dB]));
}

// ---- tensors ----------------------------------------------------------------

/// The words of `name`, which must have `extent`.
const std::vector<Word> &read(const TensorStore &store, const std::string &name, const std::vector<int64_t> &extent) {
  const Tensor &t = store.at(name);
  DFLC_CHECK(t.extent == extent) << "tensor '" << name << "' has other extents than the layer reads";
  return t.data;
}

const std::vector<Word> &readOperand(const Network &net, const TensorStore &store, TensorRef op) {
  return read(store, operandName(net, op), activationExtent(net, operandShape(net, op)));
}

/// How a layer's ifm operands join along its concat axis (C, X or Y): the
/// joined tensor is `outer` blocks, each the operands' blocks in turn, an
/// operand's block its words from the axis inward ([N][ΣC][X][Y] along C).
struct Joining {
  int64_t outer;
  std::vector<int64_t> block;   // per ifm operand
};
Joining joiningOf(const Network &net, const std::vector<TensorRef> &ops, Dim axis) {
  const TensorShape first = operandShape(net, ops.at(0));   // the others agree off the axis
  Joining j{net.batch * (axis == Dim::C ? 1 : axis == Dim::Xo ? first.C : first.C * first.X), {}};
  for (TensorRef op : ops) {
    const TensorShape s = operandShape(net, op);
    j.block.push_back(axis == Dim::C ? s.size() : axis == Dim::Xo ? s.X * s.Y : s.Y);
  }
  return j;
}
Joining joiningOf(const Network &net, const Layer &fwd) { return joiningOf(net, fwd.ifmOperands(), fwd.concatAxis); }

/// Operands joined along `axis`, [N][ΣC][X][Y] along C.
std::vector<Word> join(const Network &net, const TensorStore &store, const std::vector<TensorRef> &ops, Dim axis) {
  std::vector<Word> out;
  const Joining j = joiningOf(net, ops, axis);
  for (int64_t o = 0; o < j.outer; ++o)
    for (size_t i = 0; i < ops.size(); ++i) {
      const std::vector<Word> &words = readOperand(net, store, ops[i]);
      out.insert(out.end(), words.begin() + o * j.block[i], words.begin() + (o + 1) * j.block[i]);
    }
  return out;
}

/// A forward layer's ifm: its ifm operands concatenated along its concat axis.
std::vector<Word> readInput(const Network &net, const Layer &fwd, const TensorStore &store) {
  return join(net, store, fwd.ifmOperands(), fwd.concatAxis);
}

/// The layer's wgt: its stored weights, or a matmul's second operands joined.
std::vector<Word> readWeights(const Network &net, const Layer &fwd, const TensorStore &store) {
  if (fwd.type == LayerType::MatMul)
    return join(net, store, secondOperands(fwd), Dim::Xo);
  return read(store, weightName(fwd), weightExtent(fwd));
}

/// The rows a softmax or layernorm normalizes: its output seen as [A][L][B],
/// L the row's words (along C within a group, X or Y), row (a, b) at
/// a·L·B + b with stride B.
struct Rows {
  int64_t a, length, b;
};
Rows rowsOf(const Network &net, const Layer &l) {
  const TensorShape &s = l.ofmShape;
  if (l.normPlane)   // a group's channels at every position: contiguous
    return {net.batch * l.normGroups, l.rowLength(), 1};
  if (l.normAxis == Dim::C)
    return {net.batch * l.normGroups, s.C / l.normGroups, s.X * s.Y};
  if (l.normAxis == Dim::Xo)
    return {net.batch * s.C, s.X, s.Y};
  return {net.batch * s.C * s.X, s.Y, 1};
}

/// softmax of one row in the fixed point (docs/simulator.md): with m the
/// row's maximum and d = m − v ≥ 0, t = ⌊23·d/16⌋ ≈ d·log2(e) in 16ths of a
/// power of two, e = (2^16 >> ⌊t/16⌋)·(32 − t mod 16)/32 ≈ 2^16·exp(−d/16),
/// and out = ⌊16·e / Σe⌋.
/// A causal row sees only its first `seen` words; the others are masked:
/// weight exactly 0, out of the maximum and the sum.
void softmaxRow(std::vector<int64_t> &row, size_t seen) {
  const auto end = row.begin() + static_cast<std::ptrdiff_t>(seen);
  const int64_t m = *std::max_element(row.begin(), end);
  int64_t sum = 0;
  for (auto v = row.begin(); v != end; ++v) {
    const int64_t t = (m - *v) * 23 / 16, q = t / 16, f = t % 16;
    *v = q > 16 ? 0 : (int64_t{65536} >> q) * (32 - f) / 32;
    sum += *v;
  }
  std::fill(end, row.end(), 0);
  for (auto v = row.begin(); v != end; ++v)
    *v = 16 * *v / sum;
}

/// layernorm of one row: the words saturated to 16 bits, mean μ = Σv / L and
/// variance Σ(v − μ)² / L (division toward zero), σ = max(1, ⌊√variance⌋),
/// out = 16·(v − μ) / σ; γ = 1 and β = 0. rmsnorm is the same with μ = 0:
/// σ the root of the mean square.
void layernormRow(std::vector<int64_t> &row, bool rms) {
  const int64_t n = static_cast<int64_t>(row.size());
  int64_t sum = 0;
  for (int64_t &v : row)
    sum += v = std::clamp<int64_t>(v, -32768, 32767);
  const int64_t mean = rms ? 0 : sum / n;
  int64_t squares = 0;
  for (int64_t v : row)
    squares += (v - mean) * (v - mean);
  const int64_t variance = squares / n;
  int64_t sigma = 0;
  while ((sigma + 1) * (sigma + 1) <= variance)
    ++sigma;
  sigma = std::max<int64_t>(sigma, 1);
  for (int64_t &v : row)
    v = 16 * (v - mean) / sigma;
}

/// Normalizes every row of a softmax's, layernorm's or rmsnorm's output in place.
void normalizeRows(const Network &net, const Layer &l, std::vector<Word> &y) {
  const Rows r = rowsOf(net, l);
  std::vector<int64_t> row(static_cast<size_t>(r.length));
  for (int64_t a = 0; a < r.a; ++a)
    for (int64_t b = 0; b < r.b; ++b) {
      const int64_t base = a * r.length * r.b + b;
      for (int64_t j = 0; j < r.length; ++j)
        row[static_cast<size_t>(j)] = y[static_cast<size_t>(base + j * r.b)];
      // A causal row (a, b): along C, b is the query position x (Y = 1).
      const int64_t seen = l.causal ? std::min(r.length, b + l.causalOffset() + 1) : r.length;
      l.type == LayerType::Softmax ? softmaxRow(row, static_cast<size_t>(seen)) : layernormRow(row, l.rms);
      for (int64_t j = 0; j < r.length; ++j)
        y[static_cast<size_t>(base + j * r.b)] = static_cast<Word>(row[static_cast<size_t>(j)]);
    }
}

/// upsample (nearest) and depth_to_space, from their definitions
/// (docs/language.md): output (c, x, y) is input position (x / sx, y / sy)
/// of channel c (upsample), or of the channel block phase (y mod b, x mod b),
/// the height's first, and c make: c·b² + phase (CRD) or phase·C + c (DCR).
/// `f(o, i)` for every output word o and the input word i it copies.
template <class F> void forEachResampled(const Network &net, const Layer &l, F f) {
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  const int64_t sx = l.resample.x, sy = l.resample.y;
  size_t at = 0;
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t c = 0; c < out.C; ++c)
      for (int64_t ox = 0; ox < out.X; ++ox)
        for (int64_t oy = 0; oy < out.Y; ++oy, ++at) {
          const int64_t phase = (oy % sy) * sx + ox % sx;
          const int64_t ic = l.type == LayerType::Upsample ? c : l.resample.dcr ? phase * out.C + c : c * sx * sy + phase;
          f(at, static_cast<size_t>(((n * in.C + ic) * in.X + ox / sx) * in.Y + oy / sy));
        }
}

/// bilinear upsample from PyTorch's rule (align_corners=False), not from the
/// nest: output o of an axis scaled by s samples the input at (o + ½)/s − ½,
/// clamped at 0, between x0 = its floor and x1 = min(x0 + 1, X − 1) with
/// weights 1 − λ and λ; in units of 1/(2s) the source is 2o + 1 − s. Taps
/// at one word are one term (their weights summed).
struct AxisTaps {
  int64_t at[2], weight[2];
  int count;
};
AxisTaps bilinearTaps(int64_t o, int64_t s, int64_t extent) {
  const int64_t source = std::max<int64_t>(0, 2 * o + 1 - s);
  const int64_t x0 = source / (2 * s), lambda = source - 2 * s * x0, x1 = std::min(x0 + 1, extent - 1);
  if (x1 == x0)
    return {{x0, 0}, {2 * s, 0}, 1};
  return {{x0, x1}, {2 * s - lambda, lambda}, 2};
}
/// Each output word is Σ x·wx·wy / (4·sx·sy) over its distinct source
/// words, each term's product in 32 bits and rounded toward zero, as an
/// average's (docs/simulator.md).
void bilinear(const Network &net, const Layer &l, const std::vector<Word> &x, std::vector<Word> &y) {
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  const int64_t sx = l.resample.x, sy = l.resample.y;
  size_t at = 0;
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t c = 0; c < out.C; ++c)
      for (int64_t ox = 0; ox < out.X; ++ox) {
        const AxisTaps tx = bilinearTaps(ox, sx, in.X);
        for (int64_t oy = 0; oy < out.Y; ++oy, ++at) {
          const AxisTaps ty = bilinearTaps(oy, sy, in.Y);
          Word sum = 0;
          for (int i = 0; i < tx.count; ++i)
            for (int j = 0; j < ty.count; ++j) {
              const Word v = x[static_cast<size_t>(((n * in.C + c) * in.X + tx.at[i]) * in.Y + ty.at[j])];
              sum = add(sum, divide(mul(mul(v, static_cast<Word>(tx.weight[i])), static_cast<Word>(ty.weight[j])),
                                    4 * sx * sy));
            }
          y[at] = sum;
        }
      }
}

Tensor filled(std::vector<int64_t> extent, Word value) {
  const int64_t size = elementCount(extent);
  return {std::move(extent), std::vector<Word>(static_cast<size_t>(size), value)};
}

// ---- the three directions ---------------------------------------------------

Tensor forward(const Network &net, const Layer &l, const TensorStore &store) {
  Tensor out = filled(activationExtent(net, l.ofmShape), 0);
  std::vector<Word> &y = out.data;
  switch (l.type) {
  case LayerType::Conv:
  case LayerType::DwConv:
  case LayerType::FC:
  case LayerType::MatMul: {
    const std::vector<Word> x = readInput(net, l, store);
    const std::vector<Word> &w = readWeights(net, l, store);
    forEachMac(net, l, [&](const Run &r) { macRun(&y[r.o], r.dO, &x[r.i], r.dI, &w[r.w], r.dW, r.count); });
    break;
  }
  case LayerType::ConvTranspose: {
    const std::vector<Word> x = readInput(net, l, store);
    const std::vector<Word> &w = readWeights(net, l, store);
    forEachConvTransposeTap(net, l, [&](size_t o, size_t i, size_t t) { y[o] = add(y[o], mul(x[i], w[t])); });
    break;
  }
  case LayerType::MaxPool: {
    const std::vector<Word> x = readInput(net, l, store);
    std::fill(y.begin(), y.end(), kMinusInfinity);   // the padding leaves it
    forEachTap(net, l, [&](const Run &r) {
      for (int64_t t = 0; t < r.count; ++t)
        y[r.o + t * r.dO] = std::max(y[r.o + t * r.dO], x[r.i + t * r.dI]);
    });
    break;
  }
  case LayerType::AvgPool: {
    const std::vector<Word> x = readInput(net, l, store);
    const Filter w = windowOf(l);
    forEachTap(net, l, [&](const Run &r) {   // the padding contributes 0
      for (int64_t t = 0; t < r.count; ++t)
        y[r.o + t * r.dO] = add(y[r.o + t * r.dO], divide(x[r.i + t * r.dI], w.R * w.S));
    });
    break;
  }
  case LayerType::Add:
  case LayerType::Mul: {
    const bool sum = l.type == LayerType::Add;
    std::fill(y.begin(), y.end(), sum ? 0 : 1);
    // A broadcast operand's word (n, c) serves every x, y of the plane.
    const int64_t plane = l.ofmShape.X * l.ofmShape.Y;
    for (size_t i = 0; i < l.operands.size(); ++i) {
      const std::vector<Word> &x = readOperand(net, store, l.operands[i]);
      const int64_t reuse = static_cast<int>(i) == l.broadcast ? plane : 1;
      for (size_t e = 0; e < y.size(); ++e) {
        const Word v = x[e / static_cast<size_t>(reuse)];
        y[e] = sum ? add(y[e], v) : mul(y[e], v);
      }
    }
    break;
  }
  case LayerType::Concat: out.data = readInput(net, l, store); break;
  case LayerType::Unary:
    out.data = readInput(net, l, store);
    for (Word &v : out.data)
      v = unary(l.unary, v);
    break;
  case LayerType::Softmax:
  case LayerType::LayerNorm:
    out.data = readInput(net, l, store);
    normalizeRows(net, l, out.data);
    break;
  case LayerType::Rope: {
    // Head i's halves rotated by the token's angle (docs/simulator.md): out[c]
    // = (x[c]·cos ∓ x[partner]·sin) / 16, in 32-bit wrapping arithmetic.
    const std::vector<Word> x = readInput(net, l, store);
    const TensorShape &s = l.ofmShape;
    const int64_t d = s.C / l.groups, h2 = d / 2, plane = s.X * s.Y;
    for (int64_t n = 0; n < net.batch; ++n)
      for (int64_t c = 0; c < s.C; ++c) {
        const int64_t j = c % d % h2;
        const bool second = c % d >= h2;
        const int64_t partner = second ? c - h2 : c + h2;
        for (int64_t t = 0; t < s.X; ++t) {
          const int64_t a = ropeAngle(t + l.ropePos, j);
          const Word sin = second ? ropeSin16(a) : -ropeSin16(a);
          for (int64_t yy = 0; yy < s.Y; ++yy) {
            const size_t e = static_cast<size_t>((n * s.C + c) * plane + t * s.Y + yy);
            const size_t p = static_cast<size_t>((n * s.C + partner) * plane + t * s.Y + yy);
            y[e] = add(mul(x[e], ropeCos16(a)), mul(x[p], sin)) / 16;
          }
        }
      }
    break;
  }
  case LayerType::Upsample:
  case LayerType::DepthToSpace: {
    const std::vector<Word> x = readInput(net, l, store);
    if (l.resample.bilinear) {
      bilinear(net, l, x, y);
      break;
    }
    forEachResampled(net, l, [&](size_t o, size_t i) { y[o] = x[i]; });
    break;
  }
  }
  for (const std::string &a : l.activations)
    for (Word &v : out.data)
      v = activate(a, v);
  return out;
}

/// Splits a gradient of the concatenated ifm into its operands' gradients;
/// an operand read twice gets the sum of its two parts.
void splitInputGradient(const Network &net, const Layer &fwd, const std::vector<Word> &dx, TensorStore &out) {
  std::map<std::string, Tensor> grads;
  const std::vector<TensorRef> ops = fwd.ifmOperands();
  for (TensorRef op : ops)
    grads.try_emplace(gradientName(operandName(net, op)), filled(activationExtent(net, operandShape(net, op)), 0));
  const Joining j = joiningOf(net, fwd);
  size_t at = 0;
  for (int64_t o = 0; o < j.outer; ++o)
    for (size_t i = 0; i < ops.size(); ++i) {
      std::vector<Word> &g = grads.at(gradientName(operandName(net, ops[i]))).data;
      for (int64_t e = o * j.block[i]; e < (o + 1) * j.block[i]; ++e, ++at)
        g[static_cast<size_t>(e)] = add(g[static_cast<size_t>(e)], dx[at]);
    }
  for (auto &[name, t] : grads)
    out.set(name, std::move(t));
}

/// dX from dY: the forward relation with the ifm written (docs/simulator.md).
void dataGradient(const Network &net, const Layer &fwd, const TensorStore &store, TensorStore &out) {
  const std::vector<Word> &dy = read(store, gradientName(fwd.name), activationExtent(net, fwd.ofmShape));
  if (fwd.broadcast >= 0) {   // a broadcast mul: Π over what is read, dY · s
    const TensorRef x = fwd.ifmOperands().at(0);
    const std::vector<Word> &s = readOperand(net, store, fwd.operands[static_cast<size_t>(fwd.broadcast)]);
    std::vector<Word> dx(dy.size());
    const size_t plane = static_cast<size_t>(fwd.ofmShape.X * fwd.ofmShape.Y);
    for (size_t e = 0; e < dx.size(); ++e)
      dx[e] = mul(dy[e], s[e / plane]);
    out.set(gradientName(operandName(net, x)), {activationExtent(net, operandShape(net, x)), std::move(dx)});
    return;
  }
  if (fwd.type == LayerType::Mul || fwd.opsPerElement() > 0) {
    // Π over what is read, or a softmax's, layernorm's or unary function's relation
    // read backward: dY alone, to every operand (docs/simulator.md, "Training").
    for (TensorRef op : fwd.operands)
      out.set(gradientName(operandName(net, op)), {activationExtent(net, operandShape(net, op)), dy});
    return;
  }
  std::vector<Word> dx(static_cast<size_t>(net.batch * fwd.ifmShape.size()), 0);
  switch (fwd.type) {
  case LayerType::Conv:
  case LayerType::DwConv:
  case LayerType::FC:
  case LayerType::MatMul: {
    const std::vector<Word> &w = readWeights(net, fwd, store);
    forEachMac(net, fwd, [&](const Run &r) { macRun(&dx[r.i], r.dI, &dy[r.o], r.dO, &w[r.w], r.dW, r.count); });
    break;
  }
  case LayerType::MaxPool:
    std::fill(dx.begin(), dx.end(), kMinusInfinity);
    forEachTap(net, fwd, [&](const Run &r) {
      for (int64_t t = 0; t < r.count; ++t)
        dx[r.i + t * r.dI] = std::max(dx[r.i + t * r.dI], dy[r.o + t * r.dO]);
    });
    break;
  case LayerType::AvgPool: {
    const Filter w = windowOf(fwd);
    forEachTap(net, fwd, [&](const Run &r) {
      for (int64_t t = 0; t < r.count; ++t)
        dx[r.i + t * r.dI] = add(dx[r.i + t * r.dI], divide(dy[r.o + t * r.dO], w.R * w.S));
    });
    break;
  }
  case LayerType::Upsample:
  case LayerType::DepthToSpace:
    // Every output word's dY back to the input word it copied: a sum over
    // the phases (upsample), a permutation (depth_to_space).
    forEachResampled(net, fwd, [&](size_t o, size_t i) { dx[i] = add(dx[i], dy[o]); });
    break;
  default: DFLC_UNREACHABLE(std::string("no data gradient for a ") + fwd.kindName());
  }
  splitInputGradient(net, fwd, dx, out);
}

/// A broadcast operand's gradient: the sum over X and Y of dY (add: dY is
/// routed to s, which every x, y read) or of dY · x (mul).
Tensor broadcastGradient(const Network &net, const Layer &fwd, const std::vector<Word> &dy,
                         const std::vector<Word> &x) {
  const TensorRef s = fwd.operands[static_cast<size_t>(fwd.broadcast)];
  Tensor ds = filled(activationExtent(net, operandShape(net, s)), 0);
  const size_t plane = static_cast<size_t>(fwd.ofmShape.X * fwd.ofmShape.Y);
  for (size_t e = 0; e < dy.size(); ++e)
    ds.data[e / plane] = add(ds.data[e / plane], fwd.type == LayerType::Add ? dy[e] : mul(dy[e], x[e]));
  return ds;
}

/// dW from X and dY: the forward relation with the wgt written.
void weightGradient(const Network &net, const Layer &fwd, const TensorStore &store, TensorStore &out) {
  const std::vector<Word> &dy = read(store, gradientName(fwd.name), activationExtent(net, fwd.ofmShape));
  const std::vector<Word> x = readInput(net, fwd, store);
  if (fwd.broadcast >= 0) {
    const std::string s = operandName(net, fwd.operands[static_cast<size_t>(fwd.broadcast)]);
    out.set(gradientName(s), broadcastGradient(net, fwd, dy, x));
    return;
  }
  const bool matmul = fwd.type == LayerType::MatMul;
  Tensor dw = filled(matmul ? activationExtent(net, operandShape(net, fwd.operands[1])) : weightExtent(fwd), 0);
  std::vector<Word> &g = dw.data;
  forEachMac(net, fwd, [&](const Run &r) { macRun(&g[r.w], r.dW, &x[r.i], r.dI, &dy[r.o], r.dO, r.count); });
  out.set(matmul ? gradientName(operandName(net, fwd.operands[1])) : gradientName(weightName(fwd)), std::move(dw));
}

/// A conv_transpose's gradients, the scatter read backward: dX[i] += dY[o]·w,
/// dW += x[i]·dY[o] over the taps that land (docs/simulator.md, "Training").
void convTransposeGradient(const Network &net, const Layer &fwd, TensorRole output, const TensorStore &store,
                           TensorStore &out) {
  const std::vector<Word> &dy = read(store, gradientName(fwd.name), activationExtent(net, fwd.ofmShape));
  const std::vector<Word> x = readInput(net, fwd, store);
  const std::vector<Word> &w = readWeights(net, fwd, store);
  const TensorRef in = fwd.operands[0];
  Tensor g = filled(output == TensorRole::Wgt ? weightExtent(fwd) : activationExtent(net, operandShape(net, in)), 0);
  std::vector<Word> &d = g.data;
  if (output == TensorRole::Wgt)
    forEachConvTransposeTap(net, fwd, [&](size_t o, size_t i, size_t t) { d[t] = add(d[t], mul(x[i], dy[o])); });
  else
    forEachConvTransposeTap(net, fwd, [&](size_t o, size_t i, size_t t) { d[i] = add(d[i], mul(dy[o], w[t])); });
  out.set(output == TensorRole::Wgt ? gradientName(weightName(fwd)) : gradientName(operandName(net, in)), std::move(g));
}

Word clamp(Word x, Word lo, Word hi) { return std::min(std::max(x, lo), hi); }

} // namespace

Word activate(const std::string &a, Word x) {
  // Fixed point with 4 fraction bits: 16 stands for 1.0 (docs/simulator.md).
  if (a == "identity")
    return x;
  if (a == "relu")
    return std::max(x, 0);
  if (a == "relu6")
    return clamp(x, 0, 6 * 16);
  if (a == "hardswish") {   // x·relu6(x + 3)/6 (MobileNetV3), written so that no product overflows
    if (x >= 48)
      return x;
    if (x <= -48)
      return 0;
    return x * (x + 48) / 96;
  }
  if (a == "sigmoid")   // hard sigmoid: 16·clamp(t/4 + 1/2, 0, 1) at t = x/16
    return clamp(x / 4 + 8, 0, 16);
  if (a == "tanh")   // hard tanh: 16·clamp(t, -1, 1)
    return clamp(x, -16, 16);
  if (a == "batchnorm")   // the inference affine map with fixed γ = 1/2, β = 1
    return x / 2 + 1;
  DFLC_UNREACHABLE("activation '" + a + "'");
}

Word unary(UnaryFn f, Word x) {
  switch (f) {
  case UnaryFn::Sigmoid: return activate("sigmoid", x);   // the fused sigmoid's form: one function
  case UnaryFn::Silu:   // x times the hard sigmoid: x from 2.0 up and 0 from −2.0 down, so no product overflows
    if (x >= 32)
      return x;
    if (x <= -32)
      return 0;
    return x * activate("sigmoid", x) / 16;
  case UnaryFn::Gelu:   // x times the hard sigmoid of 1.75·x (σ(1.702·x)): steeper, so its limits are ±19
    if (x >= 19)
      return x;
    if (x <= -19)
      return 0;
    return x * (7 * x / 16 + 8) / 16;
  }
  DFLC_UNREACHABLE("UnaryFn " + std::to_string(static_cast<int>(f)));
}

TensorStore referenceOutputs(const Network &net, int layer, const TensorStore &store) {
  DFLC_CHECK(layer >= 0 && static_cast<size_t>(layer) < net.layers.size()) << "layer " << layer;
  const Layer &l = net.layers[static_cast<size_t>(layer)];
  const Layer &fwd = forwardLayer(net, l);
  TensorStore out;
  if (!l.forwardOf.empty() && fwd.type == LayerType::ConvTranspose) {
    convTransposeGradient(net, fwd, l.output, store, out);
    return out;
  }
  switch (l.forwardOf.empty() ? TensorRole::Ofm : l.output) {   // a conv_transpose writes ifm forward
  case TensorRole::Ofm: out.set(l.name, forward(net, l, store)); break;
  case TensorRole::Ifm: dataGradient(net, fwd, store, out); break;
  case TensorRole::Wgt: weightGradient(net, fwd, store, out); break;
  }
  return out;
}

std::vector<Word> referenceLayer(const Network &net, int layer, const TensorStore &store) {
  TensorStore out = referenceOutputs(net, layer, store);
  DFLC_CHECK(out.tensors().size() == 1) << "layer '" << net.layers[static_cast<size_t>(layer)].name << "' writes "
                                        << out.tensors().size() << " tensors: use referenceOutputs";
  return out.tensors().begin()->second.data;
}

void runReference(const Network &net, TensorStore &store) {
  for (size_t i = 0; i < net.layers.size(); ++i) {
    TensorStore out = referenceOutputs(net, static_cast<int>(i), store);
    for (const auto &[name, t] : out.tensors())
      store.set(name, t);
  }
}

} // namespace dfl::sim
