// The pipeline simulator (backend/PipelineSim.h).
#include "backend/PipelineSim.h"

#include "backend/Jit.h"
#include "backend/KernelPlan.h"
#include "backend/lcu/Lcu.h"
#include "backend/polyhedral/Dependences.h"
#include "backend/polyhedral/Isl.h"
#include "scheduler/analysis/Analysis.h"
#include "scheduler/analysis/StepBoxes.h"
#include "support/Check.h"
#include "support/FiniteJson.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <queue>

namespace dfl::sim {
namespace {

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// What an LCU did, in order: a wait (counter >= value) or a step (counter -1, value the step).
struct Op {
  int64_t counter, value;
};
using Trace = std::vector<Op>;

void recordWait(void *ctx, int64_t counter, int64_t value) { static_cast<Trace *>(ctx)->push_back({counter, value}); }
void recordStep(void *ctx, int64_t step) { static_cast<Trace *>(ctx)->push_back({-1, step}); }

std::string stepText(const StepSpace &s, int64_t step) {
  std::string out = std::to_string(step) + " (" + s.layer + "_step[";
  std::vector<int64_t> p = s.point(step);
  for (size_t i = 0; i < p.size(); ++i)
    out += (i ? ", " : "") + std::to_string(p[i]);
  return out + "])";
}

/// Runs the regions' traces event by event; fills the timings, the buffers'
/// peaks and every violation.
void run(const PipelineDependences &deps, const std::vector<Trace> &traces, size_t listed, ChromeTrace *trace,
         SegmentRun &seg) {
  const std::vector<StepSpace> &regions = deps.regions();
  const std::vector<EdgeDependences> &edges = deps.edges();
  size_t n = regions.size();
  std::vector<int64_t> counter(2 * edges.size(), 0);
  std::vector<size_t> pc(n, 0);
  std::vector<int64_t> current(n, -1);
  std::vector<double> readySince(n, 0);
  std::vector<bool> busy(n, false);
  std::vector<int64_t> live(edges.size(), 0);
  std::vector<std::vector<int64_t>> freeAt(edges.size());
  for (size_t e = 0; e < edges.size(); ++e)
    freeAt[e].assign(static_cast<size_t>(regions[static_cast<size_t>(edges[e].consumer)].steps()), 0);
  using Event = std::pair<double, size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::string where = "segment " + std::to_string(seg.index) + ", edge ";
  std::vector<int> track(n, -1);
  if (trace)
    for (size_t r = 0; r < n; ++r)
      track[r] = trace->track(segmentName(seg), regions[r].layer);
  // Whether a violation is listed (its words, an isl witness among them,
  // are made only then); the others are counted.
  auto listing = [&]() {
    if (seg.violations.size() < listed)
      return true;
    ++seg.unlistedViolations;
    return false;
  };

  auto startStep = [&](size_t r, int64_t step, double now) {
    for (size_t e = 0; e < edges.size(); ++e) {
      const EdgeDependences &ed = edges[e];
      const StepSpace &ps = regions[static_cast<size_t>(ed.producer)], &cs = regions[static_cast<size_t>(ed.consumer)];
      std::string edge = where + ps.layer + " -> " + cs.layer + " (" + ed.tensor + ")";
      if (static_cast<size_t>(ed.consumer) == r) {
        int64_t need = ed.needs[static_cast<size_t>(step)];
        if (need >= 0 && counter[2 * e] <= need && listing())
          seg.violations.push_back("RAW violation in " + edge + ": " + cs.layer + " step " + stepText(cs, step) +
                                   " reads " + deps.witness(static_cast<int>(e), step, need) + ", which " + ps.layer +
                                   " step " + stepText(ps, need) + " writes, but " + ps.layer + " has finished " +
                                   std::to_string(counter[2 * e]) + " steps (cycle " + formatFixed(now, 0) + ")");
      }
      if (static_cast<size_t>(ed.producer) == r) {
        if (step >= ed.slots()) {
          int64_t slot = step - ed.slots(), reader = ed.lastReader[static_cast<size_t>(slot)];
          if (reader >= 0 && counter[2 * e + 1] <= reader && listing())
            seg.violations.push_back("WAR violation in " + edge + ": " + ps.layer + " step " + stepText(ps, step) +
                                     " overwrites the data of its step " + stepText(ps, slot) + ", but " + cs.layer +
                                     " step " + stepText(cs, reader) + " reads " +
                                     deps.witness(static_cast<int>(e), reader, slot) + " of it and " + cs.layer +
                                     " has finished " + std::to_string(counter[2 * e + 1]) + " steps (cycle " +
                                     formatFixed(now, 0) + ")");
        }
        int64_t reader = ed.lastReader[static_cast<size_t>(step)];
        if (reader >= 0 && counter[2 * e + 1] <= reader) {
          live[e] += ed.words[static_cast<size_t>(step)];
          freeAt[e][static_cast<size_t>(reader)] += ed.words[static_cast<size_t>(step)];
          seg.buffers[e].peakWords = std::max(seg.buffers[e].peakWords, live[e]);
        }
      }
    }
    RegionRun &out = seg.regions[r];
    if (trace && !trace->full())
      trace->complete(track[r], out.layer, now, out.stepCycles,
                      {{"layer", out.layer}, {"step", step}, {"tile", regions[r].point(step)}});
    if (current[r] < 0 && out.busy.empty())
      out.firstStart = now;
    out.stallCycles += now - readySince[r];
    double end = now + out.stepCycles;
    if (!out.busy.empty() && out.busy.back().second >= now)
      out.busy.back().second = end;
    else
      out.busy.push_back({now, end});
    current[r] = step;
    busy[r] = true;
    events.push({end, r});
  };
  // Runs region r's trace up to its next step, or to a wait not yet met.
  auto advance = [&](size_t r, double now) {
    const Trace &t = traces[r];
    while (!busy[r] && pc[r] < t.size()) {
      const Op &op = t[pc[r]];
      if (op.counter >= 0 && counter[static_cast<size_t>(op.counter)] < op.value)
        return;
      ++pc[r];
      if (op.counter < 0)
        startStep(r, op.value, now);
    }
  };

  for (size_t r = 0; r < n; ++r)
    advance(r, 0);
  double now = 0;
  while (!events.empty()) {
    now = events.top().first;
    // Every step ending now signals before any waiting region looks.
    while (!events.empty() && events.top().first == now) {
      size_t r = events.top().second;
      events.pop();
      busy[r] = false;
      readySince[r] = now;
      seg.regions[r].lastEnd = now;
      for (size_t e = 0; e < edges.size(); ++e) {
        if (static_cast<size_t>(edges[e].producer) == r)
          ++counter[2 * e];
        if (static_cast<size_t>(edges[e].consumer) == r) {
          ++counter[2 * e + 1];
          live[e] -= freeAt[e][static_cast<size_t>(current[r])];
        }
      }
    }
    for (size_t r = 0; r < n; ++r)
      advance(r, now);
  }
  for (size_t r = 0; r < n; ++r)
    if (pc[r] < traces[r].size() && listing()) {
      const Op &op = traces[r][pc[r]];
      seg.violations.push_back("deadlock in segment " + std::to_string(seg.index) + ": " + regions[r].layer +
                               " waits for counter " + std::to_string(op.counter) + " to reach " +
                               std::to_string(op.value) + ", which stays at " +
                               std::to_string(counter[static_cast<size_t>(op.counter)]));
    }
  // The steps do not contend for the DRAM channel; the segment takes at
  // least the channel's time for all its words (the analysis' rule, §8).
  seg.cycles = std::max(now, seg.dramCycles);
  double firstEnd = now;
  for (const RegionRun &r : seg.regions) {
    seg.fillCycles = std::max(seg.fillCycles, r.firstStart);
    firstEnd = std::min(firstEnd, r.lastEnd);
  }
  seg.drainCycles = now - firstEnd;
}

/// The segment's buffers from its dependences, then each region's LCU,
/// JIT-compiled and run once: its trace.
void deriveAndBuild(const PipelineDependences &deps, const PipelineOptions &options,
                    std::chrono::steady_clock::time_point start, std::unique_ptr<Jit> &jit, std::vector<Trace> &traces,
                    SegmentRun &seg) {
  for (const EdgeDependences &e : deps.edges()) {
    BufferRun b;
    b.tensor = e.tensor;
    b.producer = deps.regions()[static_cast<size_t>(e.producer)].layer;
    b.consumer = deps.regions()[static_cast<size_t>(e.consumer)].layer;
    b.depthSteps = e.slots();
    b.depthWords = mostWords(e.words, e.slots());
    b.minSteps = std::min(e.leastSlots(), deps.regions()[static_cast<size_t>(e.producer)].steps());
    b.neededWords = mostWords(e.words, e.leastSlots());
    seg.buffers.push_back(b);
  }
  seg.deriveMs = msSince(start);

  // Each region's LCU, JIT-compiled and run once: its waits and steps in order.
  start = std::chrono::steady_clock::now();
  if (!jit)
    jit = std::make_unique<Jit>();
  for (size_t r = 0; r < seg.regions.size(); ++r) {
    LcuOptions lo;
    if (options.weakenedSegment == seg.index && options.weakenedEdge >= 0 &&
        static_cast<size_t>(options.weakenedEdge) < deps.edges().size()) {
      const EdgeDependences &w = deps.edges()[static_cast<size_t>(options.weakenedEdge)];
      if (!options.weakenWar && w.consumer == static_cast<int>(r))
        lo.weakenedEdge = options.weakenedEdge;
      if (options.weakenWar && w.producer == static_cast<int>(r))
        lo.weakenedWarEdge = options.weakenedEdge;
    }
    Lcu lcu(deps, static_cast<int>(r), lo);
    seg.regions[r].lcuC = lcu.c();
    lcu.compile(*jit, &seg.regions[r].lcuCompileMs)(&traces[r], recordWait, recordStep);
  }
  seg.compileMs = msSince(start);
}

} // namespace

std::string segmentName(const SegmentRun &s) {
  return "segment " + std::to_string(s.index) + ": " + s.layers.front() + " .. " + s.layers.back();
}

bool PipelineResult::ok() const {
  return std::all_of(segments.begin(), segments.end(), [](const SegmentRun &s) { return s.ok(); });
}

PipelineResult simulatePipelines(const Model &model, const Schedule &schedule, const PipelineOptions &options) {
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  ScheduleResult analysis = analyzeSchedule(model, schedule);
  DFLC_CHECK(analysis.complete && analysis.valid) << "simulatePipelines() takes a complete, valid schedule";
  std::vector<const LayerScheduleModel *> directives = layerDirectives(net, schedule);

  PipelineResult result;
  std::unique_ptr<Jit> jit;
  for (size_t si = 0; si < analysis.segments.size(); ++si) {
    const SegmentResult &sr = analysis.segments[si];
    if (!sr.pipelined || sr.layers.size() < 2)
      continue;
    if (!options.layers.empty() && std::none_of(sr.layers.begin(), sr.layers.end(), [&](int li) {
          const std::string &name = net.layers[static_cast<size_t>(li)].name;
          return std::find(options.layers.begin(), options.layers.end(), name) != options.layers.end();
        }))
      continue;
    SegmentRun seg;
    seg.index = static_cast<int>(si);
    for (const Segment &g : schedule.segments)
      if (g.layers == sr.layers)
        seg.range = g.range;
    seg.analyticalCycles = sr.latencyCycles;
    seg.dramCycles = sr.dramCycles;
    auto start = std::chrono::steady_clock::now();
    std::vector<StepSpace> spaces;
    for (int li : sr.layers) {
      const Layer &layer = net.layers[static_cast<size_t>(li)];
      seg.layers.push_back(layer.name);
      std::string why;
      std::optional<KernelPlan> plan =
          directives[static_cast<size_t>(li)]
              ? planKernel(net, li, hw, *directives[static_cast<size_t>(li)], analysis.layers[static_cast<size_t>(li)], why)
              : std::nullopt;
      if (!plan) {
        seg.skipped = layer.name + ": " + (why.empty() ? "no directives" : why);
        break;
      }
      spaces.push_back(stepSpace(*plan, layer.nest));
      RegionRun region;
      region.layer = layer.name;
      region.steps = spaces.back().steps();
      region.stepCycles = analysis.layers[static_cast<size_t>(li)].latencyCycles / static_cast<double>(region.steps);
      // The room its node-level buffers leave: the analysis' rule (E0824).
      const RegionRoom room = regionRoom(layer, hw, analysis.layers[static_cast<size_t>(li)]);
      region.level = room.level;
      region.nodes = room.nodes;
      region.bounded = room.bounded;
      region.capacityWords = room.capacityWords;
      region.otherTileWords = room.otherTileWords;
      seg.regions.push_back(region);
    }
    if (!seg.skipped.empty()) {
      seg.regions.clear();
      result.segments.push_back(std::move(seg));
      continue;
    }
    // Dependences and LCUs within isl's operation limit, else the segment fails.
    std::unique_ptr<PipelineDependences> derived;
    std::vector<Trace> traces(seg.regions.size());
    try {
      derived = std::make_unique<PipelineDependences>(std::move(spaces), options.islMaxOperations);
      std::vector<RegionRoom> rooms;
      for (const RegionRun &g : seg.regions)
        rooms.push_back({g.level, g.nodes, g.bounded, g.capacityWords, g.otherTileWords});
      derived->addSlack(rooms);
      deriveAndBuild(*derived, options, start, jit, traces, seg);
    } catch (const isl::OperationLimit &e) {
      seg.error = std::string(e.what()) + ": the dependences of its " + std::to_string(seg.regions.size()) +
                  " regions are too large to derive; not simulated";
      seg.regions.clear();
      seg.buffers.clear();
      result.segments.push_back(std::move(seg));
      continue;
    }
    start = std::chrono::steady_clock::now();
    run(*derived, traces, options.listedViolations, options.trace, seg);
    seg.runMs = msSince(start);
    result.segments.push_back(std::move(seg));
  }
  return result;
}


std::string pipelineJson(const PipelineResult &r) {
  nlohmann::ordered_json out;
  out["ok"] = r.ok();
  out["segments"] = nlohmann::ordered_json::array();
  for (const SegmentRun &s : r.segments) {
    nlohmann::ordered_json j;
    j["segment"] = s.index;
    j["layers"] = s.layers;
    if (!s.skipped.empty() || !s.error.empty()) {
      j[s.error.empty() ? "skipped" : "error"] = s.error.empty() ? s.skipped : s.error;
      out["segments"].push_back(j);
      continue;
    }
    j["cycles"] = s.cycles;
    j["analytical_cycles"] = s.analyticalCycles;
    j["fill_cycles"] = s.fillCycles;
    j["drain_cycles"] = s.drainCycles;
    j["regions"] = nlohmann::ordered_json::array();
    for (const RegionRun &g : s.regions)
      j["regions"].push_back({{"layer", g.layer},
                              {"steps", g.steps},
                              {"step_cycles", g.stepCycles},
                              {"first_start", g.firstStart},
                              {"last_end", g.lastEnd},
                              {"stall_cycles", g.stallCycles},
                              {"level", g.level},
                              {"nodes", g.nodes},
                              {"room_words", g.roomWords()},
                              {"lcu", "lcu/" + g.layer + ".c"}});
    j["buffers"] = nlohmann::ordered_json::array();
    for (const BufferRun &b : s.buffers)
      j["buffers"].push_back({{"tensor", b.tensor},
                              {"producer", b.producer},
                              {"consumer", b.consumer},
                              {"depth_steps", b.depthSteps},
                              {"depth_words", b.depthWords},
                              {"needed_steps", b.minSteps},
                              {"needed_words", b.neededWords},
                              {"peak_words", b.peakWords}});
    j["violations"] = s.violations;
    j["violations_not_listed"] = s.unlistedViolations;
    j["derive_ms"] = s.deriveMs;
    j["compile_ms"] = s.compileMs;
    j["run_ms"] = s.runMs;
    out["segments"].push_back(j);
  }
  return dumpReport(out);
}

std::string pipelineTable(const PipelineResult &r) {
  std::string s = "pipelined segment                     simulated   analytical     fill    drain  violations\n"
                  "                                       [cycles]     [cycles] [cycles] [cycles]\n";
  for (const SegmentRun &seg : r.segments) {
    std::string name = std::to_string(seg.index) + ": " + seg.layers.front() + " .. " + seg.layers.back();
    if (!seg.skipped.empty() || !seg.error.empty()) {
      s += padRight(name, 36) + (seg.error.empty() ? "  skipped: " + seg.skipped : "  error: " + seg.error) + "\n";
      continue;
    }
    s += padRight(name, 36) + "  " + padLeft(formatFixed(seg.cycles, 0), 9) + "  " +
         padLeft(formatFixed(seg.analyticalCycles, 0), 11) + "  " + padLeft(formatFixed(seg.fillCycles, 0), 7) + "  " +
         padLeft(formatFixed(seg.drainCycles, 0), 7) + "  " + padLeft(std::to_string(seg.violationCount()), 10) + "\n";
    for (const std::string &v : seg.violations)
      s += "  error: " + v + "\n";
    if (seg.unlistedViolations)
      s += "  ... and " + std::to_string(seg.unlistedViolations) + " more violations\n";
  }
  return s;
}

} // namespace dfl::sim
