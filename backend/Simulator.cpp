// The simulator (backend/Simulator.h).
#include "backend/Simulator.h"

#include "backend/Jit.h"
#include "backend/Reference.h"
#include "scheduler/analysis/Instances.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "support/Check.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <set>

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

/// Whether the options simulate layer `name` (an empty list: every layer).
bool wanted(const SimOptions &options, const std::string &name) {
  return options.layers.empty() || std::find(options.layers.begin(), options.layers.end(), name) != options.layers.end();
}

/// One past the last layer to simulate: the reference runs up to there.
size_t runEnd(const Network &net, const SimOptions &options) {
  size_t end = 0;
  for (size_t li = 0; li < net.layers.size(); ++li)
    if (wanted(options, net.layers[li].name))
      end = li + 1;
  return end;
}

/// Refused at the layer where a kernel's arrays pass the limit.
void checkKernelBytes(const CompiledKernel &kernel, int layer, const SimOptions &options) {
  if (int64_t bytes = kernelBytes(kernel); bytes > options.memoryLimitBytes)
    throw LimitError{LimitError::Memory, layer, static_cast<double>(bytes),
                     static_cast<double>(options.memoryLimitBytes), "its kernel's arrays"};
}

/// Of a row-major tensor, positions [s.lo, s.hi) along `axis`.
Tensor sliceAxis(const Tensor &t, size_t axis, Span s) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < t.extent.size(); ++d)
    (d < axis ? outer : inner) *= d == axis ? 1 : t.extent[d];
  Tensor out{t.extent, {}};
  out.extent[axis] = s.size();
  out.data.reserve(static_cast<size_t>(outer * s.size() * inner));
  for (int64_t o = 0; o < outer; ++o) {
    auto from = t.data.begin() + (o * t.extent[axis] + s.lo) * inner;
    out.data.insert(out.data.end(), from, from + s.size() * inner);
  }
  return out;
}

/// `piece` written into `into` at position `at` along `axis` (the inverse of sliceAxis).
void placeAxis(Tensor &into, const Tensor &piece, size_t axis, int64_t at) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < into.extent.size(); ++d)
    (d < axis ? outer : inner) *= d == axis ? 1 : into.extent[d];
  const int64_t rows = piece.extent[axis];
  for (int64_t o = 0; o < outer; ++o)
    std::copy_n(piece.data.begin() + o * rows * inner, rows * inner,
                into.data.begin() + (o * into.extent[axis] + at) * inner);
}

void addCounts(KernelCounts &sum, const KernelCounts &c) {
  sum.levels.resize(std::max(sum.levels.size(), c.levels.size()));
  for (size_t l = 0; l < c.levels.size(); ++l)
    for (size_t r = 0; r < kNumRoles; ++r) {
      sum.levels[l][r].reads += c.levels[l][r].reads;
      sum.levels[l][r].writes += c.levels[l][r].writes;
      sum.levels[l][r].same += c.levels[l][r].same;
    }
  sum.macs += c.macs;
  for (size_t r = 0; r < kNumRoles; ++r)
    for (const auto &[tensor, reads] : c.dramReads[r])
      sum.dramReads[r][tensor] += reads;
}

