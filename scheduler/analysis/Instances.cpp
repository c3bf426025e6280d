#include "scheduler/analysis/Instances.h"

#include "model/Geometry.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "support/Check.h"

#include <algorithm>
#include <functional>

namespace dfl {
namespace {

/// The tensor index (of [N, C, X, Y]) of an axis.
size_t tensorIndex(Dim dim) { return dim == Dim::Yo ? 3 : 2; }
int64_t &along(TensorShape &t, Dim dim) { return dim == Dim::Yo ? t.Y : t.X; }
int64_t along(const TensorShape &t, Dim dim) { return dim == Dim::Yo ? t.Y : t.X; }

/// The output access of `l`.
const Access &outputAccess(const Layer &l) {
  std::vector<const Access *> writes = l.nest.accessesOf(l.output);
  DFLC_CHECK(!writes.empty()) << "layer '" << l.name << "' writes no tensor";
  return *writes[0];
}

/// The whole tensor `a` accesses.
IntervalBox wholeBox(const Access &a) {
  IntervalBox b;
  for (int64_t e : a.extent)
    b.push_back({0, e - 1});
  return b;
}

/// A box's positions along `axis` as a span (none if the box is empty).
Span toSpan(const IntervalBox &b, size_t axis) {
  return b.empty() ? Span{} : Span{b[axis].lo, b[axis].hi + 1};
}

} // namespace

// The halo is the model's interval image (model/Geometry.h), GraphTurbo's too.
Span instanceInputSpan(const Layer &l, Dim dim, Span s) {
  const size_t axis = tensorIndex(dim);
  const Access &out = outputAccess(l);
  IntervalBox box = wholeBox(out);
  box[axis] = {s.lo, s.hi - 1};
  const IntervalBox it = outputPreimage(l.nest, out, box);
  IntervalBox in;
  for (const Access &a : l.nest.accesses)
    if (a.role == TensorRole::Ifm)
      hullInto(in, accessImage(a, it));
  return toSpan(in, axis);
}

namespace {

/// Why layer `l` cannot be cut by its output positions along `dim`; empty if it can.
std::string uncuttable(const Layer &l, Dim dim) {
  if (!l.forwardOf.empty())
    return "'" + l.name + "' is a backward layer";
  if (l.type == LayerType::ConvTranspose)   // its loop runs over the input's positions (docs/design.md)
    return "'" + l.name + "' (conv_transpose) scatters each input position's taps over its output, so a piece of "
           "the output's " + dimName(dim) + " positions is no piece of its loop";
  if (l.type == LayerType::FC || l.type == LayerType::MatMul)
    return "'" + l.name + "' (" + l.kindName() + ") has no " + dimName(dim) + " positions of its own";
  if (l.normalizes() && (l.normAxis == dim || (l.normPlane && dim != Dim::C)))
    return "'" + l.name + "' normalizes along " + dimName(dim);
  if (l.causal)   // a piece of the queries has its own share of the triangle, not a proportional one
    return "'" + l.name + "' is causal: its work is not in proportion to its " + dimName(dim) + " positions";
  int loops = 0;
  for (const IterDim &d : l.nest.dims)
    if (std::find(d.kapla.begin(), d.kapla.end(), dim) != d.kapla.end())
      loops += d.kapla.size() == 1 ? 1 : 2;
  if (loops != 1)
    return "'" + l.name + "' has no loop over " + dimName(dim) + " alone";
  // An upsample's or depth_to_space's output position is s·q + p: its loop
  // runs over the input's positions, its phases over K (docs/design.md,
  // "Resolution changes"), which a piece of the output's positions does not cut.
  const AffineExpr &written = outputAccess(l).index[tensorIndex(dim)];
  if (written.terms.size() != 1 || written.terms[0].second != 1)
    return "'" + l.name + "' (" + l.kindName() + ") writes its output's " + dimName(dim) +
           " positions as s*q + p, not one per position of its loop";
  // What instanceLayer cuts: work in proportion to the output positions, and
  // inputs read through the layer's window along the axis.
  const int64_t extent = along(l.ofmShape, dim);
  if (extent < 1 || l.macs % extent || l.ops % extent)
    return "'" + l.name + "' does not work in proportion to its " + dimName(dim) + " positions";
  const size_t axis = tensorIndex(dim);
  for (const Access &a : l.nest.accesses)
    if (a.role == TensorRole::Ifm &&
        (a.index.size() <= axis || a.index[axis].constant != -l.window.along(dim).padBegin))
      return "'" + l.name + "' reads an input off its window along " + dimName(dim);
  return "";
}

} // namespace

std::string instanceSplitRefusal(const Network &net, const std::vector<int> &layers, Dim dim) {
  if (dim != Dim::Xo && dim != Dim::Yo)
    return "instances are pieces of the output's rows (Yo) or columns (Xo)";
  if (layers.empty())
    return "the segment has no layers";
  auto inSegment = [&](int l) { return std::find(layers.begin(), layers.end(), l) != layers.end(); };
  for (size_t k = 0; k < layers.size(); ++k) {
    const Layer &l = net.layers[static_cast<size_t>(layers[k])];
    if (std::string why = uncuttable(l, dim); !why.empty())
      return why;
    if (k + 1 < layers.size() && (!net.readBy(layers[k], layers) || net.readOutside(layers[k], inSegment)))
      return "'" + l.name + "' is read outside the segment; only its last layer may be";
  }
  return "";
}

std::string instanceSplitRefusal(const Network &net, const std::vector<int> &layers, Dim dim, int64_t count) {
  if (std::string why = instanceSplitRefusal(net, layers, dim); !why.empty())
    return why;
  if (count < 2)
    return "a split needs 2 instances or more";
  const Layer &exit = net.layers[static_cast<size_t>(layers.back())];
  const int64_t extent = along(exit.ofmShape, dim);
  if (extent % count)
    return std::to_string(count) + " does not divide " + dimName(dim) + "=" + std::to_string(extent) + " of '" +
           exit.name + "', the segment's output";
  return instanceSpansRefusal(net, layers, instanceSpans(net, layers, dim, count));
}

std::string instanceSpansRefusal(const Network &net, const std::vector<int> &layers,
                                 const std::vector<std::vector<Span>> &spans) {
  for (size_t i = 0; i < spans.size(); ++i)
    for (size_t k = 0; k < layers.size(); ++k)
      if (spans[i][k].size() <= 0)
        return "instance " + std::to_string(i) + " needs nothing of '" + net.layers[static_cast<size_t>(layers[k])].name + "'";
  return "";
}

std::vector<std::vector<Span>> instanceSpans(const Network &net, const std::vector<int> &layers, Dim dim,
                                             int64_t count) {
  const size_t axis = tensorIndex(dim);
  const IntervalBox whole = wholeBox(outputAccess(net.layers[static_cast<size_t>(layers.back())]));
  std::vector<std::vector<Span>> out;
  for (int64_t i = 0; i < count; ++i) {
    IntervalBox exit = whole;
    exit[axis] = equalPiece(whole[axis], count, i);
    const Halos h = propagateHalos(net, layers, exit);
    std::vector<Span> &spans = out.emplace_back();
    for (int l : layers)
      spans.push_back(toSpan(h.output.at(l), axis));
  }
  return out;
}

int64_t pieceOutputWords(const Layer &l, Dim dim, Span s) {
  return l.ofmShape.size() / along(l.ofmShape, dim) * s.size();
}

std::vector<int64_t> largestInstanceOutputs(const Network &net, const std::vector<int> &layers, Dim dim,
                                            int64_t count) {
  return largestInstanceOutputs(net, layers, dim, instanceSpans(net, layers, dim, count));
}

std::vector<int64_t> largestInstanceOutputs(const Network &net, const std::vector<int> &layers, Dim dim,
                                            const std::vector<std::vector<Span>> &instances) {
  std::vector<int64_t> largest(layers.size(), 0);
  int64_t most = -1;
  for (const std::vector<Span> &spans : instances) {
    std::vector<int64_t> words(layers.size(), 0);
    int64_t kept = 0;
    for (size_t k = 0; k < layers.size(); ++k) {
      words[k] = pieceOutputWords(net.layers[static_cast<size_t>(layers[k])], dim, spans[k]);
      kept += net.readBy(layers[k], layers) ? words[k] : 0;
    }
    if (kept > most)
      most = kept, largest = std::move(words);
  }
  return largest;
}

Layer instanceLayer(const Layer &l, Dim dim, Span s) {
  const size_t axis = tensorIndex(dim);
  const WindowAxis &a = l.window.along(dim);
  const Span in = instanceInputSpan(l, dim, s);
  // The piece's input window starts at s.lo·stride (padded coordinates); of
  // it, what lies before the input's first row it reads is padding.
  const int64_t pad = in.lo + a.padBegin - s.lo * a.stride;
  const int64_t outExtent = along(l.ofmShape, dim);
  Layer p = l;
  for (IterDim &d : p.nest.dims)
    if (std::find(d.kapla.begin(), d.kapla.end(), dim) != d.kapla.end())
      d.extent = s.size();
  for (Access &acc : p.nest.accesses) {
    if (acc.role == l.output) {
      acc.extent[axis] = s.size();
      continue;
    }
    if (acc.role != TensorRole::Ifm)
      continue;
    acc.extent[axis] = in.size();
    acc.index[axis].constant = -pad;
  }
  const KaplaView v = kaplaView(p.nest);
  p.bounds = v.bounds;
  p.window = v.window;
  along(p.ifmShape, dim) = in.size();
  along(p.ofmShape, dim) = s.size();
  p.macs = l.macs / outExtent * s.size();
  p.ops = l.ops / outExtent * s.size();
  return p;
}

bool samePiece(const Layer &a, const Layer &b) {
  return a.bounds == b.bounds && a.window == b.window && a.ifmShape == b.ifmShape;
}

LayerPieces layerPieces(const Network &net, const std::vector<int> &layers, Dim dim,
                        const std::vector<std::vector<Span>> &instances, size_t k) {
  const Layer &l = net.layers[static_cast<size_t>(layers[k])];
  LayerPieces out;
  for (const std::vector<Span> &spans : instances) {
    Layer p = instanceLayer(l, dim, spans[k]);
    auto same = [&](const Layer &q) { return samePiece(q, p); };
    if (auto it = std::find_if(out.pieces.begin(), out.pieces.end(), same); it != out.pieces.end())
      ++out.counts[static_cast<size_t>(it - out.pieces.begin())];
    else
      out.pieces.push_back(std::move(p)), out.counts.push_back(1);
  }
  // The largest first: its tiles are what the report shows.
  std::vector<size_t> order(out.pieces.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::max(out.pieces[x].macs, out.pieces[x].ops) > std::max(out.pieces[y].macs, out.pieces[y].ops);
  });
  LayerPieces sorted;
  for (size_t i : order)
    sorted.pieces.push_back(std::move(out.pieces[i])), sorted.counts.push_back(out.counts[i]);
  return sorted;
}

