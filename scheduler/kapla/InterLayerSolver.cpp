#include "scheduler/kapla/InterLayerSolver.h"
#include "scheduler/analysis/Floors.h"

#include "model/Geometry.h"
#include "scheduler/analysis/Instances.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "scheduler/analysis/StepBoxes.h"
#include "scheduler/kapla/Parallel.h"
#include "support/Check.h"
#include "support/Format.h"
#include "support/IntMath.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <map>

namespace dfl {
namespace {

using Clock = std::chrono::steady_clock;

/// Adds the counts of `from` (one segment's, solved on some thread) to `to`.
void addStats(InterLayerStats &to, const InterLayerStats &from) {
  for (auto [t, f] : {std::pair{&to.candidates, from.candidates}, {&to.prunedInvalid, from.prunedInvalid},
                      {&to.prunedBuffer, from.prunedBuffer}, {&to.prunedPareto, from.prunedPareto},
                      {&to.prunedBound, from.prunedBound}, {&to.skippedByEstimate, from.skippedByEstimate},
                      {&to.chains, from.chains}, {&to.segmentsSolved, from.segmentsSolved},
                      {&to.temporalReserved, from.temporalReserved}, {&to.reserveSolves, from.reserveSolves},
                      {&to.chunkSolves, from.chunkSolves}, {&to.pieceSolves, from.pieceSolves},
                      {&to.splitsTried, from.splitsTried}, {&to.intra.candidates, from.intra.candidates},
                      {&to.intra.rejected, from.intra.rejected}, {&to.intra.prunedByBound, from.intra.prunedByBound},
                      {&to.intra.enumerated, from.intra.enumerated}})
    *t += f;
  to.intra.capped |= from.intra.capped;
  to.intra.limited |= from.intra.limited;
}

} // namespace

template <class T>
InterLayerSolver::Once<T> &InterLayerSolver::slotOf(std::map<std::string, Once<T>> &memo, const std::string &key) {
  std::lock_guard lock(mutex_);
  return memo.try_emplace(key).first->second;   // a map's nodes stay put
}

const Network &InterLayerSolver::network() const { return networkOf(model_, base_); }

const Hardware &InterLayerSolver::hardware() const { return hardwareOf(model_, base_); }

InterLayerSolver::InterLayerSolver(const Model &model, const Schedule &layerwise, const ScheduleResult &layerwiseResult,
                                   const InterLayerOptions &options)
    : model_(model), base_(layerwise), baseResult_(layerwiseResult), options_(options) {}

std::vector<int64_t> InterLayerSolver::allocateNodes(int first, int last) const {
  const Hardware &hw = hardware();
  std::vector<int> layers;
  for (int l = first; l <= last; ++l)
    layers.push_back(l);
  return allocateNodes(layers, hw.levels[hw.levels.size() - 2].units());
}

std::vector<int64_t> InterLayerSolver::allocateNodes(const std::vector<int> &layers, int64_t units) const {
  const Network &net = network();
  const size_t n = layers.size();
  if (static_cast<int64_t>(n) > units)
    return {};
  // Largest remainder over the nodes left after one each, by MACs (ops if none).
  std::vector<double> work(n);
  double all = 0;
  for (size_t k = 0; k < n; ++k) {
    const Layer &l = net.layers[static_cast<size_t>(layers[k])];
    work[k] = static_cast<double>(std::max<int64_t>(1, l.macs ? l.macs : l.ops));
    all += work[k];
  }
  const int64_t spare = units - static_cast<int64_t>(n);
  std::vector<int64_t> nodes(n, 1);
  std::vector<std::pair<double, size_t>> rest;
  int64_t given = 0;
  for (size_t k = 0; k < n; ++k) {
    double share = static_cast<double>(spare) * work[k] / all;
    auto whole = static_cast<int64_t>(share);
    nodes[k] += whole;
    given += whole;
    rest.push_back({share - static_cast<double>(whole), k});
  }
  std::stable_sort(rest.begin(), rest.end(), [](auto &a, auto &b) { return a.first > b.first; });
  for (size_t k = 0; given < spare && k < rest.size(); ++k, ++given)
    nodes[rest[k].second] += 1;
  return nodes;
}

std::vector<int64_t> InterLayerSolver::batchTiles() const {
  const Network &net = network();
  // Finest (one sample per forwarded chunk), a middle one and the whole batch.
  std::vector<int64_t> tiles;
  for (int64_t t : {int64_t{1}, int64_t{8}, net.batch})
    if (t <= net.batch && net.batch % t == 0 && std::find(tiles.begin(), tiles.end(), t) == tiles.end())
      tiles.push_back(t);
  return tiles;
}

namespace {

/// Whether layer x's output is forwarded inside first..last to a consumer
/// with a single operand (the channel dim then must match on both ends).
bool forwardsChannels(const Network &net, int x, int last) {
  for (int c = x + 1; c <= last; ++c) {
    const Layer &cons = net.layers[static_cast<size_t>(c)];
    if (cons.operands.size() == 1 && !cons.operands[0].isInput && cons.operands[0].index == x)
      return true;
  }
  return false;
}

/// Whether layer x's single operand is forwarded from inside first..x-1.
bool receivesChannels(const Network &net, int first, int x) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  return l.operands.size() == 1 && !l.operands[0].isInput && l.operands[0].index >= first && l.operands[0].index < x;
}

/// The softmax inside m..last over each head's keys of `m`, an attention's
/// score matmul (heads > 1); -1 if `m` is not one.
int attentionSoftmax(const Network &net, int m, int last) {
  const Layer &s = net.layers[static_cast<size_t>(m)];
  if (s.type != LayerType::MatMul || s.groups < 2 || s.transposeB)
    return -1;
  for (int c = m + 1; c <= last; ++c) {
    const Layer &p = net.layers[static_cast<size_t>(c)];
    if (p.type == LayerType::Softmax && p.normGroups == s.groups && p.operands.size() == 1 &&
        !p.operands[0].isInput && p.operands[0].index == m)
      return c;
  }
  return -1;
}

/// The score matmul of the fused attention (FLAT) layer x is part of inside
/// first..last, or -1: the scores, their softmax, and a matmul with the same
/// heads taking the probabilities as its first operand (transpose_b) — or,
/// the segment ending before it, the scores and their softmax alone (whose
/// channels, heads times keys, no K = C tile matches), or, beginning after
/// the scores, the softmax and the output matmul.
int attentionOf(const Network &net, int first, int last, int x) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  auto producer = [&](const Layer &c) { return c.operands.empty() || c.operands[0].isInput ? -1 : c.operands[0].index; };
  const int in = producer(l);
  int scores = l.type == LayerType::MatMul && !l.transposeB ? x
               : l.type == LayerType::Softmax               ? in
               : l.type == LayerType::MatMul && in >= 0     ? producer(net.layers[static_cast<size_t>(in)])
                                                            : -1;
  if (scores < 0 || scores > last)
    return -1;
  // The scores may run before the segment (`probs, context`): their shape
  // still sets the softmax's and the output matmul's tiles.
  const int softmax = attentionSoftmax(net, scores, last);
  if (softmax < first)
    return -1;
  const Layer &s = net.layers[static_cast<size_t>(scores)];
  for (int c = softmax + 1; c <= last; ++c) {
    const Layer &o = net.layers[static_cast<size_t>(c)];
    if (o.type == LayerType::MatMul && o.transposeB && o.groups == s.groups && o.kvHeads == s.kvHeads &&
        producer(o) == softmax && (x == scores || x == softmax || x == c))
      return scores;
  }
  return x == scores || x == softmax ? scores : -1;
}

/// How many tiles a channel split of `split` cuts the channels of layer x's
/// forwarded operand into, in a segment first..last: `split`, or per head
/// where its producer runs its heads one after the other (a matmul's heads
/// are its N, its K one head's channels), so that both ends step alike. A
/// fused attention's layers have tiles of their own (forcedTiles).
int64_t channelChunks(const Network &net, int first, int last, int x, int64_t split) {
  const Layer &p = net.layers[static_cast<size_t>(net.layers[static_cast<size_t>(x)].operands[0].index)];
  const bool heads = p.type == LayerType::MatMul && p.groups > 1 && attentionOf(net, first, last, x) < 0;
  return heads ? split * p.groups : split;
}

/// The dims a fused attention's layer x walks outermost at the nodes,
/// innermost first: its queries inside its head groups (empty: not one).
std::vector<Dim> attentionOrder(const Network &net, int first, int last, int x) {
  if (attentionOf(net, first, last, x) < 0)
    return {};
  return {Dim::Xo, net.layers[static_cast<size_t>(x)].type == LayerType::Softmax ? Dim::C : Dim::N};
}