/// A split layer run as its pieces (planSplitRun, runSplit), each distinct
/// piece's kernel compiled once.
KernelResult runPieces(const Network &net, int li, const SegmentResult &seg, size_t k, const Hardware &hw,
                       const LayerScheduleModel &ls, const TensorStore &store, const Tensor &want, KernelCache &kernels,
                       const SimOptions &options, LayerSim &sim) {
  std::optional<SplitRun> run = planSplitRun(net, li, seg, k, hw, ls, sim.skipped);
  if (!run)
    return {};
  std::vector<CompiledKernel> compiled;
  for (size_t i = 0; i < run->plans.size(); ++i) {
    const KernelOptions o = pieceKernelOptions(*run, i, KernelOptions{true, options.fault, options.unclippedSteps});
    compiled.push_back(kernels.get(run->plans[i], o));
    checkKernelBytes(compiled.back(), li, options);
    sim.compileMs += compiled.back().compileMs;
    sim.ir.push_back(compiled.back().ir);
  }
  return runSplit(net, li, *run, compiled, store, want.extent);
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

/// A layer's kernel run judged: its output against the reference's `want`,
/// its counts (less what its segment keeps on chip) against the analysis'.
void judge(const Network &net, int li, const ScheduleResult &analysis, KernelResult run, const Tensor &want,
           LayerSim &sim) {
  for (const SegmentResult &seg : analysis.segments)
    forwardOnChip(net, li, seg.layers, net.layers[static_cast<size_t>(li)].output, run.counts);
  sim.runMs = run.runMs;
  std::optional<Mismatch> m = firstMismatch(want, Tensor{want.extent, std::move(run.output)});
  sim.outputEqual = !m;
  if (m)
    sim.mismatchAt = m->offset, sim.mismatchIndex = m->index, sim.got = m->actual, sim.want = m->expected;
  const LayerResult &a = analysis.layers[static_cast<size_t>(li)];
  sim.exactClaimed = a.exactCounts;
  compareCounts(run.counts, a, sim);
}

/// The layers' results in layer order, their kernels running on up to
/// `jobs` threads meanwhile: a layer's kernel needs only its own inputs (a
/// copy) and the reference's output, so the runs are independent and what
/// each finds does not depend on the threads or their timing.
class LayerRuns {
public:
  explicit LayerRuns(size_t jobs) : jobs_(std::max<size_t>(1, jobs)) {}
  void done(LayerSim sim) {
    std::promise<LayerSim> p;
    p.set_value(std::move(sim));
    results_.push_back(p.get_future());
  }
  template <class Job> void run(Job job) {
    while (running_.size() >= jobs_) {
      results_[running_.front()].wait();
      running_.pop_front();
    }
    running_.push_back(results_.size());
    results_.push_back(std::async(std::launch::async, std::move(job)));
  }
  /// Every result, in order; a run's error is thrown at its layer, as it would be run in turn.
  std::vector<LayerSim> collect() {
    std::vector<LayerSim> out;
    for (std::future<LayerSim> &f : results_)
      out.push_back(f.get());
    return out;
  }

private:
  size_t jobs_;
  std::vector<std::future<LayerSim>> results_;
  std::deque<size_t> running_;
};

} // namespace

double layerWork(const Layer &layer) {
  double points = 1;
  for (Dim d : {Dim::N, Dim::C, Dim::K, Dim::Xo, Dim::Yo, Dim::R, Dim::S})
    if (!(layer.channelWise() && d == Dim::K))   // one channel dim: K is C
      points *= static_cast<double>(at(layer.bounds, d));
  return points * static_cast<double>(std::max<size_t>(1, layer.operands.size()));
}

double runWork(const Network &net, const SimOptions &options) {
  double work = 0;
  for (size_t li = 0, end = runEnd(net, options); li < end; ++li)
    work += layerWork(net.layers[li]) * (wanted(options, net.layers[li].name) ? 2 : 1);
  return work;
}

bool SimResult::ok() const {
  return std::all_of(layers.begin(), layers.end(), [](const LayerSim &l) { return l.ok(); });
}

