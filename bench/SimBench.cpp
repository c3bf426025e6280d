// The simulator's speed (issue 12): per layer of a solved schedule, the
// JIT-compiled kernel with its counters on and off against a native loop
// nest of the same layer compiled into this benchmark at -O2 (the
// independent reference, backend/Reference.h), measured side by side in one
// run; the kernel's compile time (IR generation, -O2, machine code); and the
// whole network's simulation (`dflc sim`'s work) end to end.
//
// "plain" is a convolution's plain loop nest (plainConv): the yardstick of
// the "kernels without counters reach 0.8 of a native loop nest".
// The native, plain and kernel times are the running thread's CPU time,
// the four taken in turn in each round; a ratio is the median of the
// rounds' ratios.
// A layer of a segment split into instances runs as the simulator runs it,
// piece by piece (its kernel time and compile: all its pieces'); its plain
// loop nest is the whole layer's.
//
// Usage: dflc_sim_bench NET.dfl HW.dfl [--batch N] [--reps R] [--layers A,B,...] [--no-whole]
#include "backend/Jit.h"
#include "backend/KernelRun.h"
#include "backend/Reference.h"
#include "backend/Simulator.h"
#include "driver/Compilation.h"
#include "support/Format.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

using namespace dfl;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// The calling thread's CPU time of f, in ms: on a shared machine the
/// load lengthens the wall time, much less the CPU time.
template <class F> double timeMs(F f) {
  auto cpu = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  };
  const double start = cpu();
  f();
  return cpu() - start;
}

