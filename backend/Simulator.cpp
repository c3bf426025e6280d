// The simulator (backend/Simulator.h).
#include "backend/Simulator.h"

#include "backend/Jit.h"
#include "backend/Reference.h"
#include "support/Check.h"

#include <algorithm>
#include <cmath>

namespace dfl::sim {
namespace {

/// A segment keeps its intermediate tensors on chip (docs/directives.md §9):
/// the kernel's counts less its DRAM reads of the tensors its segment's other
/// layers produce and, where it forwards its output and no layer outside the
/// segment reads it, its final write-back of each word (the DRAM writes that
/// did not read a partial sum back).
void forwardOnChip(const Network &net, int li, const std::vector<int> &segment, TensorRole output,
                   KernelCounts &k) {
  auto inSegment = [&](int l) { return std::find(segment.begin(), segment.end(), l) != segment.end(); };
  if (segment.size() < 2 || !inSegment(li))
    return;
  std::array<KernelCounts::Role, kNumRoles> &dram = k.levels.back();
  for (size_t r = 0; r < kNumRoles; ++r)
    if (static_cast<TensorRole>(r) != output)
      for (const auto &[tensor, reads] : k.dramReads[r])
        for (int p : segment)
          if (p != li && net.layers[static_cast<size_t>(p)].name == tensor)
            dram[r].reads -= reads;
  if (net.readBy(li, segment) && !net.readOutside(li, inSegment)) {
    // Each word's first write-back reads nothing back; the later ones each
    // read one partial sum: those stay.
    KernelCounts::Role &out = dram[static_cast<size_t>(output)];
    out.writes = out.reads;
  }
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

/// Compares every count of a layer's kernel with the analysis'.
void compareCounts(const KernelCounts &k, const LayerResult &a, LayerSim &out) {
  const char *kinds[] = {"reads", "writes", "same-level"};
  for (size_t l = 0; l < a.levels.size() && l < k.levels.size(); ++l)
    for (size_t r = 0; r < kNumRoles; ++r) {
      const LevelAccesses &acc = a.levels[l].accesses;
      const KernelCounts::Role &c = k.levels[l][r];
      double counted[] = {c.reads, c.writes, c.same}, analysed[] = {acc.reads[r], acc.writes[r], acc.sameLevel[r]};
      for (int i = 0; i < 3; ++i) {
        if (counted[i] == 0 && analysed[i] == 0)
          continue;
        CountCheck check{static_cast<int>(l), static_cast<TensorRole>(r), kinds[i], counted[i], analysed[i],
                         near(counted[i], analysed[i])};
        out.countsEqual = out.countsEqual && check.equal;
        out.counts.push_back(check);
      }
    }
  out.macs = k.macs;
  out.analysedMacs = a.work;
  out.countsEqual = out.countsEqual && near(k.macs, a.work);
}

} // namespace

bool SimResult::ok() const {
  return std::all_of(layers.begin(), layers.end(), [](const LayerSim &l) { return l.ok(); });
}

SimResult simulate(const Model &model, const Schedule &schedule, const SimOptions &options) {
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  ScheduleResult analysis = analyzeSchedule(model, schedule);
  DFLC_CHECK(analysis.complete && analysis.valid) << "simulate() takes a complete, valid schedule";

  std::vector<const LayerScheduleModel *> directives = layerDirectives(net, schedule);
  auto wanted = [&](const std::string &name) {
    return options.layers.empty() ||
           std::find(options.layers.begin(), options.layers.end(), name) != options.layers.end();
  };
  size_t todo = 0, done = 0, end = 0;
  for (size_t li = 0; li < net.layers.size(); ++li)
    if (wanted(net.layers[li].name))
      ++todo, end = li + 1;

  // The run keeps every tensor it has made: refuse at the layer that would
  // take it past the limit, before allocating any.
  double words = 0;
  for (const Input &in : net.inputs)
    words += static_cast<double>(net.batch) * static_cast<double>(in.shape.size());
  for (size_t li = 0; li < end; ++li) {
    const Layer &l = net.layers[li];
    words += static_cast<double>(net.batch) * static_cast<double>(std::max(l.ofmShape.size(), l.ifmShape.size())) +
             static_cast<double>(l.wgtSize);
    if (words * sizeof(Word) > static_cast<double>(options.memoryLimitBytes))
      throw MemoryError{l.name, static_cast<int64_t>(std::min(words * sizeof(Word), 9e18))};
  }
  TensorStore store = seedNetwork(net, options.seed);
  Jit jit;
  SimResult result;
  // The reference runs up to the last layer simulated, to give each its inputs.
  for (size_t li = 0; li < end; ++li) {
    const Layer &layer = net.layers[li];
    TensorStore outputs = referenceOutputs(net, static_cast<int>(li), store);
    if (wanted(layer.name)) {
      if (options.progress)
        options.progress(done, todo, layer.name);
      LayerSim sim;
      sim.layer = layer.name;
      std::string why;
      std::optional<KernelPlan> plan =
          directives[li] ? planKernel(net, static_cast<int>(li), hw, *directives[li], analysis.layers[li], why)
                         : std::nullopt;
      if (!plan) {
        sim.skipped = why.empty() ? "no directives" : why;
      } else {
        CompiledKernel k = jit.compile(*plan, KernelOptions{true, options.fault});
        if (int64_t bytes = kernelBytes(k); bytes > options.memoryLimitBytes)
          throw MemoryError{layer.name, bytes};
        KernelResult run = runKernel(*plan, k, store);
        for (const SegmentResult &seg : analysis.segments)
          forwardOnChip(net, static_cast<int>(li), seg.layers, plan->output, run.counts);
        sim.compileMs = k.compileMs, sim.runMs = run.runMs;
        sim.ir = std::move(k.ir);
        const Tensor &want = outputs.at(plan->role(plan->output).tensor());
        std::optional<Mismatch> m = firstMismatch(want, Tensor{want.extent, std::move(run.output)});
        sim.outputEqual = !m;
        if (m)
          sim.mismatchAt = m->offset, sim.mismatchIndex = m->index, sim.got = m->actual, sim.want = m->expected;
        sim.exactClaimed = analysis.layers[li].exactCounts;
        compareCounts(run.counts, analysis.layers[li], sim);
      }
      result.layers.push_back(std::move(sim));
      ++done;
    }
    // Consumers read the reference's outputs: one wrong layer is reported once.
    for (const auto &[name, tensor] : outputs.tensors())
      store.set(name, tensor);
  }
  if (options.progress)
    options.progress(done, todo, "");
  return result;
}

} // namespace dfl::sim