namespace {

/// What a run does with a layer: nothing, its reference, or its reference and its kernel.
enum class LayerRun { None, Reference, Kernel };

/// Which layers a run computes (docs/simulator.md, "Limits of the kernels",
/// "Seeded operands"), and the work of those, before anything is allocated or
/// run. A run whose work (runWork) fits the bound runs the reference of every
/// layer up to the last chosen and the kernels of the chosen. Past it, a run of
/// chosen layers runs those alone (their other operands are seeded) and a whole
/// network's run leaves out each layer whose own work passes the bound (its
/// readers' operands are seeded): a layer is refused (E1307) only if chosen
/// and its own reference and kernel pass the bound.
struct RunPlan {
  std::vector<LayerRun> layers;
  bool seedPrefix = false;   // a run of chosen layers past the bound
  double work = 0;
  /// Per tensor a layer run reads, the last such layer: the run drops it after.
  std::map<std::string, size_t> lastRead;
};

/// Which layers run, by their work.
RunPlan planWork(const Network &net, const SimOptions &options, SimResult &result) {
  const size_t end = runEnd(net, options);
  const bool whole = options.layers.empty();
  RunPlan plan;
  plan.layers.assign(end, LayerRun::None);
  plan.seedPrefix = !whole && runWork(net, options) > options.workLimit;
  for (size_t li = 0; li < end; ++li) {
    const Layer &l = net.layers[li];
    const bool chosen = wanted(options, l.name);
    if (plan.seedPrefix && !chosen)
      continue;
    const double own = layerWork(l) * (chosen ? 2 : 1);
    if (!plan.seedPrefix && plan.work + own <= options.workLimit) {
      plan.layers[li] = chosen ? LayerRun::Kernel : LayerRun::Reference;
      plan.work += own;
    } else if (own > options.workLimit && whole) {
      if (!result.workCut)
        result.workCut = SimResult::WorkCut{static_cast<int>(li), own, 0};
      ++result.workCut->layers;
    } else if (own > options.workLimit) {
      throw LimitError{LimitError::Work, static_cast<int>(li), own, options.workLimit, "its reference and its kernel"};
    } else {   // a whole network's run past the sum of its layers; or a chosen layer, seeded
      plan.layers[li] = LayerRun::Kernel;
      plan.work += own;
    }
  }
  return plan;
}

/// The tensors the run holds, layer by layer: what a layer reads (seeded
/// when first read) stays until its last reader has run; what it writes
/// (at most batch·max(ofm, ifm) + its weights' words) until then too.
/// Refused at the first layer where they would pass the memory limit.
void planMemory(const Network &net, const SimOptions &options, RunPlan &plan) {
  std::map<std::string, double> words;   // per tensor read, its words
  for (size_t li = 0; li < plan.layers.size(); ++li)
    if (plan.layers[li] != LayerRun::None)
      for (const auto &[name, extent] : layerReads(net, static_cast<int>(li))) {
        plan.lastRead[name] = li;
        words[name] = static_cast<double>(elementCount(extent));
      }
  std::set<std::string> live;
  double held = 0;
  for (size_t li = 0; li < plan.layers.size(); ++li) {
    if (plan.layers[li] == LayerRun::None)
      continue;
    const Layer &l = net.layers[li];
    for (const auto &[name, extent] : layerReads(net, static_cast<int>(li)))
      if (live.insert(name).second)
        held += words[name];
    const double written = static_cast<double>(net.batch) *
                               static_cast<double>(std::max(l.ofmShape.size(), l.ifmShape.size())) +
                           (l.output == TensorRole::Wgt ? static_cast<double>(l.wgtSize) : 0);
    if ((held + written) * sizeof(Word) > static_cast<double>(options.memoryLimitBytes))
      throw LimitError{LimitError::Memory, static_cast<int>(li), (held + written) * sizeof(Word),
                       static_cast<double>(options.memoryLimitBytes), "the tensors the run holds at it"};
    for (const std::string &name : outputNames(net, static_cast<int>(li)))
      if (auto it = plan.lastRead.find(name); it != plan.lastRead.end() && it->second > li && live.insert(name).second)
        held += words[name];
    for (auto it = live.begin(); it != live.end();)
      if (plan.lastRead.at(*it) <= li)
        held -= words[*it], it = live.erase(it);
      else
        ++it;
  }
}

/// Which layers a run computes (docs/simulator.md, "Limits of the kernels",
/// "Seeded operands"), and the work of those, before anything is allocated or
/// run. A run whose work (runWork) fits the bound runs the reference of every
/// layer up to the last chosen and the kernels of the chosen. Past it, a run of
/// chosen layers runs those alone (their other operands are seeded) and a whole
/// network's run leaves out each layer whose own work passes the bound (its
/// readers' operands are seeded): a layer is refused (E1307) only if chosen
/// and its own reference and kernel pass the bound.
RunPlan planRun(const Network &net, const SimOptions &options, SimResult &result) {
  RunPlan plan = planWork(net, options, result);
  planMemory(net, options, plan);
  return plan;
}

} // namespace