/// The dim a pointwise segment first..last steps along, or none: no fused
/// attention in it (it has its own query tiles), every layer's output plane
/// the same, each read point by point (no window: R = S = 1, stride 1, no
/// padding). Its rows (Yo), or its tokens (Xo) where the plane is a
/// sequence (Yo = 1), walked outermost in equal steps on every layer make
/// both ends of each forwarded tensor step alike; with whole channels alone
/// a consumer split the plane over its nodes in its own order and its first
/// tile waited for the producer's last step (a matmul into its gelu: E0824
/// with the whole tensor at once).
std::optional<Dim> pointwiseStepDim(const Network &net, int first, int last) {
  const Layer &f = net.layers[static_cast<size_t>(first)];
  const Dim d = at(f.bounds, Dim::Yo) > 1 ? Dim::Yo : Dim::Xo;
  if (at(f.bounds, d) < 2)
    return std::nullopt;
  for (int x = first; x <= last; ++x) {
    const Layer &l = net.layers[static_cast<size_t>(x)];
    if (attentionOf(net, first, last, x) >= 0 || at(l.bounds, Dim::Yo) != at(f.bounds, Dim::Yo) ||
        at(l.bounds, Dim::Xo) != at(f.bounds, Dim::Xo) || at(l.bounds, Dim::R) != 1 || at(l.bounds, Dim::S) != 1 ||
        l.window != Window{})
      return std::nullopt;
  }
  return d;
}

/// Step sizes tried along a dim of `extent`: the divisors below it nearest
/// 1, 4, 16 and 64, distinct.
std::vector<int64_t> stepTiles(int64_t extent) {
  std::vector<int64_t> divisors, out;
  for (int64_t q = 1; q < extent && q <= 64; ++q)
    if (extent % q == 0)
      divisors.push_back(q);
  for (int64_t want : {1, 4, 16, 64}) {
    int64_t best = 0;
    for (int64_t q : divisors)
      if (!best || std::abs(q - want) < std::abs(best - want))
        best = q;
    if (best && std::find(out.begin(), out.end(), best) == out.end())
      out.push_back(best);
  }
  return out;
}

/// The top-level tiles a layer of a spatial segment must have (docs/directives.md
/// §9, E0814): the batch tile everywhere; on both ends of a tensor forwarded
/// to a single-operand consumer the channel dim cut into `split` equal tiles
/// (1: whole), so producer `K` = consumer `C`. In a fused attention (FLAT)
/// each tile holds whole rows of one sample's K/V head group: the score and
/// output matmuls one K/V head (N = 1; its query heads, Yo, and keys whole),
/// the softmax that head group's rows (C = its query heads' keys); each
/// layer `queryTile` queries (Xo) a step, so that the three step alike. In a
/// pointwise segment every layer `queryTile` rows or tokens a step
/// (pointwiseStepDim).
DimVector forcedTiles(const Network &net, int first, int last, int x, int64_t batchTile, int64_t split,
                      int64_t queryTile = 0) {
  DimVector t{};
  at(t, Dim::N) = batchTile;
  const Layer &layer = net.layers[static_cast<size_t>(x)];
  if (int scores = attentionOf(net, first, last, x); scores >= 0) {
    const Layer &s = net.layers[static_cast<size_t>(scores)];
    at(t, Dim::Xo) = queryTile;
    if (layer.type == LayerType::Softmax) {
      at(t, Dim::C) = at(layer.bounds, Dim::C) / s.kvHeads;
    } else {
      at(t, Dim::N) = 1;
      at(t, Dim::Yo) = at(layer.bounds, Dim::Yo);
      at(t, layer.transposeB ? Dim::C : Dim::K) = at(layer.bounds, layer.transposeB ? Dim::C : Dim::K);
    }
    return t;
  }
  if (queryTile)   // a pointwise segment's rows or tokens a step
    if (std::optional<Dim> d = pointwiseStepDim(net, first, last))
      at(t, *d) = queryTile;
  if (forwardsChannels(net, x, last)) {
    Dim d = canonicalDim(Dim::K, layer.channelWise());
    at(t, d) = at(layer.bounds, d) / split;
  }
  if (receivesChannels(net, first, x))
    at(t, Dim::C) = at(layer.bounds, Dim::C) / channelChunks(net, first, last, x, split);
  return t;
}

/// A fused attention's layer x with `nodes` nodes: its region steps
/// (forcedTiles) cut into per-node tiles `tile` stacked `stack` times, over
/// its keys (a row's part per node; a softmax's rows whole on each), its
/// head's channels, its group's query heads, then its queries, as far as
/// the nodes go: at most two stacks, one along the mesh's rows and one along
/// its columns (E0803).
/// False if x is not one.
bool attentionTiles(const Network &net, const Level &mesh, const SpatialSegment &s, int x, int64_t nodes,
                    DimVector &tile, DimVector &stack) {
  const int scores = attentionOf(net, s.first, s.last, x);
  if (scores < 0)
    return false;
  const Layer &l = net.layers[static_cast<size_t>(x)];
  tile = forcedTiles(net, s.first, s.last, x, s.batchTile, s.channelSplit, s.queryTile);
  stack = {};
  for (size_t d = 0; d < kNumDims; ++d)
    if (tile[d])
      stack[d] = 1;
  const bool softmax = l.type == LayerType::Softmax;
  const int64_t keys = at(net.layers[static_cast<size_t>(scores)].bounds, Dim::K);
  std::vector<std::pair<Dim, int64_t>> order;   // dim, the unit its tile stays a multiple of
  if (softmax)
    order = {{Dim::C, keys}, {Dim::Xo, 1}};
  else {
    // The head's channels (a K/V head's other dim) whole on the region too:
    // its K/V tile then stays on chip for every query tile (FLAT's reuse).
    const Dim channels = l.transposeB ? Dim::K : Dim::C;
    at(tile, channels) = at(l.bounds, channels);
    at(stack, channels) = 1;
    order = {{l.transposeB ? Dim::C : Dim::K, 1}, {channels, 1}, {Dim::Yo, 1}, {Dim::Xo, 1}};
  }
  int64_t left = std::max<int64_t>(1, nodes);
  std::vector<int64_t> sides{std::max(mesh.rows, mesh.cols), std::min(mesh.rows, mesh.cols)};
  for (auto [d, unit] : order) {
    const int64_t parts = at(tile, d) / unit;
    if (parts < 1 || sides.empty())
      continue;
    const int64_t most = std::min({left, parts, sides.front()});
    int64_t r = most;
    while (parts % r)
      --r;
    if (2 * r <= most) {
      // Few divisors (a decode step's keys, 1,024 cached and the new one:
      // 1,025 = 5^2 x 41): the last unit's tile is partial rather than the
      // layer on a fraction of the nodes, each holding too much.
      r = ceilDiv(parts, ceilDiv(parts, most));
      at(tile, d) = ceilDiv(parts, most) * unit;
    } else {
      at(tile, d) /= r;
    }
    at(stack, d) = r;
    left /= r;
    if (r > 1)
      sides.erase(sides.begin());
  }
  return true;
}

/// Bytes one node of layer x holds at least with this scheme: its top-level
/// tiles with the forced (granularity) dims at their size and every other dim
/// at 1. Every schedule's tiles contain these.
int64_t minTileBytes(const Network &net, const Hardware &hw, const SpatialSegment &s, int x) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  DimVector t = forcedTiles(net, s.first, s.last, x, s.batchTile, s.channelSplit, s.queryTile), stack{};
  attentionTiles(net, hw.levels[hw.levels.size() - 2], s, x, s.nodes[static_cast<size_t>(x - s.first)], t, stack);
  for (int64_t &v : t)
    v = std::max<int64_t>(1, v);
  int64_t bytes = 0;
  for (TensorRole r : l.roles())
    bytes += hw.bytesOf(tileWords(r, t, l.channelWise()), hw.heldBits(r, l.output));
  return bytes;
}

/// A fused attention's score matmul whose node tiles, its head's channels
/// whole on the region (FLAT's reuse of the K/V tile across query tiles),
/// do not fit: its channels free instead, walked at the nodes as the solver
/// picks. They are what the matmul reduces, never forwarded, so the scores
/// still step a head's keys at a time. False (`o` unchanged) otherwise.
bool relaxAttentionChannels(const Network &net, const SpatialSegment &s, int x, IntraLayerOptions &o) {
  if (attentionOf(net, s.first, s.last, x) != x || !at(o.fixedTopTile, Dim::C))
    return false;
  at(o.fixedTopTile, Dim::C) = 0;
  at(o.fixedTopStack, Dim::C) = 0;
  return true;
}

/// What a scheme forces on a layer's node level, for a failure's text:
/// "13 of 16 GBUF units, each a tile of C=16, K=17 (C stacked 2, K 4)".
std::string forcedText(const Hardware &hw, const IntraLayerOptions &o) {
  const Level &top = hw.levels[hw.levels.size() - 2];
  std::vector<std::string> tiles, stacks;
  for (size_t d = 0; d < kNumDims; ++d) {
    if (!o.fixedTopTile[d])
      continue;
    const std::string name = dimName(static_cast<Dim>(d));
    tiles.push_back(name + "=" + std::to_string(o.fixedTopTile[d]));
    if (o.fixedTopStack[d] > 1)
      stacks.push_back(name + " " + std::to_string(o.fixedTopStack[d]));
  }
  std::string text = std::to_string(o.maxNodes ? o.maxNodes : top.units()) + " of " + std::to_string(top.units()) +
                     " " + top.name + " units";
  if (!tiles.empty())
    text += ", each a tile of " + joinList(tiles, ", ", ", ");
  if (!stacks.empty())
    text += " (stacked: " + joinList(stacks, ", ", ", ") + ")";
  return text;
}

} // namespace

