#include "scheduler/analysis/Floors.h"

#include "model/Geometry.h"

#include <algorithm>

namespace dfl {

double computeFloorPj(const Network &net, int x, const Hardware &hw) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  const double work = static_cast<double>((l.macs ? l.macs : l.ops) * net.batch);
  const double operands = static_cast<double>(l.pointOperands());
  // Per point computed; a softmax, layernorm or unary function does several operations per point.
  const int64_t perElement = l.opsPerElement();
  const double points = perElement ? work / static_cast<double>(perElement) : work;
  const WordScale ws = hw.wordScale(l.output);
  // The MACs' own accesses, at the buffer of the innermost level holding
  // each role (§6 "Bypass"); summed per buffer first.
  std::vector<std::pair<const Buffer *, std::pair<double, double>>> perBuffer;   // reads, writes in `word`s
  for (TensorRole r : l.roles()) {
    const double width = ws.held[static_cast<size_t>(r)];
    const Level &lv = hw.levels[hw.innermostHolder(r)];
    const Buffer *buf = &lv.buffers[static_cast<size_t>(std::max(0, lv.bufferOf(r)))];
    auto it = std::find_if(perBuffer.begin(), perBuffer.end(), [&](const auto &p) { return p.first == buf; });
    if (it == perBuffer.end())
      it = perBuffer.insert(perBuffer.end(), {buf, {0.0, 0.0}});
    it->second.first += (r == TensorRole::Ifm && r != l.output ? points * operands : points) * width;
    it->second.second += r == l.output ? points * width : 0;
  }
  double pj = work * hw.macEnergyPj;
  for (const auto &[buf, rw] : perBuffer) {   // in KAPLA's template's order: the same sum
    pj += rw.first * buf->readEnergyPj;
    pj += rw.second * buf->writeEnergyPj;
  }
  return pj;
}

namespace {

/// Along one axis, windows of `kernel` taps `stride` apart from -padBegin
/// leave no word of `in` unread with `out` of them.
bool coversAxis(const WindowAxis &w, int64_t kernel, int64_t in, int64_t out) {
  if (kernel > 1 && w.dilation != 1)
    return false;
  return w.stride <= kernel && (out - 1) * w.stride - w.padBegin + kernel >= in;
}

/// The words of operand `op`, per sample.
int64_t operandWords(const Network &net, const TensorRef &op) {
  return (op.isInput ? net.inputs[static_cast<size_t>(op.index)].shape
                     : net.layers[static_cast<size_t>(op.index)].ofmShape)
      .size();
}

} // namespace

bool readsEveryInput(const Layer &l) {
  if (l.causal || !l.forwardOf.empty() || l.output != TensorRole::Ofm)
    return false;
  switch (l.type) {
  case LayerType::Conv:
  case LayerType::DwConv:
  case LayerType::MaxPool:
  case LayerType::AvgPool:
    return coversAxis(l.window.x, at(l.bounds, Dim::R), l.ifmShape.X, l.ofmShape.X) &&
           coversAxis(l.window.y, at(l.bounds, Dim::S), l.ifmShape.Y, l.ofmShape.Y);
  case LayerType::FC:
  case LayerType::MatMul:
  case LayerType::Add:
  case LayerType::Mul:
  case LayerType::Concat:
  case LayerType::Softmax:
  case LayerType::LayerNorm:
  case LayerType::Unary:
  case LayerType::Rope:
    return true;
  default:   // resampling and transposed layers: left out, a bound must stay a bound
    return false;
  }
}

namespace {

/// The words of layer l's ifm operands over the batch where it reads every
/// word of them (readsEveryInput), each tensor once (an add may name one
/// twice), but for those layers from `forwardedFrom` on produce.
double everyInputWords(const Network &net, const Layer &l, int forwardedFrom) {
  if (!readsEveryInput(l))
    return 0;
  double words = 0;
  std::vector<std::pair<bool, int>> seen;
  for (const TensorRef &op : l.ifmOperands()) {
    const std::pair<bool, int> tensor{op.isInput, op.index};
    if ((op.isInput || op.index < forwardedFrom) && std::find(seen.begin(), seen.end(), tensor) == seen.end()) {
      seen.push_back(tensor);
      words += static_cast<double>(operandWords(net, op) * net.batch);
    }
  }
  return words;
}

} // namespace

