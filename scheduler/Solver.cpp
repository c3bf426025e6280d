#include "scheduler/Solver.h"

#include <algorithm>
#include <chrono>

namespace dfl {
namespace {

/// User segments are kept; every other layer is its own segment, solved with
/// all nodes by the intra-layer search: KAPLA's stacking/caching descent, or
/// the exhaustive yardstick.
class LayerwiseSolver : public Solver {
public:
  explicit LayerwiseSolver(IntraLayerSearch search, int64_t cap = 0) : search_(search), cap_(cap) {}

  std::optional<Solution> solve(const Model &model, const Schedule &given, const SolverOptions &options,
                                SolveFailure &failure) override {
    auto start = std::chrono::steady_clock::now();
    const Network &net = networkOf(model, given);
    const Hardware &hw = hardwareOf(model, given);
    BudgetMeter budget(options.budget);
    Solution out;
    out.schedule.network = given.network;
    out.schedule.hardware = given.hardware;
    out.schedule.range = given.range;
    out.schedule.segments = given.segments;
    IntraLayerOptions intra;
    intra.objective = options.objective;
    intra.search = search_;
    intra.maxCandidates = cap_;
    intra.budget = &budget;
    for (size_t i = 0; i < net.layers.size(); ++i) {
      const LayerScheduleModel *user = nullptr;
      for (const LayerScheduleModel &ls : given.layers)
        if (ls.layer == static_cast<int>(i))
          user = &ls;
      IntraLayerStats stats;
      auto sol = solveLayer(net, static_cast<int>(i), hw, user, intra, stats, failure);
      out.stats.candidates += stats.candidates;
      out.stats.rejected += stats.rejected;
      out.stats.cappedLayers += stats.capped ? 1 : 0;
      out.stats.provedLayers += stats.provedOptimal ? 1 : 0;
      out.stats.limitedLayers += stats.limited ? 1 : 0;
      if (!sol)
        return std::nullopt;
      out.schedule.layers.push_back(std::move(sol->schedule));
      if (options.progress)
        options.progress(i + 1, net.layers.size());
    }
    InterLayerOptions inter;
    inter.objective = options.objective;
    inter.intra = intra;
    inter.topK = options.topK;
    if (!options.spatial)
      inter.maxSpatial = 0;
    inter.fixedLayers.assign(net.layers.size(), false);
    for (const LayerScheduleModel &ls : given.layers)
      if (ls.layer >= 0 && static_cast<size_t>(ls.layer) < net.layers.size())
        inter.fixedLayers[static_cast<size_t>(ls.layer)] = true;
    if (!given.segments.empty())
      solveUserSegments(model, given, inter, out);
    out.result = analyzeSchedule(model, out.schedule);
    out.stats.layerSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Under a spent budget the layer-wise schedule is the best found.
    if (given.segments.empty() && hw.levels.size() >= 2 && out.result.valid && out.result.complete &&
        !budget.exhausted()) {
      // Segment slicing and layer pipelining (KAPLA §IV-B).
      auto [schedule, result] = InterLayerSolver(model, out.schedule, out.result, inter).solve(out.stats.interLayer);
      out.schedule = std::move(schedule);
      out.result = std::move(result);
      out.stats.candidates += out.stats.interLayer.intra.candidates;
      out.stats.rejected += out.stats.interLayer.intra.rejected;
    }
    out.stats.limit = budget.hit();
    out.stats.status = out.stats.limit == SolveLimit::None ? SolveStatus::Complete : SolveStatus::Feasible;
    out.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

private:
  /// A pipelined segment the user wrote constrains its layers like one the
  /// inter-layer solver picks: node regions by work and a matched forwarding
  /// granularity (the best of those tried). Layers with user directives, and
  /// segments that are not a run of consecutive layers, stay as solved alone;
  /// the analysis then reports what the user's segment breaks.
  static void solveUserSegments(const Model &model, const Schedule &given, const InterLayerOptions &inter,
                                Solution &out) {
    const Hardware &hw = hardwareOf(model, given);
    if (hw.levels.size() < 2)
      return;
    Schedule layerwise = out.schedule;
    layerwise.segments.clear();
    ScheduleResult layerwiseResult = analyzeSchedule(model, layerwise);
    if (!layerwiseResult.valid || !layerwiseResult.complete)
      return;
    InterLayerSolver solver(model, layerwise, layerwiseResult, inter);
    for (const Segment &seg : given.segments) {
      if (!seg.pipelined || seg.layers.size() < 2)
        continue;
      auto [lo, hi] = std::minmax_element(seg.layers.begin(), seg.layers.end());
      if (static_cast<size_t>(*hi - *lo + 1) != seg.layers.size() ||
          std::any_of(seg.layers.begin(), seg.layers.end(), [&](int l) { return inter.fixedLayers[l]; }))
        continue;
      std::vector<int64_t> nodes = solver.allocateNodes(*lo, *hi);
      if (nodes.empty())
        continue;
      auto best = solver.solveSpatialBest(solver.schemes(*lo, *hi, nodes), out.stats.interLayer);
      if (best)
        for (int l : seg.layers)
          out.schedule.layers[static_cast<size_t>(l)] = best->first.layers[static_cast<size_t>(l)];
    }
  }

  IntraLayerSearch search_;
  int64_t cap_;
};

struct Entry {
  const char *name;
  std::unique_ptr<Solver> (*make)(int64_t cap);
};

const Entry kSolvers[] = {
    {"kapla", [](int64_t) { return std::unique_ptr<Solver>(new LayerwiseSolver(IntraLayerSearch::Kapla)); }},
    // By default at most 200000 candidates per layer: beyond that, the best found (reported as capped).
    {"exhaustive",
     [](int64_t cap) {
       return std::unique_ptr<Solver>(new LayerwiseSolver(IntraLayerSearch::Exhaustive, cap ? cap : 200000));
     }},
    // 2000 uniform samples per layer, fixed seed.
    {"random",
     [](int64_t cap) {
       return std::unique_ptr<Solver>(new LayerwiseSolver(IntraLayerSearch::Random, cap ? cap : 2000));
     }},
};

} // namespace

std::vector<std::string> solverNames() {
  std::vector<std::string> names;
  for (const Entry &e : kSolvers)
    names.push_back(e.name);
  return names;
}

std::unique_ptr<Solver> makeSolver(const std::string &name, int64_t cap) {
  for (const Entry &e : kSolvers)
    if (name == e.name)
      return e.make(cap);
  return nullptr;
}

} // namespace dfl