std::string shapeKey(const Layer &l) {
  std::string k = std::to_string(static_cast<int>(l.type)) + ":" + std::to_string(static_cast<int>(l.output)) + ":" +
                  std::to_string(l.operands.size()) + ":" + (l.forwardOf.empty() ? "f" : "b");
  for (int64_t v : l.bounds)
    k += "," + std::to_string(v);
  const WindowAxis &x = l.window.x, &y = l.window.y;
  for (int64_t v : {l.groups, l.kvHeads, x.stride, x.dilation, x.padBegin, x.padEnd, y.stride, y.dilation, y.padBegin, y.padEnd,
                    int64_t{l.ceilMode}, int64_t{l.transposeB}, l.ifmShape.C,
                    l.ifmShape.X, l.ifmShape.Y, l.ofmShape.C, l.ofmShape.X, l.ofmShape.Y, l.wgtSize, l.macs, l.ops,
                    static_cast<int64_t>(l.normAxis), l.normGroups, int64_t{l.normPlane}, int64_t{l.rms},
                    static_cast<int64_t>(l.concatAxis), int64_t{l.causal}, l.resample.x, l.resample.y,
                    int64_t{l.resample.dcr}, int64_t{l.resample.bilinear}, l.ropePos})
    k += "," + std::to_string(v);
  for (const std::string &a : l.activations)
    k += "," + a;
  return k + "," + std::string(l.kindName());   // a unary layer's function
}

std::vector<size_t> paretoFront(const std::vector<std::vector<double>> &points) {
  auto dominates = [](const std::vector<double> &a, const std::vector<double> &b) {
    bool less = false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] > b[i])
        return false;
      less |= a[i] < b[i];
    }
    return less;
  };
  std::vector<size_t> front;
  for (size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j)
      dominated = j != i && dominates(points[j], points[i]);
    if (!dominated)
      front.push_back(i);
  }
  return front;
}

std::vector<double> SchemeEstimate::paretoVector() const {
  std::vector<double> v = accesses;
  v.push_back(bufferBytes);
  // A larger query tile moves the same words in fewer, larger steps: more
  // buffer, but more work per node per step (the PE array fuller, less
  // static energy), which the counts do not see. Without this dimension the
  // smallest tile dominated every other (145 against 126 mJ on Llama 3's
  // prefill attention, tests/lit/compile/flat-attention.test).
  v.push_back(steps);
  return v;
}

std::vector<int64_t> InterLayerSolver::channelSplits(int first, int last) const {
  const Network &net = network();
  // Whole channels, halves and quarters: finer forwarding shrinks the tiles
  // a node must hold (and the pipeline's fill) at the cost of refetching the
  // other operand per channel chunk; beyond quarters the chunks get too thin
  // for the PE arrays' channel stacking.
  std::vector<int64_t> splits{1};
  bool any = false;
  for (int x = first; x <= last; ++x)
    any |= forwardsChannels(net, x, last) && attentionOf(net, first, last, x) < 0;
  if (!any)
    return splits;
  for (int64_t s : {int64_t{2}, int64_t{4}}) {
    bool divides = true;
    for (int x = first; x <= last; ++x) {
      const Layer &l = net.layers[static_cast<size_t>(x)];
      Dim d = canonicalDim(Dim::K, l.channelWise());
      if (forwardsChannels(net, x, last) && at(l.bounds, d) % s)
        divides = false;
      if (receivesChannels(net, first, x) && at(l.bounds, Dim::C) % channelChunks(net, first, last, x, s))
        divides = false;
    }
    if (divides)
      splits.push_back(s);
  }
  return splits;
}

std::vector<SpatialSegment> InterLayerSolver::schemes(int first, int last, const std::vector<int64_t> &nodes) const {
  std::vector<SpatialSegment> out;
  // A fused attention forwards one sample at a time (its N tiles are a
  // sample's K/V heads).
  int scores = -1;
  for (int x = first; x <= last && scores < 0; ++x)
    scores = attentionOf(network(), first, last, x);
  const bool attention = scores >= 0;
  // Its query tiles: a few sizes, each the same on its three layers (their
  // steps then meet one to one, and the buffers hold a tile or two).
  std::vector<int64_t> queryTiles{0};
  if (attention) {
    queryTiles.clear();
    const int64_t queries = network().layers[static_cast<size_t>(scores)].ofmShape.X;
    for (int64_t q : {int64_t{1}, int64_t{4}, int64_t{16}, int64_t{64}})
      if (q < queries && queries % q == 0)
        queryTiles.push_back(q);
    if (queryTiles.empty())
      queryTiles.push_back(queries);
  } else if (std::optional<Dim> d = pointwiseStepDim(network(), first, last)) {
    for (int64_t q : stepTiles(at(network().layers[static_cast<size_t>(first)].bounds, *d)))
      queryTiles.push_back(q);
  }
  for (int64_t t : batchTiles())
    for (int64_t c : channelSplits(first, last))
      for (int64_t q : queryTiles)
        if (!attention || t == 1)
          out.push_back({first, last, nodes, t, c, q});
  return out;
}

bool InterLayerSolver::mayFit(const SpatialSegment &s) const {
  const Network &net = network();
  const Hardware &hw = hardware();
  const Level &nodes = hw.levels[hw.levels.size() - 2];
  int64_t used = 0;
  for (int64_t r : s.nodes)
    used += r;
  if (s.nodes.size() != static_cast<size_t>(s.last - s.first + 1) || used > nodes.units())
    return false;
  if (!nodes.capacityBytes)
    return true;
  // Tiles only grow from the smallest ones, so if these do not fit, none do.
  for (int x = s.first; x <= s.last; ++x)
    if (minTileBytes(net, hw, s, x) > *nodes.capacityBytes)
      return false;
  return true;
}

double InterLayerSolver::computePj(int first, int last) const {
  double e = 0;
  for (int x = first; x <= last; ++x)
    e += computeFloorPj(network(), x, hardware());
  return e;
}

double InterLayerSolver::lowerBoundPj(int first, int last) const {
  const Level &dram = hardware().levels.back();
  double e = computePj(first, last);
  for (int x = first; x <= last; ++x) {
    const DramFloor f = dramFloor(network(), x, hardware(), first, last);
    e += (f.wgtReads + f.ifmReads) * dram.readEnergyPj + f.outputWrites * dram.writeEnergyPj;
  }
  return e;
}

