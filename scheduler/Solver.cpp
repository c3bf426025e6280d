#include "Solver.h"

#include <chrono>
#include <limits>

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
    const Network &net = model.networks.at(given.network);
    const Hardware &hw = model.hardware.at(given.hardware);
    Solution out;
    out.schedule.network = given.network;
    out.schedule.hardware = given.hardware;
    out.schedule.range = given.range;
    out.schedule.segments = given.segments;
    IntraLayerOptions intra;
    intra.objective = options.objective;
    intra.search = search_;
    intra.maxCandidates = cap_;
    for (size_t i = 0; i < net.layers.size(); ++i) {
      const LayerScheduleModel *user = nullptr;
      for (const LayerScheduleModel &ls : given.layers)
        if (ls.layer == static_cast<int>(i))
          user = &ls;
      IntraLayerStats stats;
      std::string why;
      auto sol = solveLayer(net, static_cast<int>(i), hw, user, intra, stats, why);
      out.stats.candidates += stats.candidates;
      out.stats.rejected += stats.rejected;
      out.stats.cappedLayers += stats.capped ? 1 : 0;
      if (!sol) {
        failure = {static_cast<int>(i), why};
        return std::nullopt;
      }
      out.schedule.layers.push_back(std::move(sol->schedule));
      if (options.progress)
        options.progress(i + 1, net.layers.size());
    }
    out.result = analyzeSchedule(model, out.schedule);
    if (given.segments.empty() && hw.temporalPipelining && hw.levels.size() >= 2) {
      // Segment slicing: a DP over the topological order choosing temporal segments.
      Schedule sliced = out.schedule;
      sliced.segments = sliceSegments(net, hw, out.result);
      if (!sliced.segments.empty()) {
        ScheduleResult r = analyzeSchedule(model, sliced);
        if (r.valid && r.complete &&
            objectiveValue(options.objective, r.energyPj, r.latencyCycles) <=
                objectiveValue(options.objective, out.result.energyPj, out.result.latencyCycles)) {
          out.schedule = std::move(sliced);
          out.result = std::move(r);
        }
      }
    }
    out.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

private:
  /// Segment slicing (KAPLA §III-A) with temporal segments: consecutive layers
  /// run one after the other on all nodes and keep their intermediate tensors
  /// on chip when they fit (docs/directives.md §9). A DP over the topological
  /// order: best[j] = min over i of best[i-1] + cost(i..j), segments of at most
  /// kMaxSegment layers. Segment costs are exact here — the layers' schedules
  /// do not change, only the DRAM traffic of the intermediates disappears — so
  /// the single best chain is optimal and no top-k list is needed.
  static std::vector<Segment> sliceSegments(const Network &net, const Hardware &hw, const ScheduleResult &r) {
    constexpr size_t kMaxSegment = 8;
    const size_t n = net.layers.size(), top = hw.levels.size() - 2, dram = hw.levels.size() - 1;
    const Level &nodes = hw.levels[top];
    const size_t ofm = static_cast<size_t>(TensorRole::Ofm), ifm = static_cast<size_t>(TensorRole::Ifm);
    auto cost = [&](size_t i, size_t j) -> std::optional<double> {
      double e = 0, saved = 0;
      int64_t used = 0, bytes = 0;
      std::vector<double> writes(n);
      for (size_t l = i; l <= j; ++l) {
        e += r.layers[l].energyPj;
        const LevelResult &lr = r.layers[l].levels[top];
        used = std::max(used, lr.occupancyBytes * lr.units);
        writes[l] = r.layers[l].levels[dram].accesses.writes[ofm];
      }
      for (size_t c = i; c <= j; ++c) {
        double reads = r.layers[c].levels[dram].accesses.reads[ifm];
        for (const TensorRef &op : net.layers[c].operands) {
          if (op.isInput || op.index < static_cast<int>(i) || op.index > static_cast<int>(c))
            continue;
          double w = std::min(writes[op.index], reads);
          writes[op.index] -= w;
          reads -= w;
          saved += 2 * w * hw.levels[dram].accessEnergyPj;
        }
      }
      for (size_t p = i; p <= j; ++p) {
        bool inside = false;
        for (size_t c = p + 1; c <= j; ++c)
          for (const TensorRef &op : net.layers[c].operands)
            inside |= !op.isInput && op.index == static_cast<int>(p);
        if (inside)
          bytes += net.layers[p].ofmShape.size() * net.batch * hw.wordBytes();
      }
      if (nodes.capacityBytes && bytes > *nodes.capacityBytes * nodes.units() - used)
        return std::nullopt;
      return e - saved;
    };
    std::vector<double> best(n + 1, 0);
    std::vector<size_t> from(n + 1, 0);
    for (size_t j = 1; j <= n; ++j) {
      best[j] = std::numeric_limits<double>::infinity();
      for (size_t len = 1; len <= kMaxSegment && len <= j; ++len) {
        size_t i = j - len;
        auto c = cost(i, j - 1);
        if (c && best[i] + *c < best[j]) {
          best[j] = best[i] + *c;
          from[j] = i;
        }
      }
    }
    std::vector<Segment> segments;
    for (size_t j = n; j > 0; j = from[j]) {
      if (j - from[j] < 2)
        continue;
      Segment seg;
      for (size_t l = from[j]; l < j; ++l)
        seg.layers.push_back(static_cast<int>(l));
      segments.insert(segments.begin(), seg);
    }
    return segments;
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
