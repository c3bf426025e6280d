#include "scheduler/kapla/Solver.h"

#include "scheduler/analysis/Instances.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "scheduler/kapla/LayerObjective.h"
#include "scheduler/kapla/Parallel.h"
#include "support/Format.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>

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
    std::vector<Alternative> alternatives;
    // A latency or EDP solve also solves for the other objectives and keeps
    // the best by its own: the per-layer searches score a layer's own
    // latency, not its segment's pipelined one (SegmentLatency), and another
    // objective's schedule is sometimes faster (MLP: the latency solve alone
    // 101,482 cycles, the EDP solve's 90,261).
    const bool allObjectives = options.objective != Objective::Energy;
    const bool sweep = options.constrained() || options.keepAlternatives || allObjectives;
    auto first = solveFor(model, given, options, options.objective, &alternatives, failure);
    if (first && !sweep)
      first->alternatives = std::move(alternatives);
    if (!first || !sweep)
      return first;
    first->stats.objectivesSolved = {options.objective};
    // The other objectives' solves add alternatives: for the front, or where
    // the objective's own best breaks a constraint.
    const bool met = meetsConstraints(options, first->result.energyPj, first->result.latencyCycles);
    for (Objective o : {Objective::Energy, Objective::Latency, Objective::EDP}) {
      const bool wanted = options.keepAlternatives || !met || allObjectives;
      if (o == options.objective || !wanted || first->stats.limit != SolveLimit::None)
        continue;
      SolveFailure ignored;   // the layers that failed under one objective fail under all
      auto other = solveFor(model, given, options, o, &alternatives, ignored);
      if (!other)
        continue;
      first->stats.objectivesSolved.push_back(o);
      first->stats.candidates += other->stats.candidates;
      first->stats.rejected += other->stats.rejected;
      first->stats.seconds += other->stats.seconds;
      first->stats.layerSeconds += other->stats.layerSeconds;
      if (other->stats.limit != SolveLimit::None)
        first->stats.limit = other->stats.limit, first->stats.status = SolveStatus::Feasible;
    }
    first->stats.alternativesEvaluated = static_cast<int64_t>(alternatives.size());
    pickBest(model, options, alternatives, *first);
    first->alternatives = std::move(alternatives);
    return first;
  }