SchemeEstimate InterLayerSolver::estimate(const SpatialSegment &s) const {
  const Network &net = network();
  const Hardware &hw = hardware();
  const size_t nl = hw.levels.size();
  SchemeEstimate out;
  out.energyPj = computePj(s.first, s.last);
  if (nl < 2)
    return out;
  if (s.queryTile) {
    if (std::optional<Dim> d = pointwiseStepDim(net, s.first, s.last))
      out.steps = static_cast<double>(at(net.layers[static_cast<size_t>(s.first)].bounds, *d) / s.queryTile);
    for (int x = s.first; x <= s.last; ++x)
      if (int scores = attentionOf(net, s.first, s.last, x); scores >= 0)
        out.steps = static_cast<double>(net.layers[static_cast<size_t>(scores)].ofmShape.X / s.queryTile);
  }
  const Level &top = hw.levels[nl - 2];
  const double wb = static_cast<double>(hw.wordBytes());   // per `word`: WordScale gives each role's share
  const Level &dram = hw.levels[nl - 1];
  // The node level's energies per role: its buffer's, DRAM's where the role bypasses it.
  auto topBuffer = [&](TensorRole r) -> const Buffer & {
    const int b = top.bufferOf(r);
    return b < 0 ? dram.buffers.front() : top.buffers[static_cast<size_t>(b)];
  };
  auto topRead = [&](TensorRole r) { return topBuffer(r).readEnergyPj; };
  auto topWrite = [&](TensorRole r) { return topBuffer(r).writeEnergyPj; };
  const double batch = static_cast<double>(net.batch);
  // Chunks along the batch: every layer walks the batch in node tiles of N = t.
  const double chunksN = batch / static_cast<double>(s.batchTile);
  auto inSegment = [&](int l) { return l >= s.first && l <= s.last; };
  for (int x = s.first; x <= s.last; ++x) {
    const Layer &l = net.layers[static_cast<size_t>(x)];
    const double bytes = static_cast<double>(minTileBytes(net, hw, s, x));
    const double nodes = static_cast<double>(s.nodes[static_cast<size_t>(x - s.first)]);
    const WordScale ws = hw.wordScale(l.output);
    const size_t wi = static_cast<size_t>(TensorRole::Wgt), ii = static_cast<size_t>(TensorRole::Ifm),
                 oi = static_cast<size_t>(TensorRole::Ofm);
    out.bufferBytes = std::max(out.bufferBytes, bytes);
    // What the region holds besides the smallest tiles of one chunk, in
    // bytes; a tensor (or a chunk of one) that fits there stays, otherwise it
    // is refetched.
    const double spare = top.capacityBytes ? nodes * (static_cast<double>(*top.capacityBytes) - bytes)
                                           : std::numeric_limits<double>::infinity();
    // Channel chunks: an output cut into K chunks re-reads its input per
    // chunk; an input cut into C chunks accumulates the output over them.
    const double splitK = forwardsChannels(net, x, s.last) ? static_cast<double>(s.channelSplit) : 1;
    const double splitC =
        receivesChannels(net, s.first, x) ? static_cast<double>(channelChunks(net, s.first, s.last, x, s.channelSplit)) : 1;
    const double O = static_cast<double>(l.ofmShape.size()) * batch;
    // Operands, from DRAM or forwarded: the ifm's, and a matmul's second or a
    // broadcast operand, which is its per-sample wgt (each word read once).
    double I = 0, Ifwd = 0, Wact = 0, WactFwd = 0;
    for (size_t i = 0; i < l.operands.size(); ++i) {
      const TensorRef &op = l.operands[i];
      double size = static_cast<double>((op.isInput ? net.inputs[static_cast<size_t>(op.index)].shape
                                                    : net.layers[static_cast<size_t>(op.index)].ofmShape)
                                            .size()) *
                    batch;
      const bool fwd = !op.isInput && inSegment(op.index);
      (l.operandIsWgt(i) ? (fwd ? WactFwd : Wact) : (fwd ? Ifwd : I)) += size;
    }
    // Weights: once if they stay across the batch chunks, else once per chunk;
    // the nodes stream them to the PEs once per chunk.
    const double W = wgtPerSample(l.nest) ? 0 : static_cast<double>(l.wgtSize);
    const double wDram = (W * ws.held[wi] * wb <= spare ? W : W * chunksN) + Wact,
                 wBuf = W * chunksN + Wact + WactFwd;
    // Inputs from DRAM: once if one batch chunk of them stays while the K
    // chunks are produced, else once per K chunk. Forwarded ones: no DRAM.
    const double iDram = I / chunksN * ws.held[ii] * wb <= spare ? I : I * splitK, iBuf = (I + Ifwd) * splitK;
    // Output: partial sums over C chunks stay if one batch chunk of it fits,
    // else they go to DRAM and back; written to DRAM unless forwarded and
    // read by nobody outside the segment.
    const bool written = !net.readUpTo(x, s.last) || net.readOutside(x, inSegment);
    const double spill = O / chunksN * ws.held[oi] * wb <= spare ? 0 : 2 * O * (splitC - 1);
    const double oDram = (written ? O : 0) + spill, oBuf = O * (2 * splitC - 1);
    for (double a : {wDram, iDram, oDram, wBuf, iBuf, oBuf})
      out.accesses.push_back(a);
    out.energyPj += (wDram * ws.data[wi] + iDram * ws.data[ii]) * dram.readEnergyPj +
                    ((oDram - spill) * ws.data[oi] + spill * ws.held[oi]) * dram.writeEnergyPj +
                    wBuf * ws.held[wi] * topRead(TensorRole::Wgt) + iBuf * ws.held[ii] * topRead(TensorRole::Ifm) +
                    oBuf * ws.held[oi] * topWrite(l.output);
  }
  return out;
}

bool inFusedAttention(const Network &net, int first, int last, int x) { return attentionOf(net, first, last, x) >= 0; }

void segmentNodeConstraints(const Network &net, const Hardware &hw, const SpatialSegment &s, int x, IntraLayerOptions &o) {
  o.fixedTopTile = forcedTiles(net, s.first, s.last, x, s.batchTile, s.channelSplit, s.queryTile);
  o.topOutermost = attentionOrder(net, s.first, s.last, x);
  if (s.queryTile && o.topOutermost.empty())
    if (std::optional<Dim> d = pointwiseStepDim(net, s.first, s.last))
      o.topOutermost = {*d};   // a pointwise segment's steps: every other dim's walk inside each
  // The granularity's dims are not stacked over the region: every layer
  // then walks them in chunks of exactly the forced tile, so both ends of a
  // forwarded tensor have the same steps (E0814 compares them). Stacked,
  // each layer's solver picks its own factor and the steps rarely match.
  for (size_t d = 0; d < kNumDims; ++d)
    if (o.fixedTopTile[d])
      o.fixedTopStack[d] = 1;
  attentionTiles(net, hw.levels[hw.levels.size() - 2], s, x, o.maxNodes, o.fixedTopTile, o.fixedTopStack);
}

std::optional<std::pair<Schedule, ScheduleResult>> InterLayerSolver::solveSpatial(const SpatialSegment &s,
                                                                                   InterLayerStats &stats) {
  return solveScheme(s, stats, &shortOfBuffer_);
}

std::optional<std::pair<Schedule, ScheduleResult>>
InterLayerSolver::solveScheme(const SpatialSegment &s, InterLayerStats &stats, std::optional<Schedule> *shortOut,
                              std::optional<SolveFailure> *failure) {
  const Network &net = network();
  const Hardware &hw = hardware();
  ++stats.segmentsSolved;
  Schedule sched = base_;
  Segment seg;
  seg.pipelined = true;
  std::optional<ShortConsumerTest> shortTest;
  if (!shortOut)
    shortTest.emplace(net, hw);
  auto refusedShort = [&] {
    ++stats.prunedBuffer;
    return std::nullopt;
  };
  for (int x = s.first; x <= s.last; ++x) {
    IntraLayerOptions o = options_.intra;
    o.maxNodes = s.nodes[static_cast<size_t>(x - s.first)];
    o.mayRowSplit = false;   // whole rows in a segment (E0826)
    if (shortTest && shortTest->shortOnAny(x, o.maxNodes))
      return refusedShort();
    segmentNodeConstraints(net, hw, s, x, o);
    // Layers of the same shape under the same constraints get the same
    // schedule (ResNet's and GoogLeNet's repeated blocks): solved once.
    auto solved = [&]() -> Once<SchemeLayer> & {
      std::string key = shapeKey(net.layers[static_cast<size_t>(x)]);
      for (size_t d = 0; d < kNumDims; ++d)
        key += "/" + std::to_string(o.fixedTopTile[d]) + "," + std::to_string(o.fixedTopStack[d]);
      key += "/" + std::to_string(o.maxNodes);
      for (Dim d : o.topOutermost)
        key += "/o" + std::string(dimName(d));
      if (o.search == IntraLayerSearch::Random)
        key += "/" + std::to_string(x);   // its seed depends on the layer
      Once<SchemeLayer> &slot = slotOf(memo_, key);
      std::call_once(slot.made, [&] {
        if (auto sol = solveLayer(net, x, hw, nullptr, o, stats.intra, slot.value.why))
          slot.value.schedule = std::move(sol->schedule);
      });
      return slot;
    };
    Once<SchemeLayer> *solve = &solved();
    if (!solve->value.schedule && relaxAttentionChannels(net, s, x, o))
      solve = &solved();
    Once<SchemeLayer> &slot = *solve;
    if (!slot.value.schedule) {
      if (failure) {
        *failure = slot.value.why;
        (*failure)->forcedBy = "in a pipelined segment of " + net.layers[static_cast<size_t>(s.first)].name + ".." +
                            net.layers[static_cast<size_t>(s.last)].name + ": " + forcedText(hw, o);
      }
      return std::nullopt;   // a value: this region or granularity does not work
    }
    for (LayerScheduleModel &ls : sched.layers)
      if (ls.layer == x) {
        ls = *slot.value.schedule;
        ls.layer = x;
      }
    seg.layers.push_back(x);
    if (shortTest) {
      std::vector<Issue> ignored;   // the analysis below reports them, if it runs
      if (shortTest->add(x, &*slot.value.schedule, analyzeLayer(net, x, hw, &*slot.value.schedule, ignored)))
        return refusedShort();
    }
  }
  sched.segments.push_back(seg);
  // A scheme whose buffers are short (E0824) is never chosen: the check and
  // the simulator would refuse the schedule. Most schemes are (ResNet-50 at
  // batch 64: 193 of 205), most of them for sure before the step tables.
  ScheduleResult r = analyzeSchedule(model_, sched, {.refuseEarly = true});
  auto buffer = [](const Issue &i) { return i.id == diag::err_segment_buffer; };
  if (std::any_of(r.issues.begin(), r.issues.end(), buffer)) {
    ++stats.prunedBuffer;
    if (shortOut && r.complete && std::all_of(r.issues.begin(), r.issues.end(), buffer))
      *shortOut = sched;
  }
  // Nor one whose buffers the check cannot derive (W0831): the simulator
  // derives them with isl and may refuse it (one verdict for what the solver writes).
  auto underivable = [](const Issue &i) { return i.id == diag::warn_segment_buffer_unchecked; };
  if (!r.valid || !r.complete || std::any_of(r.warnings.begin(), r.warnings.end(), underivable))
    return std::nullopt;
  return std::pair{std::move(sched), std::move(r)};
}

std::optional<std::pair<Schedule, ScheduleResult>>
InterLayerSolver::solveSpatialBest(const std::vector<SpatialSegment> &schemes, InterLayerStats &stats) {
  shortOfBuffer_.reset();
  schemeFailure_.reset();
  return bestScheme(schemes, stats, &shortOfBuffer_, &schemeFailure_);
}

