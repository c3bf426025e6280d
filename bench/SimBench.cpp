// The simulator's speed (issue 12): per layer of a solved schedule, the
// JIT-compiled kernel with its counters on and off against a native loop
// nest of the same layer compiled into this benchmark at -O2 (the
// independent reference, backend/Reference.h), measured side by side in one
// run; the kernel's compile time (IR generation, -O2, machine code); and the
// whole network's simulation (`dflc sim`'s work) end to end.
//
// The native and kernel times are the running thread's CPU time.
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

  sim::TensorStore store = sim::seedNetwork(net, 1);
  sim::Jit jit;
  std::vector<double> compileMs, onRatios, offRatios;
  std::printf("%s on %s, batch %lld, median of %d runs\n", net.name.c_str(), hw.name.c_str(),
              static_cast<long long>(net.batch), reps);
  std::printf("%-18s %12s %10s %10s %10s %9s %9s %9s\n", "layer", "MACs", "native", "kernel", "kernel", "native/",
              "native/", "compile");
  std::printf("%-18s %12s %10s %10s %10s %9s %9s %9s\n", "", "", "[ms]", "off [ms]", "on [ms]", "off", "on", "[ms]");
  for (const LayerScheduleModel &ls : schedule.layers) {
    const Layer &layer = net.layers[static_cast<size_t>(ls.layer)];
    if (!only.empty() && only.find("," + layer.name + ",") == std::string::npos) {
      sim::TensorStore skipped = sim::referenceOutputs(net, ls.layer, store);
      for (const auto &[name, t] : skipped.tensors())
        store.set(name, t);
      continue;
    }
    std::vector<double> native, on, off;
    sim::TensorStore outputs;
    for (int i = 0; i < reps; ++i)
      native.push_back(timeMs([&] { outputs = sim::referenceOutputs(net, ls.layer, store); }));
    std::string why;
    auto plan = sim::planKernel(net, ls.layer, hw, ls, analysis.layers[static_cast<size_t>(ls.layer)], why);
    if (plan) {
      sim::CompiledKernel counted = jit.compile(*plan, {true});
      sim::CompiledKernel bare = jit.compile(*plan, {false});
      compileMs.push_back(counted.compileMs);
      for (int i = 0; i < reps; ++i) {
        on.push_back(timeMs([&] { sim::runKernel(*plan, counted, store); }));
        off.push_back(timeMs([&] { sim::runKernel(*plan, bare, store); }));
      }
      double n = median(native), k1 = median(on), k0 = median(off);
      onRatios.push_back(n / k1), offRatios.push_back(n / k0);
      std::printf("%-18s %12lld %10.3f %10.3f %10.3f %9.3f %9.3f %9.1f\n", layer.name.c_str(),
                  static_cast<long long>((layer.macs ? layer.macs : layer.ops) * net.batch), n, k0, k1, n / k0,
                  n / k1, counted.compileMs);
    } else {
      std::printf("%-18s   not simulated: %s\n", layer.name.c_str(), why.c_str());
    }
    for (const auto &[name, t] : outputs.tensors())
      store.set(name, t);
  }
  std::printf("median native/kernel throughput: counters off %.3f, on %.3f; median compile %.1f ms over %zu kernels\n",
              median(offRatios), median(onRatios), median(compileMs), compileMs.size());
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