namespace {

void addAccesses(LevelAccesses &sum, const LevelAccesses &a, double times) {
  for (size_t r = 0; r < kNumRoles; ++r) {
    sum.reads[r] += a.reads[r] * times;
    sum.writes[r] += a.writes[r] * times;
    sum.sameLevel[r] += a.sameLevel[r] * times;
    sum.fills[r] += a.fills[r] * times;
    sum.writeBacks[r] += a.writeBacks[r] * times;
  }
}

/// `sum` (the largest piece's result, counted once) plus `times` more runs of `piece`.
void addPiece(LayerResult &sum, const LayerResult &piece, double times) {
  const size_t dram = sum.levels.size() - 1;
  for (size_t r = 0; r < kNumRoles; ++r) {
    // Hops per DRAM word: weighted by the words.
    auto blend = [&](double &perWord, double sumWords, double pieceWords, double piecePerWord) {
      const double words = sumWords + pieceWords * times;
      perWord = words > 0 ? (perWord * sumWords + piecePerWord * pieceWords * times) / words : perWord;
    };
    blend(sum.dramReadHops[r], sum.levels[dram].accesses.reads[r], piece.levels[dram].accesses.reads[r],
          piece.dramReadHops[r]);
    blend(sum.dramWriteHops[r], sum.levels[dram].accesses.writes[r], piece.levels[dram].accesses.writes[r],
          piece.dramWriteHops[r]);
  }
  for (size_t l = 0; l < sum.levels.size(); ++l) {
    LevelResult &s = sum.levels[l];
    const LevelResult &p = piece.levels[l];
    addAccesses(s.accesses, p.accesses, times);
    s.energyPj += p.energyPj * times;
    s.neighborEnergyPj += p.neighborEnergyPj * times;
    s.busEnergyPj += p.busEnergyPj * times;
    s.remoteReads += p.remoteReads * times;
    s.remoteEnergyPj += p.remoteEnergyPj * times;
    s.boundaryEnergyPj += p.boundaryEnergyPj * times;
    s.trafficWords += p.trafficWords * times;
    s.trafficBytes += p.trafficBytes * times;
    for (size_t b = 0; b < kNumRoles; ++b)
      s.bufferTrafficBytes[b] += p.bufferTrafficBytes[b] * times;
    s.cycles += p.cycles * times;
  }
  sum.work += piece.work * times;
  sum.hops += piece.hops * times;
  sum.energyMacPj += piece.energyMacPj * times;
  sum.energyNocPj += piece.energyNocPj * times;
  sum.energyBusPj += piece.energyBusPj * times;
  sum.energyStaticPj += piece.energyStaticPj * times;
  sum.energyPj += piece.energyPj * times;
  sum.computeCycles += piece.computeCycles * times;
  sum.latencyCycles += piece.latencyCycles * times;
  sum.complete = sum.complete && piece.complete;
  sum.valid = sum.valid && piece.valid;
  sum.rowsSplit = sum.rowsSplit || piece.rowsSplit;   // E0826 in the segment
  sum.exactCounts = sum.exactCounts && piece.exactCounts;
}

} // namespace

