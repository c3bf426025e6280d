// The pipeline simulator over solved schedules (issue 13): for each network,
// the solver's schedule on one hardware template, every pipelined segment's
// dependences derived (isl), its LCUs generated and JIT-compiled, and the
// regions simulated; per segment the simulated latency beside the
// analytical one, the times taken and the violations (there must be none).
//
// Usage: dflc_pipeline_bench HW.dfl NET.dfl... [--batch N] [--regions]
// (--regions: per region its steps and, simulated and modelled
// (scheduler/analysis/SegmentLatency.h), when its first step starts and its last ends.)
#include "backend/PipelineSim.h"
#include "driver/Compilation.h"
#include "model/Schedule.h"
#include "scheduler/analysis/SegmentLatency.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace dfl;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s HW.dfl NET.dfl... [--batch N] [--regions]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> nets;
  int64_t batch = 0;
  bool regions = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--regions")
      regions = true;
    else if (std::string(argv[i]) == "--batch" && i + 1 < argc)
      batch = std::atoll(argv[++i]);
    else
      nets.push_back(argv[i]);
  }
  std::printf("%-12s %-36s %7s %6s %9s %9s %7s %12s %12s %6s %4s\n", "network", "pipelined segment", "regions", "steps",
              "derive", "LCUs", "sim", "simulated", "analytical", "ratio", "viol");
  std::printf("%-12s %-36s %7s %6s %9s %9s %7s %12s %12s %6s %4s\n", "", "", "", "", "[ms]", "[ms]", "[ms]", "[cycles]",
              "[cycles]", "", "");
  int failed = 0;
  for (const std::string &file : nets) {
    driver::DriverOptions o;
    o.files = {file, argv[1]};
    if (batch)
      o.batch = batch;
    driver::Compilation c(o);
    if (!(c.load() && c.analyze() && c.selectSchedule() && c.solve())) {
      std::printf("%s: does not solve\n", file.c_str());
      ++failed;
      continue;
    }
    const Schedule &s = c.solution().schedule;
    std::string net = networkOf(c.model(), s).name;
    auto start = std::chrono::steady_clock::now();
    sim::PipelineResult r = sim::simulatePipelines(c.model(), s);
    double totalMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r.segments.empty())
      std::printf("%-12s (no pipelined segment)\n", net.c_str());
    for (const sim::SegmentRun &g : r.segments) {
      std::string name = std::to_string(g.index) + ": " + g.layers.front() + " .. " + g.layers.back();
      if (!g.skipped.empty() || !g.error.empty()) {
        std::printf("%-12s %-36s %s: %s\n", net.c_str(), name.c_str(), g.error.empty() ? "skipped" : "error",
                    (g.error.empty() ? g.skipped : g.error).c_str());
        failed += !g.ok();
        continue;
      }
      int64_t steps = 0;
      for (const sim::RegionRun &region : g.regions)
        steps += region.steps;
      std::printf("%-12s %-36s %7zu %6lld %9.1f %9.1f %7.2f %12.0f %12.0f %6.3f %4lld\n", net.c_str(), name.c_str(),
                  g.regions.size(), static_cast<long long>(steps), g.deriveMs, g.compileMs, g.runMs, g.cycles,
                  g.analyticalCycles, g.cycles / g.analyticalCycles, static_cast<long long>(g.violationCount()));
      if (regions) {
        // The model's timing of the same segment, region by region.
        ScheduleResult a = analyzeSchedule(c.model(), s);
        const SegmentResult &sr = a.segments.at(static_cast<size_t>(g.index));
        std::vector<const LayerScheduleModel *> schedules;
        std::vector<const LayerResult *> results;
        for (int l : sr.layers) {
          schedules.push_back(nullptr);
          for (const LayerScheduleModel &ls : s.layers)
            if (ls.layer == l)
              schedules.back() = &ls;
          results.push_back(&a.layers[static_cast<size_t>(l)]);
        }
        PipelinedTiming t = pipelinedTiming(networkOf(c.model(), s), hardwareOf(c.model(), s), sr.layers, schedules, results);
        for (size_t r = 0; r < g.regions.size() && r < t.regions.size(); ++r)
          std::printf("    %-28s %5lld steps of %10.1f: simulated %12.0f .. %12.0f, modelled %12.0f .. %12.0f\n",
                      g.regions[r].layer.c_str(), static_cast<long long>(g.regions[r].steps), g.regions[r].stepCycles,
                      g.regions[r].firstStart, g.regions[r].lastEnd, t.regions[r].start, t.regions[r].end);
        for (const SegmentEdgeTiming &e : t.edges) {
          std::printf("    edge %d -> %d%s:", e.producer, e.consumer, e.derived ? "" : " (perfect overlap)");
          for (const StepNeed &n : e.samples)
            std::printf(" step %lld needs %lld;", static_cast<long long>(n.step), static_cast<long long>(n.needs));
          std::printf("\n");
        }
      }
      for (const std::string &v : g.violations)
        std::printf("  %s\n", v.c_str());
      failed += !g.ok();
    }
    std::printf("%-12s all pipelined segments: %.1f ms (analysis, derivation, LCUs, simulation)\n", net.c_str(), totalMs);
  }
  return failed ? 1 : 0;
}