std::optional<std::pair<Schedule, ScheduleResult>>
InterLayerSolver::bestScheme(const std::vector<SpatialSegment> &schemes, InterLayerStats &stats,
                             std::optional<Schedule> *shortOut, std::optional<SolveFailure> *failure) {
  // Most promising first; for energy, a scheme whose estimate is not below the
  // segment energy already found is not solved (a heuristic: the estimate is
  // optimistic but not a bound, docs/solver.md).
  std::vector<std::pair<double, const SpatialSegment *>> order;
  for (const SpatialSegment &scheme : schemes)
    order.push_back({estimate(scheme).energyPj, &scheme});
  std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  std::optional<std::pair<Schedule, ScheduleResult>> best;
  double bestValue = std::numeric_limits<double>::infinity(), bestPj = bestValue;
  for (auto [est, scheme] : order) {
    if (best && budgetSpent())
      break;   // the budget is spent and a valid scheme found: the best so far
    if (options_.objective == Objective::Energy && est >= bestPj) {
      ++stats.skippedByEstimate;
      continue;
    }
    auto s = solveScheme(*scheme, stats, shortOut, failure && !*failure ? failure : nullptr);
    if (!s)
      continue;
    double v = objectiveValue(options_.objective, s->second.energyPj, s->second.latencyCycles);
    if (v < bestValue) {
      bestValue = v;
      bestPj = 0;
      for (int l = scheme->first; l <= scheme->last; ++l)
        bestPj += s->second.layers[static_cast<size_t>(l)].energyPj;
      best = std::move(s);
    }
  }
  return best;
}

int64_t InterLayerSolver::reserveLevel(int64_t bytes, int64_t above) const {
  const Hardware &hw = hardware();
  const Level &nodes = hw.levels[hw.levels.size() - 2];
  if (!nodes.capacityBytes || bytes <= 0)
    return 0;
  const int64_t cap = *nodes.capacityBytes, units = nodes.units();
  const int64_t need = (bytes + units - 1) / units;   // per node, the intermediates spread over all nodes
  // Sixteenths of a node's buffer, so that the re-solves are shared by many
  // segments (memoized per layer shape and level); rounding up only leaves
  // more room. Coarser levels cost reuse: with eighths to three quarters
  // ResNet-50 at batch 64 needed 7/8 where 0.77 would do (docs/solver.md).
  for (int64_t k = 1; k < 16; ++k) {
    int64_t level = (cap * k + 15) / 16;
    if (need <= level && level > above)
      return level;
  }
  return 0;
}

const std::optional<IntraLayerSolution> &InterLayerSolver::solveAlone(int x, int64_t reserve, int64_t batchTile,
                                                                      InterLayerStats &stats, const LayerPieces *pieces,
                                                                      const OnChipPricing &onChip) {
  const Layer *shape = pieces ? &pieces->pieces.front() : nullptr;
  const Network &net = network();
  const Hardware &hw = hardware();
  IntraLayerOptions o = options_.intra;
  o.maxNodes = 0;
  o.mayRowSplit = false;   // a temporal segment's layer: whole rows (E0826)
  o.fixedTopTile = {};
  o.fixedTopStack = {};
  o.reservedTopBytes = reserve;
  o.onChip = onChip;
  std::string capped;
  for (Dim d : {Dim::Yo, Dim::Xo}) {   // the dims an instance split cuts
    if (!pieces)
      break;
    int64_t least = at(shape->bounds, d);
    for (const Layer &piece : pieces->pieces)
      least = std::min(least, at(piece.bounds, d));
    if (least < at(shape->bounds, d)) {
      at(o.maxTile, d) = least;
      capped += "/m" + std::string(dimName(d)) + std::to_string(least);
    }
  }
  if (batchTile) {
    // Batch chunks of exactly the tile, walked outermost (docs/directives.md §9).
    at(o.fixedTopTile, Dim::N) = batchTile;
    at(o.fixedTopStack, Dim::N) = 1;
    o.topBatchOutermost = true;
  }
  std::string key = shapeKey(shape ? *shape : net.layers[static_cast<size_t>(x)]) + "/r" + std::to_string(reserve) +
                    "/n" + std::to_string(batchTile) + (onChip.any() ? onChip.key() : "") + capped;
  // The user's block, kept by the re-solve (never with a piece: instances
  // run a written layer as written).
  const LayerScheduleModel *given =
      !shape && static_cast<size_t>(x) < options_.written.size() ? options_.written[static_cast<size_t>(x)] : nullptr;
  if (o.search == IntraLayerSearch::Random || given)
    key += "/" + std::to_string(x);   // its seed, or its written directives, depend on the layer
  Once<std::optional<IntraLayerSolution>> &slot = slotOf(reserveMemo_, key);
  std::call_once(slot.made, [&] {
    SolveFailure why;
    if (shape) {
      // The piece as a network's only layer: the solver reads nothing else.
      ++stats.pieceSolves;
      Network alone;
      alone.name = net.name;
      alone.batch = net.batch;
      alone.layers = {*shape};
      slot.value = solveLayer(alone, 0, hw, nullptr, o, stats.intra, why);
    } else {
      ++(reserve ? stats.reserveSolves : stats.chunkSolves);
      slot.value = solveLayer(net, x, hw, given, o, stats.intra, why);
    }
  });
  return slot.value;   // solved for a layer of this shape: the caller sets its index
}

bool InterLayerSolver::budgetSpent() const { return options_.intra.budget && options_.intra.budget->exhausted(); }

std::vector<int64_t> InterLayerSolver::temporalTiles() const {
  std::vector<int64_t> tiles{network().batch};
  for (int64_t t : batchTiles())
    if (t < network().batch)
      tiles.push_back(t);
  return tiles;
}

const LayerScheduleModel &InterLayerSolver::layerwise(int l) const {
  for (const LayerScheduleModel &ls : base_.layers)
    if (ls.layer == l)
      return ls;
  DFLC_UNREACHABLE("the layer-wise schedule has no layer " + std::to_string(l));
}

std::optional<double> InterLayerSolver::temporalCost(int i, int j, InterLayerStats &stats, bool *reservedOut) {
  const Network &net = network();
  if (!hardware().temporalPipelining)
    return std::nullopt;
  for (int p = i; p <= j; ++p)
    if (!net.layers[p].forwardOf.empty())
      return std::nullopt;   // backward layers read and write their tensors in DRAM
  std::optional<double> best;
  bool reserved = false;
  // The whole batch twice: the layers' own schedules, and the layers
  // solved as the segment prices them (OnChipPricing).
  std::vector<std::pair<int64_t, bool>> variants{{net.batch, false}, {net.batch, true}};
  for (int64_t t : temporalTiles())
    if (t < net.batch)
      variants.emplace_back(t, false);
  for (auto [t, priced] : variants) {
    if (budgetSpent())
      break;
    bool r = false;
    std::vector<LayerScheduleModel> layers;
    std::optional<double> e = temporalVariant(i, j, t, {}, layers, r, stats, priced);
    if (e && (!best || *e < *best)) {
      best = e;
      reserved = r;
      std::lock_guard lock(mutex_);
      temporalLayers_[{i, j}] = std::move(layers);
    }
  }
  stats.temporalReserved += reserved;
  if (reservedOut)
    *reservedOut = reserved;
  return best;
}

std::vector<InterLayerSolver::SplitCounts> InterLayerSolver::splitCounts(int i, int j) const {
  const Network &net = network();
  std::vector<int> layers;
  for (int l = i; l <= j; ++l)
    layers.push_back(l);
  const Layer &exit = net.layers[static_cast<size_t>(j)];
  std::vector<SplitCounts> out;
  for (Dim d : {Dim::Yo, Dim::Xo}) {
    SplitCounts &c = out.emplace_back();
    c.dim = d;
    if (c.refusal = instanceSplitRefusal(net, layers, d); !c.refusal.empty())
      continue;
    const int64_t extent = d == Dim::Yo ? exit.ofmShape.Y : exit.ofmShape.X;
    for (int64_t f = 2; f <= extent; ++f) {
      if (extent % f)
        continue;
      // One derivation of the instances' spans for the refusal and the sizes.
      const std::vector<std::vector<Span>> spans = instanceSpans(net, layers, d, f);
      if (!instanceSpansRefusal(net, layers, spans).empty())
        continue;
      // Every layer but the last is read inside: its output is an intermediate.
      const std::vector<int64_t> words = largestInstanceOutputs(net, layers, d, spans);
      c.counts.push_back({d, f});
      c.kept.push_back(std::accumulate(words.begin(), words.end() - 1, int64_t{0}));
    }
  }
  return out;
}