SimResult simulate(const Model &model, const Schedule &schedule, const SimOptions &options) {
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  ScheduleResult analysis = analyzeSchedule(model, schedule);
  DFLC_CHECK(analysis.complete && analysis.valid) << "simulate() takes a complete, valid schedule";

  std::vector<const LayerScheduleModel *> directives = layerDirectives(net, schedule);
  SimResult result;
  const RunPlan run = planRun(net, options, result);
  const size_t end = run.layers.size();
  const double totalWork = run.work;
  double work = 0;
  size_t todo = 0, done = 0;
  for (LayerRun r : run.layers)
    todo += r == LayerRun::Kernel;
  // A tensor is seeded when first read (the network's inputs, weights and
  // output gradients no layer computes, as seedNetwork seeds them, and a
  // stand-in for what a layer left out would compute) and dropped after its
  // last reader (planMemory).
  TensorStore store;
  std::set<std::string> written;   // the tensors some layer writes: seeded, they stand in for it
  for (size_t li = 0; li < net.layers.size(); ++li)
    for (const std::string &name : outputNames(net, static_cast<int>(li)))
      written.insert(name);
  std::map<std::string, std::set<std::string>> standIns;   // per tensor, the seeded stand-ins it derives from
  const int threads = options.compileThreads < 0 ? defaultCompileThreads() : options.compileThreads;
  KernelCache kernels(threads);
  LayerRuns runs(static_cast<size_t>(threads));
  // The kernels of the layers simulated whole compile in the background, in
  // layer order, while the reference runs (a split layer's pieces compile as
  // they come). Each is planned and generated once, here.
  std::vector<std::optional<KernelPlan>> plans(end);
  std::vector<std::string> whys(end);
  std::vector<size_t> tickets(end);
  for (size_t li = 0; li < end; ++li) {
    size_t k = 0;
    if (run.layers[li] == LayerRun::Kernel && directives[li] && !splitSegmentOf(analysis, static_cast<int>(li), k))
      if ((plans[li] = planKernel(net, static_cast<int>(li), hw, *directives[li], analysis.layers[li], whys[li])))
        tickets[li] = kernels.prefetch(*plans[li], KernelOptions{true, options.fault, options.unclippedSteps});
  }
  // The reference runs up to the last layer simulated, to give each its inputs.
  for (size_t li = 0; li < end; ++li) {
    const Layer &layer = net.layers[li];
    if (run.layers[li] == LayerRun::None) {
      if (!run.seedPrefix && wanted(options, layer.name)) {   // past the bound alone
        LayerSim sim;
        sim.layer = layer.name;
        sim.skipped = kPastWorkBound;
        runs.done(std::move(sim));
      }
      continue;
    }
    // What a layer left out would have computed is seeded, as a network input is.
    const std::vector<std::pair<std::string, std::vector<int64_t>>> reads = layerReads(net, static_cast<int>(li));
    std::set<std::string> from;
    for (const auto &[name, extent] : reads) {
      if (!store.contains(name)) {
        const int64_t size = elementCount(extent);
        store.set(name, {extent, seedTensor(name, size, options.seed)});
        if (written.count(name))
          standIns[name] = {name};
      }
      if (auto it = standIns.find(name); it != standIns.end())
        from.insert(it->second.begin(), it->second.end());
    }
    TensorStore outputs = referenceOutputs(net, static_cast<int>(li), store);
    work += layerWork(layer);
    if (run.layers[li] == LayerRun::Kernel) {
      if (options.progress)
        options.progress({done, todo, layer.name, work, totalWork});
      LayerSim sim;
      sim.layer = layer.name;
      if (!from.empty()) {
        sim.seeded = run.seedPrefix ? kSeededPrefix : kSeededPastBound;
        sim.seededTensors.assign(from.begin(), from.end());
      }
      size_t k = 0;
      const SegmentResult *split = directives[li] ? splitSegmentOf(analysis, static_cast<int>(li), k) : nullptr;
      std::optional<KernelPlan> &plan = plans[li];
      const std::string &why = whys[li];
      if (split) {
        KernelResult pieces = runPieces(net, static_cast<int>(li), *split, k, hw, *directives[li], store,
                                        outputs.at(layer.name), kernels, options, sim);
        if (sim.skipped.empty())
          judge(net, static_cast<int>(li), analysis, std::move(pieces), outputs.at(layer.name), sim);
        runs.done(std::move(sim));
      } else if (!plan) {
        sim.skipped = why.empty() ? "no directives" : why;
        runs.done(std::move(sim));
      } else {
        // What the layer writes: its own tensor forward, a gradient backward.
        Tensor want = outputs.at(plan->role(plan->output).tensor());
        TensorStore inputs;
        for (const auto &[name, extent] : reads)
          inputs.set(name, store.at(name));
        runs.run([&, li, ticket = tickets[li], plan = std::move(*plan), inputs = std::move(inputs),
                  want = std::move(want), sim = std::move(sim)]() mutable {
          CompiledKernel kernel = kernels.get(ticket);
          checkKernelBytes(kernel, static_cast<int>(li), options);
          KernelResult kernelRun = runKernel(plan, kernel, inputs);
          sim.compileMs = kernel.compileMs;
          sim.ir.push_back(std::move(kernel.ir));
          judge(net, static_cast<int>(li), analysis, std::move(kernelRun), want, sim);
          return std::move(sim);
        });
      }
      ++done;
      work += layerWork(layer);
    }
    // Consumers read the reference's outputs: one wrong layer is reported once.
    for (const auto &[name, tensor] : outputs.tensors()) {
      if (auto it = run.lastRead.find(name); it == run.lastRead.end() || it->second <= li)
        continue;   // no later layer reads it
      store.set(name, tensor);
      if (from.empty())
        standIns.erase(name);
      else
        standIns[name] = from;
    }
    for (const auto &[name, extent] : reads)
      if (run.lastRead.at(name) == li)
        store.erase(name);
  }
  result.layers = runs.collect();
  if (options.progress)
    options.progress({done, todo, "", work, totalWork});
  return result;
}

