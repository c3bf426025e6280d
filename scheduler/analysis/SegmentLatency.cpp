// The latency of a spatially pipelined segment (scheduler/analysis/SegmentLatency.h).
#include "scheduler/analysis/SegmentLatency.h"

#include "scheduler/analysis/StepBoxes.h"

#include "support/Check.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

namespace dfl {
namespace {

using Region = StepRegion;
using Box = IntervalBox;

/// The edge's samples (p and c positions in the segment); none if c reads nothing of p.
SegmentEdgeTiming edge(const std::vector<Region> &regions, int p, int c) {
  const Region &pr = regions[static_cast<size_t>(p)], &cr = regions[static_cast<size_t>(c)];
  SegmentEdgeTiming e;
  e.producer = p, e.consumer = c;
  const std::string &tensor = pr.output->tensor;
  bool reads = std::any_of(cr.layer->nest.accesses.begin(), cr.layer->nest.accesses.end(),
                           [&](const Access &a) { return a.role != cr.layer->output && a.tensor == tensor; });
  if (!reads)
    return e;
  if (pr.boxed() && cr.folds) {
    Box all;
    for (int64_t x : pr.output->extent)
      all.push_back({0, x - 1});
    std::optional<int64_t> first = cr.firstReader(tensor, all);
    if (first) {
      e.derived = true;
      auto sample = [&](int64_t j) {
        if (std::optional<Box> b = cr.reads(tensor, cr.point(j), true))
          e.samples.push_back({j, pr.lastWriter(*b)});
      };
      sample(*first);
      // The end of the first iteration of each update (outer ones at 0).
      int64_t inner = 1;
      for (size_t i = cr.updates.size(); i-- > 0;) {
        inner *= cr.updates[i].count;
        if (inner - 1 > *first)
          sample(inner - 1);
      }
      std::optional<int64_t> last = cr.firstReader(tensor, pr.lastStepBox());
      e.samples.push_back({last.value_or(cr.steps - 1), pr.steps - 1});
      return e;
    }
  }
  // Perfect overlap: step j needs the producer's first ⌈(j+1)·S_p/S_c⌉ steps.
  e.samples.push_back({0, (pr.steps + cr.steps - 1) / cr.steps - 1});
  e.samples.push_back({cr.steps - 1, pr.steps - 1});
  return e;
}

} // namespace

std::optional<double> steppedCycles(const SegmentSteps &s, const std::vector<double> &stepCycles) {
  if (!s.derived)
    return std::nullopt;
  std::vector<EdgeWaits> waits;
  std::vector<int64_t> slots;
  for (const EdgeSteps &e : s.edges) {
    waits.push_back({e.producer, e.consumer, e.rawWait, e.warWait});
    slots.push_back(e.slots());
  }
  StepRun run = runSteps(s.steps, waits, slots, stepCycles);
  if (run.done != s.steps)
    return std::nullopt;   // deadlocked
  return run.cycles;
}

PipelinedTiming pipelinedTiming(const Network &net, const Hardware &hw, const std::vector<int> &layers,
                                const std::vector<const LayerScheduleModel *> &schedules,
                                const std::vector<const LayerResult *> &results) {
  DFLC_CHECK(layers.size() == schedules.size() && layers.size() == results.size()) << "one schedule and result a layer";
  DFLC_CHECK(hw.levels.size() >= 2) << "a pipelined segment needs a node level";
  std::vector<Region> regions;
  for (size_t k = 0; k < layers.size(); ++k)
    regions.push_back(stepRegion(net, hw, layers[k], schedules[k], *results[k]));
  PipelinedTiming out;
  // Per region, when its steps may start at the earliest: step j not before
  // T (its samples' producer steps ended). Step i then ends at
  // max(0, T_j over the waits with j <= i + (i − j)·step) + step: the
  // max-plus solution of "after the step before it and after its data".
  std::vector<std::vector<std::pair<int64_t, double>>> waits(regions.size());
  auto ends = [&](size_t r, int64_t i) {
    const double step = out.regions[r].stepCycles;
    double t = static_cast<double>(i + 1) * step;
    for (auto [j, from] : waits[r])
      if (j <= i)
        t = std::max(t, from + static_cast<double>(i - j + 1) * step);
    return t;
  };
  for (size_t c = 0; c < regions.size(); ++c) {
    const Region &cr = regions[c];
    SegmentRegionTiming t;
    t.steps = cr.steps;
    t.stepCycles = cr.latency / static_cast<double>(cr.steps);
    out.regions.push_back(t);
    for (size_t p = 0; p < c; ++p)
      if (regions[p].output) {
        SegmentEdgeTiming e = edge(regions, static_cast<int>(p), static_cast<int>(c));
        for (const StepNeed &n : e.samples)
          waits[c].push_back({n.step, ends(p, n.needs)});
        if (!e.samples.empty())
          out.edges.push_back(std::move(e));
      }
    SegmentRegionTiming &done = out.regions.back();
    for (auto [j, from] : waits[c])
      if (j == 0)
        done.start = std::max(done.start, from);
    done.end = ends(c, cr.steps - 1);
    out.cycles = std::max(out.cycles, done.end);
  }
  return out;
}

} // namespace dfl