std::vector<InstanceSplit> InterLayerSolver::splitFor(const std::vector<SplitCounts> &splits, int64_t samples,
                                                      std::string &why) const {
  const Hardware &hw = hardware();
  const Level &nodes = hw.levels[hw.levels.size() - 2];
  // Half the node buffers for the intermediates, half for the layers' tiles
  // (GraphTurbo keeps part of its local buffer for weights likewise).
  const int64_t room = nodes.capacityBytes.value_or(0) * nodes.units() / 2;
  std::vector<InstanceSplit> best;
  for (const SplitCounts &c : splits) {
    if (!c.refusal.empty()) {
      why = c.refusal;
      continue;
    }
    // SplitInfo: the first count whose largest instance's intermediates fit.
    size_t first = 0;
    while (first < c.counts.size() && nodes.capacityBytes &&
           hw.bytesOf(c.kept[first] * samples, hw.dataBits(TensorRole::Ofm)) > room)
      ++first;
    if (first == c.counts.size()) {
      why = "no split along " + std::string(dimName(c.dim)) + " brings its intermediates within half the node buffer";
      continue;
    }
    // Eq. (1): every layer is cut either way, so fewer instances, then the outer dim.
    if (best.empty() || c.counts[first].instances < best.front().instances)
      best.assign(c.counts.begin() + static_cast<std::ptrdiff_t>(first), c.counts.end());
  }
  if (!best.empty())
    why.clear();
  return best;
}

std::optional<double> InterLayerSolver::instancesCost(int i, int j, InstanceSplit &split, std::string &why,
                                                      InterLayerStats &stats) {
  std::optional<double> best;
  why.clear();
  // Every batch tile: ResNet-50 at batch 64 splits segments in chunks of 1,
  // of 8 and of the whole batch (docs/solver.md, "Instances").
  const std::vector<SplitCounts> counts = splitCounts(i, j);
  for (int64_t t : temporalTiles()) {
    std::vector<InstanceSplit> splits = splitFor(counts, std::min(t, network().batch), why);
    // The SplitInfo count and the next: more instances leave the layers more room.
    for (size_t c = 0; c < std::min<size_t>(2, splits.size()) && !budgetSpent(); ++c) {
      ++stats.splitsTried;
      bool r = false;
      std::vector<LayerScheduleModel> layers;
      std::optional<double> e = temporalVariant(i, j, t, splits[c], layers, r, stats);
      if (e && (!best || *e < *best)) {
        best = e;
        split = splits[c];
        std::lock_guard lock(mutex_);
        splitLayers_[{i, j}] = {split, std::move(layers)};
      }
    }
  }
  if (!best && why.empty())
    why = "no split has a valid schedule";
  return best;
}

std::optional<double> InterLayerSolver::temporalVariant(int i, int j, int64_t batchTile, InstanceSplit split,
                                                        std::vector<LayerScheduleModel> &replaced, bool &reserved,
                                                        InterLayerStats &stats, bool priced, std::string *why) {
  auto refuse = [&](std::string text) -> std::optional<double> {
    if (why)
      *why = std::move(text);
    return std::nullopt;
  };
  const Network &net = network();
  const Hardware &hw = hardware();
  const size_t top = hw.levels.size() - 2, n = static_cast<size_t>(j - i + 1);
  const bool whole = batchTile >= net.batch;
  const bool pieces = split.instances > 1;
  // A layer the user wrote directives for is re-solved only around them
  // (InterLayerOptions::written), and not in pieces; else it keeps its
  // layer-wise schedule.
  auto fixed = [&](int l) {
    const size_t u = static_cast<size_t>(l);
    return u < options_.fixedLayers.size() && options_.fixedLayers[u] &&
           (pieces || u >= options_.written.size() || !options_.written[u]);
  };
  // Per layer, the schedule it runs with in the segment and its result: its
  // own for the whole batch, else solved to walk the batch in chunks (a
  // fixed layer's directives as written: the analysis then says whether they
  // walk it so).
  // Split into instances, each layer runs as its pieces: solved on the
  // largest, its result the sum over all (scheduler/analysis/Instances.h).
  std::vector<int> layers(n);
  std::vector<LayerPieces> piecesOf(pieces ? n : 0);
  std::vector<LayerResult> summed(n);
  std::vector<const LayerScheduleModel *> scheds(n);
  std::vector<const LayerResult *> res(n);
  std::vector<int64_t> reserveOf(n, 0);
  for (size_t k = 0; k < n; ++k)
    layers[k] = i + static_cast<int>(k);
  // Layer k with these directives: false if some piece breaks them.
  auto runWith = [&](size_t k, const LayerScheduleModel &ls, const LayerResult &alone) {
    scheds[k] = &ls;
    res[k] = &alone;
    if (!pieces)
      return true;
    std::vector<Issue> issues;
    summed[k] = analyzePieces(net, layers[k], piecesOf[k], hw, &ls, issues);
    res[k] = &summed[k];
    if (why && !issues.empty())
      *why = "'" + net.layers[static_cast<size_t>(layers[k])].name + "' on its pieces: " +
             formatDiagnostic(diagInfo(issues.front().id).format, issues.front().args);
    return issues.empty() && summed[k].complete;
  };
  auto solveWith = [&](size_t k, int64_t reserve) {
    const auto &sol = solveAlone(layers[k], reserve, whole ? 0 : batchTile, stats,
                                 pieces ? &piecesOf[k] : nullptr,
                                 priced ? segmentPricing(i, j, layers[k]) : OnChipPricing{});
    if (!sol && why)
      *why = "no schedule of '" + net.layers[static_cast<size_t>(layers[k])].name + "'" +
             (pieces ? " on its largest piece" : "") + (reserve ? " leaves room for the intermediates" : "");
    return sol && runWith(k, sol->schedule, sol->result);
  };
  const std::vector<std::vector<Span>> spans =
      pieces ? instanceSpans(net, layers, split.dim, split.instances) : std::vector<std::vector<Span>>{};
  for (size_t k = 0; k < n; ++k) {
    const int l = layers[k];
    if (pieces)
      piecesOf[k] = layerPieces(net, layers, split.dim, spans, k);
    if ((fixed(l) || (whole && !pieces && !priced)) ? !runWith(k, layerwise(l), baseResult_.layers[l])
                                                    : !solveWith(k, 0))
      return std::nullopt;
  }
  // Room for the intermediates (E0819, the analysis' temporalRoom): the
  // layers that leave too little are re-solved with a reserve for them,
  // larger each round (re-solved tiles hold less across the chunks, so a
  // round or two settles it).
  int64_t reserve = 0;
  for (int round = 0;; ++round) {
    TemporalRoom room = temporalRoom(net, hw, layers, scheds, res, split);
    if (room.fits())
      break;
    const std::string shortText = std::string(pieces ? "one instance's" : "the") + " intermediates and tiles need " +
                               std::to_string(room.need()) + " B of level " + hw.levels[top].name + ", which has " +
                               std::to_string(room.all);
    if (round == 3 || budgetSpent())
      return refuse(shortText + " (after 3 re-solves with a reserve)");
    reserve = reserveLevel(room.intermediates + room.held, reserve);
    if (!reserve)
      return refuse(shortText + " (no reserve leaves enough)");
    const int64_t free = room.all - room.intermediates - room.held;
    for (size_t k = 0; k < n; ++k) {
      const LevelResult &lr = res[k]->levels[top];
      if (lr.bufferBytes[static_cast<size_t>(room.buffer)] * lr.units <= free || reserveOf[k] >= reserve)
        continue;   // leaves the room already, or as much as this reserve would
      if (fixed(layers[k]))
        return refuse(shortText + " (the written directives of '" + net.layers[static_cast<size_t>(layers[k])].name +
                      "' are kept)");
      if (!solveWith(k, reserve))
        return std::nullopt;
      reserveOf[k] = reserve;
    }
  }
  // Costed by the analysis itself: the same forwarding and capacity rules
  // as the chain it ends up in.
  Schedule s;
  s.network = base_.network;
  s.hardware = base_.hardware;
  Segment seg;
  seg.splitDim = split.dim;
  seg.instances = split.instances;
  std::vector<LayerResult> results(net.layers.size());
  for (size_t k = 0; k < n; ++k) {
    s.layers.push_back(*scheds[k]);
    s.layers.back().layer = layers[k];
    results[static_cast<size_t>(layers[k])] = *res[k];
    results[static_cast<size_t>(layers[k])].layer = layers[k];
    seg.layers.push_back(layers[k]);
  }
  s.segments.push_back(std::move(seg));
  ScheduleResult r = analyzeSegments(model_, s, std::move(results));
  if (!r.issues.empty())
    return refuse(formatDiagnostic(diagInfo(r.issues.front().id).format, r.issues.front().args));
  double e = 0;
  replaced.clear();
  for (size_t k = 0; k < n; ++k) {
    e += r.layers[static_cast<size_t>(layers[k])].energyPj;
    if (pieces || scheds[k] != &layerwise(layers[k]))
      replaced.push_back(s.layers[k]);
  }
  reserved = std::any_of(reserveOf.begin(), reserveOf.end(), [](int64_t v) { return v > 0; });
  return e;
}