LayerResult analyzePieces(const Network &net, int layer, const LayerPieces &p, const Hardware &hw,
                          const LayerScheduleModel *schedule, std::vector<Issue> &issues) {
  DFLC_CHECK(!p.pieces.empty()) << "a layer of no pieces";
  LayerResult sum;
  const size_t before = issues.size();
  for (size_t i = 0; i < p.pieces.size(); ++i) {
    std::vector<Issue> mine;
    LayerResult r = analyzeLayer(net, p.pieces[i], layer, hw, schedule, mine);
    // The pieces' problems are the layer's: each once.
    for (Issue &x : mine)
      if (std::none_of(issues.begin() + static_cast<std::ptrdiff_t>(before), issues.end(),
                       [&](const Issue &y) { return y.id == x.id && y.range == x.range; }))
        issues.push_back(std::move(x));
    if (i == 0)
      sum = r;
    addPiece(sum, r, static_cast<double>(i == 0 ? p.counts[0] - 1 : p.counts[i]));
  }
  return sum;
}

const SegmentResult *splitSegmentOf(const ScheduleResult &r, int layer, size_t &k) {
  for (const SegmentResult &seg : r.segments)
    if (seg.instances > 1)
      if (auto it = std::find(seg.layers.begin(), seg.layers.end(), layer); it != seg.layers.end()) {
        k = static_cast<size_t>(it - seg.layers.begin());
        return &seg;
      }
  return nullptr;
}

} // namespace dfl
