// GraphTurbo against its baselines on a cluster/core DSA, per model, side by
// side in one run (docs/graphturbo.md): throughput of the layer-by-layer
// baseline (every result through DDR, TVM-like), of fusion without instances
// (AStitch-like) and of GraphTurbo, the speedups, the tensors per buffer scope
// (the paper's Table 3) and the scheduling time; beside GraphTurbo's, the
// time to rebuild its plan from the schedule it writes (what `dflc check`
// of OUT/schedule.dfl runs) and whether the rebuilt plan costs the same. Each
// model is loaded and scheduled through the driver, as `dflc NET HW --batch B
// -o OUT` runs it.
//
// Usage: dflc_graphturbo_bench HW.dfl NET.dfl:BATCH...   (bench/run_graphturbo_bench.sh)
#include "driver/Compilation.h"
#include "scheduler/graph/WrittenSchedule.h"

#include <chrono>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace dfl;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s HW.dfl NET.dfl:BATCH...\n", argv[0]);
    return 2;
  }
  std::printf("| model | batch | TVM-like /s | AStitch-like /s | GraphTurbo /s | vs TVM-like | vs AStitch-like "
              "| DDR (TVM/AS/GT) | GB (TVM/AS/GT) | LB (TVM/AS/GT) | GT batch/iter | GT sub-graphs | GT instances "
              "| scheduling s (TVM/AS/GT) | GT re-check s | same numbers |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- |\n");
  int failures = 0;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    size_t colon = arg.rfind(':');
    driver::DriverOptions o;
    o.files = {arg.substr(0, colon), argv[1]};
    o.batch = std::stoll(arg.substr(colon + 1));
    driver::Compilation c(o);
    if (!(c.load() && c.analyze() && c.targetsDsa() && c.scheduleOnDsa())) {
      std::fprintf(stderr, "%s: does not schedule on %s\n", arg.c_str(), argv[1]);
      ++failures;
      continue;
    }
    const Network &net = c.model().networks[0];
    const DsaHardware &hw = c.model().dsaHardware[0];
    const graph::DsaComparison &s = c.dsaSchedules();
    const graph::Plan *plans[3] = {&s.layerByLayer, &s.fusionOnly, &s.graphTurbo};
    auto scopes = [&](int scope) {
      return std::to_string(plans[0]->cost.tensors[scope]) + "/" + std::to_string(plans[1]->cost.tensors[scope]) + "/" +
             std::to_string(plans[2]->cost.tensors[scope]);
    };
    const graph::GraphView g(net, hw, s.graphTurbo.clusterBatch);
    std::vector<Issue> issues;
    const auto t0 = std::chrono::steady_clock::now();
    const auto again = graph::planFromSchedule(g, graph::scheduleOf(s.graphTurbo), issues);
    const double recheck = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool same = again && issues.empty() && again->cost.cycles == s.graphTurbo.cost.cycles &&
                      std::equal(std::begin(again->cost.tensors), std::end(again->cost.tensors),
                                 std::begin(s.graphTurbo.cost.tensors));
    failures += !same;
    std::printf("| %s | %lld | %.1f | %.1f | %.1f | %.2fx | %.2fx | %s | %s | %s | %lld | %zu | %zu | %.3f/%.3f/%.3f "
                "| %.3f | %s |\n",
                net.name.c_str(), static_cast<long long>(net.batch), graph::throughput(*plans[0], net, hw),
                graph::throughput(*plans[1], net, hw), graph::throughput(*plans[2], net, hw),
                plans[0]->totalCycles() / plans[2]->totalCycles(), plans[1]->totalCycles() / plans[2]->totalCycles(),
                scopes(2).c_str(), scopes(1).c_str(), scopes(0).c_str(), static_cast<long long>(plans[2]->clusterBatch),
                plans[2]->subGraphs.size(), plans[2]->instances.size(), s.seconds[2], s.seconds[1], s.seconds[0],
                recheck, same ? "yes" : "NO");
  }
  return failures ? 1 : 0;
}