OnChipPricing InterLayerSolver::segmentPricing(int i, int j, int l) const {
  const Network &net = network();
  const Layer &layer = net.layers[static_cast<size_t>(l)];
  auto inSegment = [&](int x) { return x >= i && x <= j; };
  OnChipPricing p;
  // As the segment analysis forwards: each producer in the segment once.
  std::vector<int> producers;
  for (const TensorRef &op : layer.operands)
    if (!op.isInput && inSegment(op.index) &&
        std::find(producers.begin(), producers.end(), op.index) == producers.end())
      producers.push_back(op.index);
  for (int q : producers)
    for (TensorRole r : layer.roles())
      if (r != layer.output)
        p.reads[static_cast<size_t>(r)] += operandShare(layer, net.layers[static_cast<size_t>(q)].name, r);
  p.output = net.readUpTo(l, j) && !net.readOutside(l, inSegment);
  return p;
}

void InterLayerSolver::useReserved(Schedule &s, int i, int j) const {
  if (auto it = temporalLayers_.find({i, j}); it != temporalLayers_.end())
    for (const LayerScheduleModel &ls : it->second)
      s.layers[static_cast<size_t>(ls.layer)] = ls;
}

void InterLayerSolver::useSplit(Schedule &s, Segment &seg, int i, int j) const {
  const auto &[split, layers] = splitLayers_.at({i, j});
  seg.splitDim = split.dim;
  seg.instances = split.instances;
  for (const LayerScheduleModel &ls : layers)
    s.layers[static_cast<size_t>(ls.layer)] = ls;
}

std::optional<double> InterLayerSolver::SegmentOptions::bestTemporal() const {
  return splitWins() ? instances : temporal;
}

double InterLayerSolver::singlesPj(int i, int j) const {
  double e = 0;
  for (int l = i; l <= j; ++l)
    e += baseResult_.layers[l].energyPj;
  return e;
}

InterLayerSolver::SegmentOptions InterLayerSolver::segmentOptions(int i, int j, bool spatialAllowed,
                                                                  InterLayerStats &stats) {
  const Network &net = network();
  SegmentOptions o;
  const size_t length = static_cast<size_t>(j - i + 1);
  auto backward = [&] {
    for (int l = i; l <= j; ++l)
      if (!net.layers[l].forwardOf.empty())
        return true;
    return false;
  };
  std::vector<int> layers;
  for (int l = i; l <= j; ++l)
    layers.push_back(l);
  if (auto u = unkeptIntermediate(net, hardware(), layers)) {   // no segment can keep its tensors
    o.temporalWhy = o.instancesWhy = o.spatialWhy = unkeptText(net, hardware(), *u);
    o.exact = singlesPj(i, j);
    return o;
  }
  if (const int v = vectorLayerIn(base_, layers); v >= 0) {   // E0832: it runs alone
    o.temporalWhy = o.instancesWhy = o.spatialWhy = "'" + net.layers[static_cast<size_t>(v)].name +
                                                    "' runs on a vector unit, in a segment of its own";
    o.exact = singlesPj(i, j);
    return o;
  }
  bool reserved = false;
  if (length <= options_.maxTemporal)
    o.temporal = temporalCost(i, j, stats, &reserved);
  if (!o.temporal)
    o.temporalWhy = length > options_.maxTemporal ? "more than " + std::to_string(options_.maxTemporal) + " layers"
                    : !hardware().temporalPipelining ? "the hardware does not allow it"
                    : backward()                     ? "backward layers keep their tensors in DRAM"
                                                     : "its intermediates do not fit in the node buffer";
  // Split into instances where the intermediates crowd the node buffers: a
  // split pays recomputed halos and weights fetched per instance, so it can
  // only win where the whole segment does not fit or leaves its layers too
  // little room (KAPLA-style pruning; measured in docs/solver.md).
  if (!o.temporal && !o.temporalWhy.starts_with("its intermediates"))
    o.instancesWhy = o.temporalWhy;
  else if (o.temporal && !reserved)
    o.instancesWhy = "the whole segment fits without a reserve";
  else
    o.instances = instancesCost(i, j, o.split, o.instancesWhy, stats);
  o.exact = std::min(o.bestTemporal().value_or(singlesPj(i, j)), singlesPj(i, j));
  if (!spatialAllowed || length > options_.maxSpatial) {
    o.spatialWhy = !spatialAllowed ? "the hardware does not allow it"
                                   : "more than " + std::to_string(options_.maxSpatial) + " layers";
    return o;
  }
  for (int l = i; l <= j; ++l)
    if (static_cast<size_t>(l) < options_.fixedLayers.size() && options_.fixedLayers[l]) {
      o.spatialWhy = "'" + net.layers[l].name + "' has directives given";
      return o;
    }
  if (backward()) {
    o.spatialWhy = "backward layers keep their tensors in DRAM";
    return o;
  }
  std::vector<int64_t> regions = allocateNodes(i, j);
  if (regions.empty()) {
    o.spatialWhy = "more layers than nodes";
    return o;
  }
  std::vector<std::pair<SpatialSegment, SchemeEstimate>> kept;
  for (SpatialSegment &sc : schemes(i, j, regions)) {
    ++stats.candidates;
    if (options_.prune && !mayFit(sc))
      ++stats.prunedInvalid;
    else
      kept.push_back({std::move(sc), SchemeEstimate{}});
  }
  if (kept.empty()) {
    o.spatialWhy = "no forwarding scheme fits the node buffers";
    return o;
  }
  for (auto &[sc, est] : kept)
    est = estimate(sc);
  // Pareto pruning (KAPLA §IV-B): a scheme whose access counts and buffer
  // are all matched or beaten by another's is dropped. A heuristic — the
  // counts are estimates — see docs/solver.md.
  if (options_.prune) {
    std::vector<std::vector<double>> points;
    for (auto &k : kept)
      points.push_back(k.second.paretoVector());
    std::vector<std::pair<SpatialSegment, SchemeEstimate>> front;
    for (size_t f : paretoFront(points))
      front.push_back(std::move(kept[f]));
    stats.prunedPareto += static_cast<int64_t>(kept.size() - front.size());
    kept = std::move(front);
  }
  double lb = lowerBoundPj(i, j);
  // Safe: any chain through this segment does no worse with the exact
  // alternative in its place, since real cost >= lower bound >= exact.
  if (options_.prune && options_.objective == Objective::Energy && lb >= o.exact) {
    stats.prunedBound += static_cast<int64_t>(kept.size());
    o.spatialWhy = "its lower bound " + formatEnergy(lb) + " is no better than " +
                   (o.bestTemporal() && *o.bestTemporal() < singlesPj(i, j)
                        ? (o.splitWins() ? "the segment split into instances" : "the temporal segment")
                        : "the layers one by one");
    return o;
  }
  o.spatialBound = lb;
  for (auto &k : kept) {
    o.wholeChannels |= k.first.channelSplit == 1;
    o.schemes.push_back(std::move(k.first));
  }
  return o;
}

bool InterLayerSolver::costSegments(bool spatialAllowed, InterLayerStats &stats) {
  const int n = static_cast<int>(network().layers.size());
  const size_t maxLen = std::max(options_.maxSpatial, options_.maxTemporal);
  std::vector<std::pair<int, int>> spans;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n && static_cast<size_t>(j - i + 1) <= maxLen; ++j)
      spans.push_back({i, j});
  // Each segment's costs and counts in its own slot (its layers' solves are
  // memoized once, whichever thread asks first), reduced in order.
  std::vector<SegmentOptions> costs(spans.size());
  std::vector<InterLayerStats> counts(spans.size());
  std::atomic<bool> spent{false};
  // Far apart: two threads on neighbouring segments wait on each other's
  // layer solves (ResNet-50 at batch 64: 0.83 s in network order, 0.70 s
  // with twice as many stretches as threads, 0.74 s with as many). One
  // thread, which runs where candidates are counted in order, keeps it.
  const std::vector<size_t> order =
      spreadOrder(spans.size(), options_.threads > 1 ? 2 * options_.threads : 1);
  parallelFor(spans.size(), options_.threads, [&](size_t q) {
    const size_t k = order[q];
    if (spent || budgetSpent())
      spent = true;
    else
      costs[k] = segmentOptions(spans[k].first, spans[k].second, spatialAllowed, counts[k]);
  });
  if (spent)
    return false;
  for (size_t k = 0; k < spans.size(); ++k) {
    segments_[spans[k]] = std::move(costs[k]);
    addStats(stats, counts[k]);
  }
  return true;
}

void InterLayerSolver::solveSegmentsOf(const std::vector<Chain> &list, InterLayerStats &stats) {
  std::vector<std::pair<int, int>> spans;
  for (const Chain &chain : list)
    for (const Link &link : chain)
      if (link.kind == SegmentKind::Spatial && !solved_.count({link.first, link.last}) &&
          !presolved_.count({link.first, link.last}) &&
          std::find(spans.begin(), spans.end(), std::pair{link.first, link.last}) == spans.end())
        spans.push_back({link.first, link.last});
  std::vector<std::optional<std::pair<Schedule, ScheduleResult>>> best(spans.size());
  std::vector<InterLayerStats> counts(spans.size());
  std::vector<char> done(spans.size(), 0);
  parallelFor(spans.size(), options_.threads, [&](size_t k) {
    if (budgetSpent())
      return;   // tryChains stops too: the segment stays unsolved
    best[k] = bestScheme(options(spans[k].first, spans[k].second).schemes, counts[k], nullptr);
    done[k] = 1;
  });
  for (size_t k = 0; k < spans.size(); ++k)
    if (done[k]) {
      presolved_[spans[k]] = std::move(best[k]);
      addStats(stats, counts[k]);
    }
}