private:
  /// Among the solve's schedule and the alternatives, the best by the
  /// objective that meets the constraints: another objective's solve may
  /// find what this one's heuristic missed. If none meets them, the closest
  /// (status Unmet).
  static void pickBest(const Model &model, const SolverOptions &options, const std::vector<Alternative> &alternatives,
                       Solution &out) {
    const Alternative *best = nullptr;   // null: the solve's own schedule
    bool found = meetsConstraints(options, out.result.energyPj, out.result.latencyCycles);
    double bestValue = objectiveValue(options.objective, out.result.energyPj, out.result.latencyCycles);
    for (const Alternative &a : alternatives) {
      if (!meetsConstraints(options, a.energyPj, a.latencyCycles))
        continue;
      double v = objectiveValue(options.objective, a.energyPj, a.latencyCycles);
      if (!found || v < bestValue)
        best = &a, bestValue = v, found = true;
    }
    if (!found) {   // the closest, ties by the objective
      out.stats.status = SolveStatus::Unmet;
      double bestExcess = 0;
      for (const Alternative &a : alternatives) {
        double x = constraintExcess(options, a.energyPj, a.latencyCycles);
        double v = objectiveValue(options.objective, a.energyPj, a.latencyCycles);
        if (!best || x < bestExcess || (x == bestExcess && v < bestValue))
          best = &a, bestExcess = x, bestValue = v;
      }
    }
    if (!best)
      return;
    out.schedule = best->schedule;
    out.segmentCosts = best->segmentCosts;
    out.result = analyzeSchedule(model, out.schedule);
  }

  /// One solve under `objective`: every layer alone, then (pipelining) the
  /// inter-layer step. Each whole schedule scored goes to `alternatives`.
  std::optional<Solution> solveFor(const Model &model, const Schedule &given, const SolverOptions &options,
                                   Objective objective, std::vector<Alternative> *alternatives,
                                   SolveFailure &failure) {
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
    intra.objective = objective;
    intra.search = search_;
    intra.maxCandidates = cap_;
    intra.gap = options.gap;
    intra.budget = &budget;
    // The descents' analyses, shared by every layer solve below and the
    // inter-layer solver's re-solves (docs/solver.md, "Speed").
    intra::AnalysisMemo analyses(size_t{1} << 20);   // about 280 MiB at most, and 140 MiB of UnpricedResults
    intra.analyses = &analyses;
    intra.keepUnpriced = options.pipelining && hw.temporalPipelining;
    // The user's block of each layer (the last one written), found once: not
    // a search of every block per layer.
    std::vector<const LayerScheduleModel *> userOf(net.layers.size(), nullptr);
    for (const LayerScheduleModel &ls : given.layers)
      if (ls.layer >= 0 && static_cast<size_t>(ls.layer) < net.layers.size())
        userOf[static_cast<size_t>(ls.layer)] = &ls;
    // A layer of a segment the user wrote stays on the MAC array: a layer on
    // a vector unit runs in a segment of its own (E0832).
    std::vector<bool> mayUseVector(net.layers.size(), true);
    for (const Segment &seg : given.segments)
      for (int l : seg.layers)
        if (seg.layers.size() > 1 && l >= 0 && static_cast<size_t>(l) < net.layers.size())
          mayUseVector[static_cast<size_t>(l)] = false;
    // Each layer alone, on threads where the search's counts allow (KAPLA's
    // descent: each solve's own), reduced in order: the first failing
    // layer's failure, as one by one.
    const size_t threads = search_ != IntraLayerSearch::Kapla || !budget.threadable() ? 1
                           : options.threads                                         ? options.threads
                                                                                     : usableCpus();
    const size_t n = net.layers.size();
    std::vector<std::optional<IntraLayerSolution>> sols(n);
    std::vector<IntraLayerStats> counts(n);
    std::vector<SolveFailure> failures(n);
    std::mutex progressed;
    size_t done = 0;
    // Past a failed layer nothing is wanted, but every layer before the first
    // failure runs, so the failure reported is the same for any threads.
    std::atomic<size_t> firstFailed{n};
    // Each shape's first layer before every repeat: a repeat is the memo's
    // analyses replayed once its first is solved, but solved beside it (an
    // AlexNet's conv1_a and conv1_b) both threads would analyse the same
    // plans (AnalysisMemo's Busy).
    std::vector<size_t> order, repeats;
    std::set<std::string> shapes;
    for (size_t i = 0; i < n; ++i)
      (userOf[i] || shapes.insert(shapeKey(net.layers[i]) + (mayUseVector[i] ? "" : "/mac")).second ? order : repeats)
          .push_back(i);
    order.insert(order.end(), repeats.begin(), repeats.end());
    parallelFor(n, threads, [&](size_t q) {
      const size_t i = order[q];
      if (i > firstFailed.load())
        return;
      sols[i] = solvePlaced(net, static_cast<int>(i), hw, userOf[i], intra, mayUseVector[i], counts[i], failures[i]);
      std::lock_guard lock(progressed);
      if (!sols[i])
        firstFailed = std::min(firstFailed.load(), i);
      else if (options.progress)
        options.progress(++done, n);   // layers solved
    });
    for (size_t i = 0; i < n; ++i) {
      const IntraLayerStats &stats = counts[i];
      std::optional<IntraLayerSolution> &sol = sols[i];
      out.stats.candidates += stats.candidates;
      out.stats.rejected += stats.rejected;
      out.stats.cappedLayers += stats.capped ? 1 : 0;
      out.stats.provedLayers += stats.provedOptimal ? 1 : 0;
      out.stats.limitedLayers += stats.limited ? 1 : 0;
      if (!sol) {
        failure = failures[i];
        return std::nullopt;
      }
      if (stats.lowerBoundPj > 0)
        out.stats.exactLayers.push_back({static_cast<int>(i), stats.provedOptimal, sol->result.energyPj, stats.lowerBoundPj});
      out.schedule.layers.push_back(std::move(sol->schedule));
    }
    InterLayerOptions interOptions;
    interOptions.objective = objective;
    interOptions.alternatives = alternatives;
    interOptions.intra = intra;
    interOptions.topK = options.topK;
    interOptions.threads = threads;
    if (!options.spatial)
      interOptions.maxSpatial = 0;
    interOptions.fixedLayers.assign(net.layers.size(), false);
    for (const LayerScheduleModel &ls : given.layers)
      if (ls.layer >= 0 && static_cast<size_t>(ls.layer) < net.layers.size())
        interOptions.fixedLayers[static_cast<size_t>(ls.layer)] = true;
    if (!given.segments.empty() && !solveUserSegments(model, given, interOptions, userOf, out, failure))
      return std::nullopt;
    out.result = analyzeSchedule(model, out.schedule);
    out.stats.layerSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (alternatives && out.result.valid && out.result.complete)
      alternatives->push_back({out.schedule, out.result.energyPj, out.result.latencyCycles, objective, {}});
    // Under a spent budget the layer-wise schedule is the best found.
    if (options.pipelining && given.segments.empty() && hw.levels.size() >= 2 && out.result.valid &&
        out.result.complete && !budget.exhausted()) {
      // Segment slicing and layer pipelining (KAPLA §IV-B).
      InterLayerSolver inter(model, out.schedule, out.result, interOptions);
      auto [schedule, result] = inter.solve(out.stats.interLayer);
      out.schedule = std::move(schedule);
      out.result = std::move(result);
      out.segmentCosts = inter.chosenCosts();
      out.stats.candidates += out.stats.interLayer.intra.candidates;
      out.stats.rejected += out.stats.interLayer.intra.rejected;
    }
    out.stats.limit = budget.hit();
    out.stats.status = out.stats.limit == SolveLimit::None ? SolveStatus::Complete : SolveStatus::Feasible;
    out.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

  /// A pipelined segment the user wrote constrains its layers like one the
  /// inter-layer solver picks: node regions by work and a matched forwarding
  /// granularity (the best of those tried); one split into instances, like the
  /// inter-layer solver's, by pieces; a temporal one, like its temporal
  /// segments, its written layers re-solved around their directives. Layers
  /// with user directives in a split, and segments that are not a run of
  /// consecutive layers, stay as solved alone;
  /// the analysis then reports what the user's segment breaks. A pipelined
  /// segment some of whose layers have directives: solveAroundWritten (false
  /// with `failure` set where that leaves no schedule).
  static bool solveUserSegments(const Model &model, const Schedule &given, const InterLayerOptions &inter,
                                const std::vector<const LayerScheduleModel *> &userOf, Solution &out,
                                SolveFailure &failure) {
    const Hardware &hw = hardwareOf(model, given);
    if (hw.levels.size() < 2)
      return true;
    Schedule layerwise = out.schedule;
    layerwise.segments.clear();
    ScheduleResult layerwiseResult = analyzeSchedule(model, layerwise);
    if (!layerwiseResult.valid || !layerwiseResult.complete)
      return true;
    // The user's blocks: a temporal segment re-solves its written layers
    // around them (for a reserve, or batch chunks).
    InterLayerOptions options = inter;
    options.written = userOf;
    InterLayerSolver solver(model, layerwise, layerwiseResult, options);
    for (const Segment &seg : given.segments) {
      if (seg.layers.empty())
        continue;
      auto [lo, hi] = std::minmax_element(seg.layers.begin(), seg.layers.end());
      if (static_cast<size_t>(*hi - *lo + 1) != seg.layers.size())
        continue;
      if (!seg.pipelined && seg.instances < 2) {
        // Temporal: as the inter-layer solver runs its own (docs/solver.md,
        // "temporal segment"), the cheapest of the whole batch and batch
        // chunks, each with room for the intermediates; none valid, the
        // layer-wise schedules stay and the analysis reports the rule (E0819).
        if (seg.layers.size() > 1 && solver.temporalCost(*lo, *hi, out.stats.interLayer))
          solver.useReserved(out.schedule, *lo, *hi);
        continue;
      }
      if (std::any_of(seg.layers.begin(), seg.layers.end(), [&](int l) { return inter.fixedLayers[l]; })) {
        if (seg.pipelined && !solveAroundWritten(model, given, seg, solver, inter, userOf, out, failure))
          return false;
        continue;
      }
      if (!seg.pipelined) {
        // Split into instances: each layer solved on its largest piece, with
        // room for one instance's intermediates.
        std::vector<LayerScheduleModel> layers;
        bool reserved = false;
        std::vector<int> range(seg.layers.begin(), seg.layers.end());
        std::sort(range.begin(), range.end());
        if (!instanceSplitRefusal(networkOf(model, given), range, seg.splitDim, seg.instances).empty())
          continue;   // the analysis says why (E0827)
        std::string why;
        if (!solver.temporalVariant(*lo, *hi, networkOf(model, given).batch, {seg.splitDim, seg.instances}, layers,
                                    reserved, out.stats.interLayer, false, &why)) {
          if (analyzeSchedule(model, out.schedule).valid)
            continue;
          // Not what the unsplit layers' tiles break (E0806 on tiles the
          // user did not write): why the written split cannot be completed.
          const Network &net = networkOf(model, given);
          const DiagInfo &info = diagInfo(diag::err_instance_split);
          failure = SolveFailure{};
          failure.layer = *lo;
          failure.layerName = net.layers[static_cast<size_t>(*lo)].name;
          failure.constraint = formatDiagnostic(info.format, {std::to_string(seg.instances),
                                                              std::string(dimName(seg.splitDim)), why}) +
                               " [" + info.code + "]";
          failure.directive = seg.range;
          return false;
        }
        for (const LayerScheduleModel &ls : layers)
          out.schedule.layers[static_cast<size_t>(ls.layer)] = ls;
        continue;
      }
      std::vector<int64_t> nodes = solver.allocateNodes(*lo, *hi);
      if (nodes.empty())
        continue;
      auto best = solver.solveSpatialBest(solver.schemes(*lo, *hi, nodes), out.stats.interLayer);
      // None valid: a scheme short of buffer only, if one was, so that the
      // analysis reports E0824 rather than what the layers alone break.
      const Schedule *chosen = best ? &best->first : solver.shortOfBuffer() ? &*solver.shortOfBuffer() : nullptr;
      if (chosen)
        for (int l : seg.layers)
          out.schedule.layers[static_cast<size_t>(l)] = chosen->layers[static_cast<size_t>(l)];
      else if (solver.schemeFailure() && !analyzeSchedule(model, out.schedule).valid) {
        // No scheme's layers solve and the layers alone break the segment:
        // the rule the most promising scheme broke, not what tiles chosen
        // for the layers alone break (E0814 on the solver's own tiles).
        failure = *solver.schemeFailure();
        failure.directive = seg.range;
        return false;
      }
    }
    return true;
  }

  /// A layer's node level as its user block writes it (tiles given, §11).
  struct WrittenNodes {
    bool known = false;
    DimVector tile{}, repl{};   // the tile and, per dim, the product of the stacks moving it
    int64_t units = 1;
    SourceRange range;          // the block
  };

  static WrittenNodes writtenNodes(const Network &net, const Hardware &hw, int l, const LayerScheduleModel *user) {
    WrittenNodes w;
    const size_t top = hw.levels.size() - 2;
    if (!user)
      return w;
    std::vector<Issue> issues;
    const LayerResult r = analyzeLayer(net, l, hw, user, issues);
    const LevelResult &t = r.levels[top];
    if (!t.known)
      return w;
    w.known = true;
    w.tile = t.extent;
    w.units = t.units;
    for (Dim d : kIndependentDims)
      at(w.repl, d) = 1;
    const bool channelWise = net.layers[static_cast<size_t>(l)].channelWise();
    for (const LevelDirectives &ld : user->levels)
      if (ld.level == static_cast<int>(top)) {
        w.range = ld.range;
        for (const StackDirective &st : ld.stacks)
          for (auto [d, shift] : st.shifts)
            if (!isInputWindow(d))
              at(w.repl, channelWise && d == Dim::K ? Dim::C : d) *= st.repl;
      }
    if (channelWise)
      at(w.repl, Dim::K) = at(w.repl, Dim::C);
    return w;
  }

  /// A pipelined segment the user wrote, some of whose layers have
  /// directives (docs/solver.md, "Partial schedules"): a layer whose node
  /// level is written keeps it; every other one is solved inside what those
  /// fix — the nodes they leave, shared by work, and on both ends of each
  /// forwarded tensor the tile and stack factor of the written end (E0814;
  /// between two solved ends the whole dim, and without a written batch tile
  /// the whole batch). Where a layer has no schedule under them, `failure`
  /// names the rule and the written block that forces it.
  static bool solveAroundWritten(const Model &model, const Schedule &given, const Segment &seg,
                                 const InterLayerSolver &solver, const InterLayerOptions &inter,
                                 const std::vector<const LayerScheduleModel *> &userOf, Solution &out,
                                 SolveFailure &failure) {
    const Network &net = networkOf(model, given);
    const Hardware &hw = hardwareOf(model, given);
    const size_t top = hw.levels.size() - 2;
    std::vector<int> layers = seg.layers;
    std::sort(layers.begin(), layers.end());
    auto inSeg = [&](int l) { return std::find(layers.begin(), layers.end(), l) != layers.end(); };
    std::map<int, WrittenNodes> written;
    std::vector<int> open;
    int64_t used = 0;
    const WrittenNodes *batchFrom = nullptr;
    int batchLayer = -1;
    for (int l : layers) {
      WrittenNodes &w = written[l] = writtenNodes(net, hw, l, userOf[static_cast<size_t>(l)]);
      if (!w.known) {
        open.push_back(l);
        continue;
      }
      used += w.units;
      if (!batchFrom)
        batchFrom = &w, batchLayer = l;
    }
    if (open.empty())
      return true;
    // More than the nodes: E0815 at the segment (the check reports it first).
    const std::vector<int64_t> nodes = solver.allocateNodes(open, hw.levels[top].units() - used);
    if (nodes.empty())
      return true;
    for (size_t k = 0; k < open.size(); ++k) {
      const int x = open[k];
      const Layer &layer = net.layers[static_cast<size_t>(x)];
      IntraLayerOptions o = inter.intra;
      o.maxNodes = nodes[k];
      o.mayRowSplit = false;   // whole rows in a segment (E0826)
      std::vector<std::string> forced{std::to_string(nodes[k]) + " of " + std::to_string(hw.levels[top].units()) +
                                      " nodes, the others written for the segment's layers"};
      SourceRange forcedAt = seg.range;
      auto force = [&](Dim d, int64_t tile, int64_t repl, const std::string &why, const WrittenNodes *w) {
        at(o.fixedTopTile, d) = tile;
        at(o.fixedTopStack, d) = repl;
        if (w) {
          forced.push_back(dimName(d) + std::string("=") + std::to_string(tile) +
                           (repl > 1 ? " stacked " + std::to_string(repl) : std::string()) + " " + why);
          forcedAt = w->range;
        }
      };
      if (inFusedAttention(net, layers.front(), layers.back(), x)) {
        // A fused attention's layers step alike (FLAT): one head's rows and
        // the query tile of its first written layer (all queries if none is).
        SpatialSegment s{layers.front(), layers.back(), {}, 1, 1, at(layer.bounds, Dim::Xo)};
        if (batchFrom)
          s.batchTile = at(batchFrom->tile, Dim::N) * at(batchFrom->repl, Dim::N);
        for (int q : layers) {
          const WrittenNodes &w = written[q];
          if (!w.known || !inFusedAttention(net, layers.front(), layers.back(), q))
            continue;
          s.queryTile = at(w.tile, Dim::Xo) * at(w.repl, Dim::Xo);
          forced.push_back("Xo=" + std::to_string(s.queryTile) + " a step and one head's rows, as the fused attention's '" +
                           net.layers[static_cast<size_t>(q)].name + "' writes");
          forcedAt = w.range;
          break;
        }
        segmentNodeConstraints(net, hw, s, x, o);
      } else {
        if (batchFrom)
          force(Dim::N, at(batchFrom->tile, Dim::N), at(batchFrom->repl, Dim::N),
                "as '" + net.layers[static_cast<size_t>(batchLayer)].name + "' writes", batchFrom);
        else
          force(Dim::N, net.batch, 1, "", nullptr);
        // The channels received from a single producer in the segment, and
        // those forwarded to a single-operand consumer in it.
        if (layer.operands.size() == 1 && !layer.operands[0].isInput && inSeg(layer.operands[0].index)) {
          const int p = layer.operands[0].index;
          const WrittenNodes &w = written[p];
          if (w.known)
            force(Dim::C, at(w.tile, Dim::K), at(w.repl, Dim::K),
                  "to match the ofm tile '" + net.layers[static_cast<size_t>(p)].name + "' forwards", &w);
          else
            force(Dim::C, at(layer.bounds, Dim::C), 1, "", nullptr);
        }
        const Dim outDim = layer.channelWise() ? Dim::C : Dim::K;
        for (int c : layers) {
          const Layer &cons = net.layers[static_cast<size_t>(c)];
          if (c <= x || cons.operands.size() != 1 || cons.operands[0].isInput || cons.operands[0].index != x)
            continue;
          const WrittenNodes &w = written[c];
          if (w.known)
            force(outDim, at(w.tile, Dim::C), at(w.repl, Dim::C),
                  "to match the ifm tile '" + cons.name + "' receives", &w);
          else
            force(outDim, at(layer.bounds, outDim), 1, "", nullptr);
        }
      }
      IntraLayerStats stats;
      SolveFailure why;
      auto sol = solveLayer(net, x, hw, userOf[static_cast<size_t>(x)], o, stats, why);
      out.stats.candidates += stats.candidates;
      out.stats.rejected += stats.rejected;
      if (!sol) {
        failure = why;
        failure.forcedBy = "in pipelined segment at level " + hw.levels[top].name + ": " + joinList(forced, "; ", "; ");
        if (!failure.directive.valid() || failure.constraint.empty())
          failure.directive = forcedAt;
        return false;
      }
      out.schedule.layers[static_cast<size_t>(x)] = std::move(sol->schedule);
      out.schedule.layers[static_cast<size_t>(x)].layer = x;
    }
    return true;
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
    // 2000 plans per layer drawn within every level's buffers (TilingSpace::drawPlan), fixed seed.
    {"random",
     [](int64_t cap) {
       return std::unique_ptr<Solver>(new LayerwiseSolver(IntraLayerSearch::Random, cap ? cap : 2000));
     }},
};

} // namespace