std::optional<SplitRun> planSplitRun(const Network &net, int li, const SegmentResult &seg, size_t k,
                                     const Hardware &hw, const LayerScheduleModel &ls, std::string &why) {
  const Layer &layer = net.layers[static_cast<size_t>(li)];
  SplitRun run;
  run.axis = seg.splitDim == Dim::Yo ? 3 : 2;
  for (const std::vector<Span> &spans : instanceSpans(net, seg.layers, seg.splitDim, seg.instances)) {
    const Span s = spans[k];
    Layer piece = instanceLayer(layer, seg.splitDim, s);
    auto it = std::find_if(run.pieces.begin(), run.pieces.end(), [&](const Layer &p) { return samePiece(p, piece); });
    if (it == run.pieces.end()) {
      Network alone;
      alone.name = net.name;
      alone.batch = net.batch;
      alone.layers = {piece};
      std::vector<Issue> issues;
      const LayerResult analysis = analyzeLayer(alone, 0, hw, &ls, issues);
      std::optional<KernelPlan> plan = planKernel(alone, 0, hw, ls, analysis, why);
      if (!plan)
        return std::nullopt;
      run.pieces.push_back(std::move(piece));
      run.plans.push_back(std::move(*plan));
      run.runs.push_back(0);
      it = run.pieces.end() - 1;
    }
    const auto p = static_cast<size_t>(it - run.pieces.begin());
    ++run.runs[p];
    run.instances.push_back({p, s, instanceInputSpan(layer, seg.splitDim, s)});
  }
  return run;
}

KernelOptions pieceKernelOptions(const SplitRun &run, size_t i, KernelOptions options) {
  options.unclippedSteps /= static_cast<double>(run.runs[i]);
  return options;
}

KernelResult runSplit(const Network &net, int li, const SplitRun &run,
                      const std::vector<CompiledKernel> &kernels, const TensorStore &store,
                      const std::vector<int64_t> &extent) {
  const Layer &layer = net.layers[static_cast<size_t>(li)];
  Tensor full{extent, std::vector<Word>(static_cast<size_t>(elementCount(extent)), 0)};
  KernelResult out;
  for (const SplitRun::Instance &i : run.instances) {
    // Its inputs: the positions the piece reads of each; the weights whole.
    TensorStore inputs;
    for (const Access &a : run.pieces[i.piece].nest.accesses)
      if (a.role != layer.output && !inputs.contains(a.tensor))
        inputs.set(a.tensor, a.role == TensorRole::Ifm ? sliceAxis(store.at(a.tensor), run.axis, i.in)
                                                       : store.at(a.tensor));
    KernelResult piece = runKernel(run.plans[i.piece], kernels[i.piece], inputs);
    Tensor part{extent, std::move(piece.output)};
    part.extent[run.axis] = i.out.size();
    placeAxis(full, part, run.axis, i.out.lo);
    addCounts(out.counts, piece.counts);
    out.runMs += piece.runMs;
  }
  out.output = std::move(full.data);
  return out;
}

} // namespace dfl::sim