void InterLayerSolver::keepSolved(int i, int j, const std::optional<std::pair<Schedule, ScheduleResult>> &s) {
  std::optional<std::vector<LayerScheduleModel>> best;
  if (s) {
    double e = 0;
    for (int l = i; l <= j; ++l)
      e += s->second.layers[static_cast<size_t>(l)].energyPj;
    realPj_[{i, j}] = e;
    best.emplace();
    for (int l = i; l <= j; ++l)
      best->push_back(s->first.layers[static_cast<size_t>(l)]);
  }
  solved_[{i, j}] = std::move(best);
}

const InterLayerSolver::SegmentOptions &InterLayerSolver::options(int i, int j) const {
  auto it = segments_.find({i, j});
  DFLC_CHECK(it != segments_.end()) << "segment " << i << ".." << j << " has no costs";
  return it->second;
}

std::optional<double> InterLayerSolver::exactTemporal(int i, int j) const { return options(i, j).bestTemporal(); }

const std::optional<std::vector<LayerScheduleModel>> &InterLayerSolver::solvedSegment(int i, int j,
                                                                                      InterLayerStats &stats) {
  if (!solved_.count({i, j})) {
    // Solved on a thread before (solveSegmentsOf), it counts as solved from
    // here, as one by one: the segment costs of the chains before it do not see it.
    if (auto it = presolved_.find({i, j}); it != presolved_.end()) {
      keepSolved(i, j, it->second);
      presolved_.erase(it);
    } else {
      keepSolved(i, j, solveSpatialBest(options(i, j).schemes, stats));
    }
  }
  return solved_.at({i, j});
}

SegmentCosts InterLayerSolver::costsOf(const Link &link, SegmentKind chosen) const {
  const SegmentOptions &o = options(link.first, link.last);
  SegmentCosts c{link.first, link.last, chosen, singlesPj(link.first, link.last), o.temporal, std::nullopt,
                 o.spatialBound, o.temporalWhy, o.spatialWhy, o.instances, o.split, o.instancesWhy};
  if (auto it = realPj_.find({link.first, link.last}); it != realPj_.end())
    c.spatialPj = it->second;
  else if (c.spatialWhy.empty())
    c.spatialWhy = solved_.count({link.first, link.last}) ? "no scheme has a valid schedule"
                                                          : "its lower bound kept it off the short list";
  return c;
}

void InterLayerSolver::tryChains(const std::vector<Chain> &chains, InterLayerStats &stats) {
  // Built one by one (each chain once), analyzed on threads, kept in order.
  std::vector<ChainTried> tried;
  for (const Chain &chain : chains) {
    if (budgetSpent() || std::find(seen_.begin(), seen_.end(), chain) != seen_.end())
      continue;
    seen_.push_back(chain);
    ++stats.chains;
    tried.push_back(buildChain(chain, stats));
  }
  parallelFor(tried.size(), options_.threads,
              [&](size_t k) { tried[k].result = analyzeSchedule(model_, tried[k].schedule); });
  auto value = [&](const ScheduleResult &x) { return objectiveValue(options_.objective, x.energyPj, x.latencyCycles); };
  for (ChainTried &t : tried) {
    const ScheduleResult &res = t.result;
    if (options_.alternatives && res.valid && res.complete)
      options_.alternatives->push_back({t.schedule, res.energyPj, res.latencyCycles, options_.objective, t.costs});
    if (res.valid && res.complete && value(res) < value(bestResult_)) {
      bestSchedule_ = std::move(t.schedule);
      bestResult_ = std::move(t.result);
      bestCosts_ = std::move(t.costs);
    }
  }
}

InterLayerSolver::ChainTried InterLayerSolver::buildChain(const Chain &chain, InterLayerStats &stats) {
  ChainTried out;
  Schedule &s = out.schedule;
  s = base_;
  std::vector<SegmentCosts> &costs = out.costs;
  for (const Link &link : chain) {
    Segment seg;
    for (int l = link.first; l <= link.last; ++l)
      seg.layers.push_back(l);
    SegmentKind kind = link.kind;
    if (kind == SegmentKind::Spatial) {
      if (const auto &layers = solvedSegment(link.first, link.last, stats)) {
        for (const LayerScheduleModel &ls : *layers)
          s.layers[static_cast<size_t>(ls.layer)] = ls;
        seg.pipelined = true;
        s.segments.push_back(std::move(seg));
        costs.push_back(costsOf(link, kind));
        continue;
      }
      // No valid schedule for it: the exact alternative takes its place.
      const SegmentOptions &o = options(link.first, link.last);
      kind = o.bestTemporal() && *o.bestTemporal() <= singlesPj(link.first, link.last) ? SegmentKind::Temporal
                                                                                       : SegmentKind::Single;
    }
    if (kind == SegmentKind::Temporal && options(link.first, link.last).splitWins()) {
      kind = SegmentKind::Instances;
      useSplit(s, seg, link.first, link.last);
    } else if (kind == SegmentKind::Temporal) {
      useReserved(s, link.first, link.last);
    }
    if (link.first < link.last)
      costs.push_back(costsOf(link, kind));
    if (kind != SegmentKind::Single)
      s.segments.push_back(std::move(seg));
  }
  return out;
}

std::pair<Schedule, ScheduleResult> InterLayerSolver::solve(InterLayerStats &stats) {
  auto t0 = Clock::now();
  const Network &net = network();
  const Hardware &hw = hardware();
  const int n = static_cast<int>(net.layers.size());
  const Level &nodes = hw.levels[hw.levels.size() - 2];
  temporalLayers_.clear(), splitLayers_.clear(), segments_.clear(), solved_.clear(), presolved_.clear(), realPj_.clear(), seen_.clear(), bestCosts_.clear();
  bestSchedule_ = base_;
  bestResult_ = baseResult_;

  // ---- segment costs: per segment the exact alternative (temporal or one by
  // one) and, where allowed, the spatial option's lower bound and its schemes.
  const size_t maxLen = std::max(options_.maxSpatial, options_.maxTemporal);
  const bool spatialAllowed = hw.spatialPipelining && nodes.units() > 1 && nodes.fixed.empty();
  if (!costSegments(spatialAllowed, stats))
    return {base_, baseResult_};   // the layer-wise schedule: the best so far

  // ---- the chain DP over the topological order, keeping the top-k chains
  auto single = [&](int i) { return baseResult_.layers[i].energyPj; };
  auto temporal = [&](int i, int j) { return exactTemporal(i, j); };
  auto none = [](int, int) -> std::optional<double> { return std::nullopt; };
  // Ranked by the lower bound, not by the best scheme's estimate: measured on
  // ResNet-50 (batch 64), the estimate's refetch terms make spatial segments
  // look worse than they solve and the short list then misses good ones.
  auto bound = [&](int i, int j) { return options(i, j).spatialBound; };
  // The same over the segments that whole-channel forwarding allows: the
  // segments only a channel split makes fit carry optimistic bounds and
  // would otherwise crowd good chains out of the top k.
  auto wholeBound = [&](int i, int j) {
    const SegmentOptions &o = options(i, j);
    return o.wholeChannels ? o.spatialBound : std::nullopt;
  };
  auto shortList = [&](size_t k, std::vector<Chain> list) {
    for (Chain &c : cheapestChains(n, maxLen, k, single, temporal, bound))
      list.push_back(std::move(c));
    for (Chain &c : cheapestChains(n, maxLen, k, single, temporal, wholeBound))
      list.push_back(std::move(c));
    return list;
  };
  // Top-k tries every chain top-1 tries, so a larger k is never worse: the
  // best exact chain, the top-1 short list and its real-cost chain first, then the rest.
  const size_t k = std::max<size_t>(1, options_.topK);
  std::vector<std::vector<Chain>> rounds{shortList(1, cheapestChains(n, maxLen, 1, single, temporal, none))};
  if (k > 1)
    rounds.push_back(shortList(k, {}));
  auto t1 = Clock::now();
  stats.estimateSeconds = std::chrono::duration<double>(t1 - t0).count();

  // ---- each short list, solved for real: each spatial segment's layers with
  // its best granularity (in the layer-wise schedule's context), each chain
  // scored by the analysis; the best valid chain by the objective wins.
  // Choosing by real cost: the short list's spatial segments, now solved, with
  // their real energies, combined with the exact segments by the same DP.
  auto real = [&](int i, int j) -> std::optional<double> {
    auto it = realPj_.find({i, j});
    return it == realPj_.end() ? std::nullopt : std::optional<double>(it->second);
  };
  for (const std::vector<Chain> &list : rounds) {
    solveSegmentsOf(list, stats);
    tryChains(list, stats);
    tryChains(cheapestChains(n, maxLen, 1, single, temporal, real), stats);
  }
  stats.shortListSeconds = std::chrono::duration<double>(Clock::now() - t1).count();
  return {std::move(bestSchedule_), std::move(bestResult_)};
}

} // namespace dfl