bool meetsConstraints(const SolverOptions &o, double energyPj, double latencyCycles) {
  return constraintExcess(o, energyPj, latencyCycles) <= 1;
}

double constraintExcess(const SolverOptions &o, double energyPj, double latencyCycles) {
  double excess = 0;
  if (o.maxLatencyCycles)
    excess = std::max(excess, latencyCycles / *o.maxLatencyCycles);
  if (o.maxEnergyPj)
    excess = std::max(excess, energyPj / *o.maxEnergyPj);
  return excess;
}

std::vector<Alternative> energyLatencyFront(const std::vector<Alternative> &alternatives) {
  std::vector<std::vector<double>> points;
  for (const Alternative &a : alternatives)
    points.push_back({a.energyPj, a.latencyCycles});
  std::vector<Alternative> front;
  for (size_t i : paretoFront(points)) {
    const Alternative &a = alternatives[i];
    bool seen = std::any_of(front.begin(), front.end(), [&](const Alternative &f) {
      return f.energyPj == a.energyPj && f.latencyCycles == a.latencyCycles;
    });
    if (!seen)   // equal totals dominate neither: the first found stands for them
      front.push_back(a);
  }
  std::stable_sort(front.begin(), front.end(), [](const Alternative &a, const Alternative &b) {
    return a.latencyCycles < b.latencyCycles;
  });
  return front;
}

std::vector<Segment> segmentsOf(const Schedule &s, size_t layers) {
  std::vector<Segment> out;
  std::vector<bool> listed(layers, false);
  for (const Segment &seg : s.segments)
    for (int l : seg.layers)
      if (l >= 0 && static_cast<size_t>(l) < layers)
        listed[static_cast<size_t>(l)] = true;
  out = s.segments;
  for (size_t l = 0; l < layers; ++l)
    if (!listed[l]) {
      Segment one;
      one.layers = {static_cast<int>(l)};
      out.push_back(one);
    }
  auto first = [](const Segment &seg) { return seg.layers.empty() ? 0 : *std::min_element(seg.layers.begin(), seg.layers.end()); };
  std::stable_sort(out.begin(), out.end(), [&](const Segment &a, const Segment &b) { return first(a) < first(b); });
  return out;
}

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