DramFloor dramFloor(const Network &net, int x, const Hardware &hw, int segmentFirst, int segmentLast) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  DramFloor f;
  if (!l.forwardOf.empty() || hw.levels.size() < 2)
    return f;
  const WordScale ws = hw.wordScale(l.output);
  if (l.hasWeights() && !wgtPerSample(l.nest))
    f.wgtReads = static_cast<double>(l.wgtSize) * ws.data[static_cast<size_t>(TensorRole::Wgt)];
  // An operand a layer of the segment may forward costs no DRAM read.
  f.ifmReads = everyInputWords(net, l, segmentFirst) * ws.data[static_cast<size_t>(TensorRole::Ifm)];
  if (!net.readUpTo(x, segmentLast))
    f.outputWrites = static_cast<double>(l.ofmShape.size() * net.batch) * ws.data[static_cast<size_t>(l.output)];
  return f;
}

std::optional<double> gapAbove(double value, double bound) {
  return bound > 0 ? std::optional<double>(value / bound - 1) : std::nullopt;
}

std::string bindingName(const Hardware &hw, int binding) {
  return binding < 0 ? "compute" : hw.levels[static_cast<size_t>(binding)].name;
}

namespace {

/// The cycles `work` points and `dramWords` DRAM words take at least, and
/// which of the two binds.
std::pair<double, int> cyclesFloor(const Hardware &hw, double work, double dramWords) {
  std::pair<double, int> out{work / static_cast<double>(std::max<int64_t>(1, hw.chipUnits(0)) * hw.opsPerCycle), -1};
  const size_t dram = hw.levels.size() - 1;
  if (const Level &outer = hw.levels[dram]; outer.bandwidthBytesPerCycle) {
    const double cycles = dramWords * static_cast<double>(hw.wordBytes()) / *outer.bandwidthBytesPerCycle;
    if (cycles > out.first)
      out = {cycles, static_cast<int>(dram)};
  }
  return out;
}

double workOf(const Network &net, const Layer &l) { return static_cast<double>((l.macs ? l.macs : l.ops) * net.batch); }

/// Per role, the elements of onChipWords, before their widths.
std::array<double, kNumRoles> onChipElements(const Network &net, const Layer &l) {
  std::array<double, kNumRoles> elements{};
  if (!l.forwardOf.empty())
    return elements;
  elements[static_cast<size_t>(l.output)] += static_cast<double>(l.ofmShape.size() * net.batch);
  if (l.hasWeights() && !wgtPerSample(l.nest))
    elements[static_cast<size_t>(TensorRole::Wgt)] += static_cast<double>(l.wgtSize);
  elements[static_cast<size_t>(TensorRole::Ifm)] += everyInputWords(net, l, static_cast<int>(net.layers.size()));
  return elements;
}

/// Per role, the `word`s that cross every on-chip boundary of that role in
/// any schedule of layer x: every weight reaches the PEs and every output
/// word leaves them (both also when forwarded), and the ifm where every word
/// of it is read, at their widths on chip (WordScale::held).
std::array<double, kNumRoles> onChipWords(const Network &net, const Layer &l, const Hardware &hw) {
  std::array<double, kNumRoles> words = onChipElements(net, l);
  const WordScale ws = hw.wordScale(l.output);
  for (size_t r = 0; r < kNumRoles; ++r)
    words[r] *= ws.held[r];
  return words;
}

/// The cycles level k's ports take at least for `words` (per role): each
/// buffer moves the roles it holds that a level inside also holds (their
/// fills come from it; a role stored nowhere inside goes to the MACs as their
/// own accesses), the slowest buffer binding (§8). nullopt: no bandwidth.
std::optional<double> portCycles(const Hardware &hw, size_t k, const std::array<double, kNumRoles> &words) {
  const Level &lv = hw.levels[k];
  std::optional<double> cycles;
  for (const Buffer &buf : lv.buffers) {
    if (!buf.bandwidthBytesPerCycle)
      continue;
    double w = 0;
    for (size_t r = kNumRoles; r-- > 0;)   // ofm, wgt, ifm: a forward layer's output first
      if (buf.holds(static_cast<TensorRole>(r)) && hw.innermostHolder(static_cast<TensorRole>(r)) < k)
        w += words[r];
    cycles = std::max(cycles.value_or(0.0), w * static_cast<double>(hw.wordBytes()) /
                                                (*buf.bandwidthBytesPerCycle *
                                                 static_cast<double>(std::max<int64_t>(1, hw.chipUnits(k)))));
  }
  return cycles;
}

} // namespace