/// The "native loop nest" of a convolution: its seven loops (n, k,
/// xo, yo, then c, r, s into a register) over the DRAM tensors as the
/// reference lays them out, no buffer levels and no tiling, each tap's
/// padding tested, as one writes a convolution by hand; compiled into this
/// benchmark at -O2 like the reference. Its output, activations applied,
/// must equal the reference's (checked).
std::vector<sim::Word> plainConv(const Network &net, const Layer &l, const sim::TensorStore &store) {
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  const std::vector<sim::Word> &x = store.at(sim::operandName(net, l.operands.at(0))).data;
  const std::vector<sim::Word> &w = store.at(sim::weightName(l)).data;
  const int64_t G = l.groups, Cg = in.C / G, Kg = out.C / G, R = at(l.bounds, Dim::R), S = at(l.bounds, Dim::S);
  const WindowAxis &ax = l.window.x, &ay = l.window.y;
  std::vector<sim::Word> y(static_cast<size_t>(net.batch * out.size()));
  for (int64_t n = 0; n < net.batch; ++n)
    for (int64_t k = 0; k < out.C; ++k)
      for (int64_t xo = 0; xo < out.X; ++xo)
        for (int64_t yo = 0; yo < out.Y; ++yo) {
          uint32_t sum = 0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                const int64_t xi = xo * ax.stride + r * ax.dilation - ax.padBegin;
                const int64_t yi = yo * ay.stride + s * ay.dilation - ay.padBegin;
                if (xi >= 0 && xi < in.X && yi >= 0 && yi < in.Y)
                  sum += static_cast<uint32_t>(x[static_cast<size_t>(((n * in.C + k / Kg * Cg + c) * in.X + xi) * in.Y + yi)]) *
                         static_cast<uint32_t>(w[static_cast<size_t>(((k * Cg + c) * R + r) * S + s)]);
              }
          auto v = static_cast<sim::Word>(sum);
          for (const std::string &a : l.activations)
            v = sim::activate(a, v);
          y[static_cast<size_t>(((n * out.C + k) * out.X + xo) * out.Y + yo)] = v;
        }
  return y;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s NET.dfl HW.dfl [--batch N] [--reps R] [--layers A,B,...] [--no-whole]\n", argv[0]);
    return 2;
  }
  driver::DriverOptions o;
  o.files = {argv[1], argv[2]};
  int reps = 5;
  bool whole = true;
  std::string only;
  for (int i = 3; i < argc; i += 2) {
    if (std::string(argv[i]) == "--no-whole") {
      whole = false, --i;
      continue;
    }
    if (i + 1 >= argc)
      break;
    if (std::string(argv[i]) == "--layers")
      only = "," + std::string(argv[i + 1]) + ",";
    else if (std::string(argv[i]) == "--batch")
      o.batch = std::atoll(argv[i + 1]);
    else if (std::string(argv[i]) == "--reps")
      reps = std::atoi(argv[i + 1]);
  }
  driver::Compilation c(o);
  if (!(c.load() && c.analyze() && c.selectSchedule() && c.solve())) {
    std::fprintf(stderr, "%s: the inputs do not solve\n", argv[0]);
    return 1;
  }
  const Model &model = c.model();
  const Schedule &schedule = c.solution().schedule;
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  Schedule alone = schedule;
  alone.segments.clear();
  ScheduleResult analysis = analyzeSchedule(model, alone);
  const ScheduleResult segmented = analyzeSchedule(model, schedule);   // which segments split

  sim::TensorStore store = sim::seedNetwork(net, 1);
  sim::Jit jit;
  std::vector<double> compileMs, onRatios, offRatios, plainOn, plainOff;
  std::printf("%s on %s, batch %lld, median of %d runs\n", net.name.c_str(), hw.name.c_str(),
              static_cast<long long>(net.batch), reps);
  std::printf("%-18s %12s %10s %10s %10s %10s %9s %9s %9s %9s %9s\n", "layer", "MACs", "native", "plain", "kernel",
              "kernel", "native/", "native/", "plain/", "plain/", "compile");
  std::printf("%-18s %12s %10s %10s %10s %10s %9s %9s %9s %9s %9s\n", "", "", "[ms]", "[ms]", "off [ms]", "on [ms]",
              "off", "on", "off", "on", "[ms]");
  for (const LayerScheduleModel &ls : schedule.layers) {
    const Layer &layer = net.layers[static_cast<size_t>(ls.layer)];
    if (!only.empty() && only.find("," + layer.name + ",") == std::string::npos) {
      sim::TensorStore skipped = sim::referenceOutputs(net, ls.layer, store);
      for (const auto &[name, t] : skipped.tensors())
        store.set(name, t);
      continue;
    }
    std::vector<double> native, on, off, plain;
    sim::TensorStore outputs = sim::referenceOutputs(net, ls.layer, store);
    // A convolution's plain loop nest, checked against the reference.
    const bool isConv = layer.type == LayerType::Conv && layer.operands.size() == 1;
    if (isConv && plainConv(net, layer, store) != outputs.at(layer.name).data) {
      std::fprintf(stderr, "%s: the plain loop nest differs from the reference\n", layer.name.c_str());
      return 1;
    }
    // The kernel as the simulator runs it: a layer of a split segment as
    // its pieces (the piece's schedule over the whole layer is not what
    // runs), each distinct piece compiled once; both kernels' outputs must
    // equal the reference's (checked).
    std::string why;
    std::vector<sim::KernelPlan> plans;
    std::optional<sim::SplitRun> split;
    size_t k = 0;
    if (const SegmentResult *seg = splitSegmentOf(segmented, ls.layer, k)) {
      if ((split = sim::planSplitRun(net, ls.layer, *seg, k, hw, ls, why)))
        plans = split->plans;
    } else if (auto plan = sim::planKernel(net, ls.layer, hw, ls, analysis.layers[static_cast<size_t>(ls.layer)], why)) {
      plans = {*plan};
    }
    if (!plans.empty()) {
      std::vector<sim::CompiledKernel> counted, bare;
      double compile = 0;
      for (size_t i = 0; i < plans.size(); ++i) {
        auto options = [&](bool counters) {
          return split ? sim::pieceKernelOptions(*split, i, {counters}) : sim::KernelOptions{counters};
        };
        counted.push_back(jit.compile(plans[i], options(true)));
        bare.push_back(jit.compile(plans[i], options(false)));
        compileMs.push_back(counted.back().compileMs);
        compile += counted.back().compileMs;
      }
      auto run = [&](const std::vector<sim::CompiledKernel> &kernels) {
        return split ? sim::runSplit(net, ls.layer, *split, kernels, store, outputs.at(layer.name).extent)
                     : sim::runKernel(plans[0], kernels[0], store);
      };
      for (auto *kernels : {&counted, &bare})
        if (run(*kernels).output != outputs.at(layer.name).data) {
          std::fprintf(stderr, "%s: the kernel's output differs from the reference\n", layer.name.c_str());
          return 1;
        }
      // The four side by side in each round, and each ratio the median of
      // the rounds' ratios: a shared machine's speed drifts over seconds,
      // which timing each in a block of its own would charge to one side.
      std::vector<double> nOn, nOff, pOn, pOff;
      sim::TensorStore nativeOut;
      std::vector<sim::Word> plainOut;
      sim::KernelResult kernelOut;
      for (int i = 0; i < reps; ++i) {
        native.push_back(timeMs([&] { nativeOut = sim::referenceOutputs(net, ls.layer, store); }));
        if (isConv)
          plain.push_back(timeMs([&] { plainOut = plainConv(net, layer, store); }));
        on.push_back(timeMs([&] { kernelOut = run(counted); }));
        off.push_back(timeMs([&] { kernelOut = run(bare); }));
        nOn.push_back(native.back() / on.back()), nOff.push_back(native.back() / off.back());
        if (isConv)
          pOn.push_back(plain.back() / on.back()), pOff.push_back(plain.back() / off.back());
      }
      double n = median(native), k1 = median(on), k0 = median(off), p = median(plain);
      onRatios.push_back(median(nOn)), offRatios.push_back(median(nOff));
      if (isConv)
        plainOn.push_back(median(pOn)), plainOff.push_back(median(pOff));
      std::printf("%-18s %12lld %10.3f %10s %10.3f %10.3f %9.3f %9.3f %9s %9s %9.1f", layer.name.c_str(),
                  static_cast<long long>((layer.macs ? layer.macs : layer.ops) * net.batch), n,
                  plain.empty() ? "-" : fmt(p).c_str(), k0, k1, offRatios.back(), onRatios.back(),
                  plain.empty() ? "-" : fmt(plainOff.back()).c_str(), plain.empty() ? "-" : fmt(plainOn.back()).c_str(),
                  compile);
      if (split)
        std::printf("  split: %zu instances, %zu kernels", split->instances.size(), plans.size());
      std::printf("\n");
    } else {
      std::printf("%-18s   not simulated: %s\n", layer.name.c_str(), why.c_str());
    }
    for (const auto &[name, t] : outputs.tensors())
      store.set(name, t);
  }
  std::printf("median native/kernel throughput: counters off %.3f, on %.3f; median compile %.1f ms over %zu kernels\n",
              median(offRatios), median(onRatios), median(compileMs), compileMs.size());
  std::printf("median plain/kernel throughput over %zu convolutions: counters off %.3f, on %.3f\n", plainOff.size(),
              median(plainOff), median(plainOn));
  if (!whole)
    return 0;
  sim::SimResult result;
  const auto start = std::chrono::steady_clock::now();   // wall: simulate runs several threads
  result = sim::simulate(model, schedule, sim::SimOptions{});
  const double wholeMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("whole network (dflc sim: reference, compile, run, compare): %.1f s, %s\n", wholeMs / 1000,
              result.ok() ? "ok" : "FAILED");
  return 0;
}
