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
  double reads = 0, writes = 0;   // in `word`s
  for (TensorRole r : l.roles()) {
    const double width = ws.held[static_cast<size_t>(r)];
    reads += (r == TensorRole::Ifm && r != l.output ? points * operands : points) * width;
    writes += r == l.output ? points * width : 0;
  }
  return work * hw.macEnergyPj + reads * hw.levels[0].readEnergyPj + writes * hw.levels[0].writeEnergyPj;
}

DramFloor dramFloor(const Network &net, int x, const Hardware &hw, int segmentLast) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  DramFloor f;
  if (!l.forwardOf.empty() || hw.levels.size() < 2)
    return f;
  const WordScale ws = hw.wordScale(l.output);
  if (l.hasWeights() && !wgtPerSample(l.nest))
    f.wgtReads = static_cast<double>(l.wgtSize) * ws.data[static_cast<size_t>(TensorRole::Wgt)];
  if (!net.readUpTo(x, segmentLast))
    f.outputWrites = static_cast<double>(l.ofmShape.size() * net.batch) * ws.data[static_cast<size_t>(l.output)];
  return f;
}

namespace {

/// The cycles `work` points and `dramWords` DRAM words take at least.
double cyclesFloor(const Hardware &hw, double work, double dramWords) {
  double cycles = work / static_cast<double>(std::max<int64_t>(1, hw.chipUnits(0)));
  if (const Level &outer = hw.levels.back(); outer.bandwidthBytesPerCycle)
    cycles = std::max(cycles, dramWords * static_cast<double>(hw.wordBytes()) / *outer.bandwidthBytesPerCycle);
  return cycles;
}

double workOf(const Network &net, const Layer &l) { return static_cast<double>((l.macs ? l.macs : l.ops) * net.batch); }

} // namespace

LayerFloor layerFloor(const Network &net, int x, const Hardware &hw, int segmentLast) {
  const Layer &l = net.layers[static_cast<size_t>(x)];
  LayerFloor f;
  const DramFloor dram = dramFloor(net, x, hw, segmentLast);
  const Level &outer = hw.levels.back();
  f.dramWords = dram.words();
  f.latencyCycles = cyclesFloor(hw, workOf(net, l), f.dramWords);
  f.energyPj = computeFloorPj(net, x, hw);
  for (const std::string &a : l.activations)   // each fused activation once per output element
    if (auto it = hw.activationEnergyPj.find(a); it != hw.activationEnergyPj.end())
      f.energyPj += it->second * static_cast<double>(l.ofmShape.size() * net.batch);
  f.energyPj += dram.wgtReads * outer.readEnergyPj + dram.outputWrites * outer.writeEnergyPj;
  return f;
}

ScheduleFloors scheduleFloors(const Network &net, const Hardware &hw, const ScheduleResult &r) {
  // The segments in order, each layer in one (a layer no segment lists runs alone).
  std::vector<std::vector<int>> segments;
  std::vector<bool> listed(net.layers.size(), false);
  for (const SegmentResult &s : r.segments) {
    segments.push_back(s.layers);
    for (int x : s.layers)
      listed[static_cast<size_t>(x)] = true;
  }
  for (size_t x = 0; x < listed.size(); ++x)
    if (!listed[x])
      segments.push_back({static_cast<int>(x)});
  ScheduleFloors out;
  out.layers.resize(net.layers.size());
  for (const std::vector<int> &seg : segments) {
    const int last = *std::max_element(seg.begin(), seg.end());
    double work = 0, longest = 0, dramWords = 0;
    for (int x : seg) {
      LayerFloor &f = out.layers[static_cast<size_t>(x)] = layerFloor(net, x, hw, last);
      out.total.energyPj += f.energyPj;
      work += workOf(net, net.layers[static_cast<size_t>(x)]);
      dramWords += f.dramWords;
      longest = std::max(longest, f.latencyCycles);
    }
    // Its layers share the PEs and the DRAM channel, whether they run together or in turn.
    out.total.latencyCycles += std::max(longest, cyclesFloor(hw, work, dramWords));
    out.total.dramWords += dramWords;
  }
  out.total.energyPj += hw.chipStaticEnergyPj() * out.total.latencyCycles;
  return out;
}

} // namespace dfl