double crossingsPj(const Hardware &hw, TensorRole output, TensorRole r, double elements, size_t upTo,
                   std::vector<double> *boundaryPj) {
  const size_t nl = hw.levels.size(), ri = static_cast<size_t>(r);
  const WordScale ws = hw.wordScale(output);
  const bool in = r != output;
  double sum = 0;
  for (size_t inner = hw.innermostHolder(r); inner + 1 < nl;) {
    const size_t outer = hw.holderAbove(inner, r);
    if (outer > upTo)
      break;
    LevelAccesses below, above;   // the boundary's accesses as the analysis counts them
    if (in) {
      below.writes[ri] = below.fills[ri] = elements;
      above.reads[ri] = elements;
    } else {
      below.reads[ri] = below.writeBacks[ri] = elements;
      above.writes[ri] = elements;
    }
    double pj = levelAccessEnergyPj(hw, inner, below, ws);
    if (outer + 1 < nl)
      pj += levelAccessEnergyPj(hw, outer, above, ws);
    pj += hw.levels[inner + 1].busEnergyPj * ws.boundaryWords(ri, in ? elements : 0, in ? 0 : elements, inner + 2 == nl);
    if (boundaryPj)
      (*boundaryPj)[inner] += pj;
    sum += pj;
    inner = outer;
  }
  return sum;
}

double OnChipFloor::totalPj() const {
  double pj = 0;
  for (double b : boundaryPj)
    pj += b;
  return pj;
}

OnChipFloor onChipFloor(const Network &net, int x, const Hardware &hw, int segmentFirst, int segmentLast) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  const size_t nl = hw.levels.size();
  OnChipFloor f;
  f.boundaryPj.assign(nl, 0.0);
  f.rolePj.assign(nl, {});
  if (l.output != TensorRole::Ofm || !l.forwardOf.empty())
    return f;   // a gradient's roles read differently
  const std::array<double, kNumRoles> elements = f.elements = onChipElements(net, l);
  const DramFloor dram = dramFloor(net, x, hw, segmentFirst, segmentLast);
  std::array<bool, kNumRoles> throughDram{};
  throughDram[static_cast<size_t>(TensorRole::Wgt)] = dram.wgtReads > 0;
  throughDram[static_cast<size_t>(TensorRole::Ifm)] = dram.ifmReads > 0;
  throughDram[static_cast<size_t>(TensorRole::Ofm)] = dram.outputWrites > 0;
  for (size_t ri = 0; ri < kNumRoles; ++ri) {
    const auto r = static_cast<TensorRole>(ri);
    if (elements[ri] <= 0)
      continue;
    std::vector<double> role(nl, 0.0);
    crossingsPj(hw, l.output, r, elements[ri], throughDram[ri] ? nl - 1 : hw.holderAbove(hw.innermostHolder(r), r),
                &role);
    for (size_t b = 0; b < nl; ++b) {
      f.boundaryPj[b] += role[b];
      f.rolePj[b][ri] = role[b];
    }
  }
  return f;
}

namespace {

/// The floor of layer x run on `hw`'s innermost units (the MAC array, or a
/// vector unit on its truncated template).
LayerFloor placedFloor(const Network &net, int x, const Hardware &hw, int segmentFirst, int segmentLast,
                       double staticShare) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  LayerFloor f;
  const DramFloor dram = dramFloor(net, x, hw, segmentFirst, segmentLast);
  const Level &outer = hw.levels.back();
  f.dramWords = dram.words();
  std::tie(f.latencyCycles, f.binding) = cyclesFloor(hw, workOf(net, l), f.dramWords);
  // The on-chip boundaries (§8: bytes / (bandwidth · units)), over all of the outer level's units.
  const std::array<double, kNumRoles> chipWords = onChipWords(net, l, hw);
  for (size_t k = 1; k + 1 < hw.levels.size(); ++k)
    if (const std::optional<double> cycles = portCycles(hw, k, chipWords); cycles && *cycles > f.latencyCycles)
      f.latencyCycles = *cycles, f.binding = static_cast<int>(k);
  f.energyPj = computeFloorPj(net, x, hw);
  for (const std::string &a : l.activations)   // each fused activation once per output element
    if (auto it = hw.activationEnergyPj.find(a); it != hw.activationEnergyPj.end())
      f.energyPj += it->second * static_cast<double>(l.ofmShape.size() * net.batch);
  f.energyPj += (dram.wgtReads + dram.ifmReads) * outer.readEnergyPj + dram.outputWrites * outer.writeEnergyPj;
  f.energyPj += onChipFloor(net, x, hw, segmentFirst, segmentLast).totalPj();
  f.staticPj = hw.chipStaticEnergyPj() * f.latencyCycles * staticShare;
  f.energyPj += f.staticPj;
  return f;
}

} // namespace

LayerFloor layerFloor(const Network &net, int x, const Hardware &hw, int segmentFirst, int segmentLast,
                      double staticShare) {
  LayerFloor f = placedFloor(net, x, hw, segmentFirst, segmentLast, staticShare);
  if (hw.vectors.empty() || !net.layers[static_cast<size_t>(x)].vectorRefusal().empty())
    return f;
  // Any schedule: on the MAC array or a vector unit (docs/directives.md §7,
  // "Vector units"), so the least of each over the placements.
  for (const VectorUnit &v : hw.vectors) {
    if (!v.truncated)
      continue;
    const LayerFloor g = placedFloor(net, x, *v.truncated, segmentFirst, segmentLast, staticShare);
    if (g.latencyCycles < f.latencyCycles) {
      f.latencyCycles = g.latencyCycles, f.dramWords = g.dramWords;
      f.binding = g.binding < 0 ? -1 : g.binding + v.level;
    }
    if (g.energyPj < f.energyPj)
      f.energyPj = g.energyPj, f.staticPj = g.staticPj;
  }
  return f;
}

ScheduleFloors scheduleFloors(const Network &net, const Hardware &hw, const ScheduleResult &r) {
  // The segments in order, each layer in one (a layer no segment lists runs alone).
  std::vector<std::pair<std::vector<int>, bool>> segments;   // layers, pipelined
  std::vector<bool> listed(net.layers.size(), false);
  for (const SegmentResult &s : r.segments) {
    segments.emplace_back(s.layers, s.pipelined);
    for (int x : s.layers)
      listed[static_cast<size_t>(x)] = true;
  }
  for (size_t x = 0; x < listed.size(); ++x)
    if (!listed[x])
      segments.push_back({{static_cast<int>(x)}, false});
  ScheduleFloors out;
  out.layers.resize(net.layers.size());
  double layersStaticPj = 0;
  for (const auto &[seg, pipelined] : segments) {
    const auto [first, last] = std::minmax_element(seg.begin(), seg.end());
    const double share = pipelined ? 1.0 / static_cast<double>(seg.size()) : 1.0;
    double work = 0, longest = 0, sum = 0, dramWords = 0;
    for (int x : seg) {
      LayerFloor &f = out.layers[static_cast<size_t>(x)] = layerFloor(net, x, hw, *first, *last, share);
      out.total.energyPj += f.energyPj;
      layersStaticPj += f.staticPj;
      work += workOf(net, net.layers[static_cast<size_t>(x)]);
      dramWords += f.dramWords;
      longest = std::max(longest, f.latencyCycles);
      sum += f.latencyCycles;
    }
    // In turn, its layers' latencies add up (§8); together, they share the
    // PEs and the DRAM channel.
    out.total.latencyCycles += pipelined ? std::max(longest, cyclesFloor(hw, work, dramWords).first) : sum;
    out.total.dramWords += dramWords;
  }
  // The chip leaks for the whole run; the layers' shares may leave some out.
  out.total.staticPj = hw.chipStaticEnergyPj() * out.total.latencyCycles;
  out.total.energyPj += std::max(0.0, out.total.staticPj - layersStaticPj);
  return out;
}

} // namespace dfl
