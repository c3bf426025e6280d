#include "scheduler/kapla/IntraLayerSolver.h"

#include "scheduler/kapla/BranchAndBound.h"
#include "scheduler/kapla/KaplaDescent.h"
#include "scheduler/kapla/RandomSearch.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "support/Check.h"

namespace dfl {

LayerResult pricedOnChip(const Network &net, int x, const Hardware &hw, const LayerResult &alone,
                         const OnChipPricing &onChip) {
  const Layer &layer = net.layers[static_cast<size_t>(x)];
  LayerResult r = alone;
  const LevelAccesses &dram = r.levels.back().accesses;
  std::array<double, kNumRoles> reads{};
  for (size_t i = 0; i < kNumRoles; ++i)
    reads[i] = dram.reads[i] * onChip.reads[i];
  keepOnChip(hw, layer, r, reads, onChip.output ? runOutputWords(net, x) : 0);
  settleLatency(hw, r);
  return r;
}

const char *objectiveName(Objective o) {
  switch (o) {
  case Objective::Energy: return "energy";
  case Objective::Latency: return "latency";
  case Objective::EDP: return "edp";
  }
  DFLC_UNREACHABLE("objective " + std::to_string(static_cast<int>(o)));
}

double objectiveValue(Objective o, double energyPj, double latencyCycles) {
  switch (o) {
  case Objective::Energy: return energyPj;
  case Objective::Latency: return latencyCycles;
  case Objective::EDP: return energyPj * latencyCycles;
  }
  DFLC_UNREACHABLE("objective " + std::to_string(static_cast<int>(o)));
}

namespace {

/// One search of the layer's tiling space under `options`.
std::optional<IntraLayerSolution> solveTiled(const Network &net, int layer, const Hardware &hw,
                                             const LayerScheduleModel *given, const IntraLayerOptions &options,
                                             IntraLayerStats &stats, SolveFailure &why) {
  switch (options.search) {
  case IntraLayerSearch::Exhaustive: {
    intra::BranchAndBound search(net, layer, hw, given, options, stats);
    return search.finish(search.exhaustive(why), why);
  }
  case IntraLayerSearch::Random: {
    intra::RandomSearch search(net, layer, hw, given, options, stats);
    return search.finish(search.randomSearch(why), why);
  }
  case IntraLayerSearch::Kapla: break;
  }
  DFLC_CHECK(options.search == IntraLayerSearch::Kapla) << "search " << static_cast<int>(options.search);
  intra::KaplaDescent search(net, layer, hw, given, options, stats);
  return search.finish(search.kaplaSearch(why), why);
}

} // namespace

std::optional<IntraLayerSolution> solveLayer(const Network &net, int layer, const Hardware &hw,
                                             const LayerScheduleModel *given, const IntraLayerOptions &options,
                                             IntraLayerStats &stats, SolveFailure &why) {
  DFLC_CHECK(layer >= 0 && static_cast<size_t>(layer) < net.layers.size())
      << "layer " << layer << " of network '" << net.name << "'";
  if (given && given->unit >= 0)
    return solveOnVector(net, layer, hw, given->unit, given, options, stats, why);
  if (hw.levels.size() < 2) {
    why = SolveFailure{};
    why.reason = SolveFailure::Reason::SingleLevel;
    why.layer = layer;
    why.layerName = net.layers[static_cast<size_t>(layer)].name;
    why.hardwareName = hw.name;
    return std::nullopt;
  }
  std::optional<IntraLayerSolution> whole = solveTiled(net, layer, hw, given, options, stats, why);
  const Layer &l = net.layers[static_cast<size_t>(layer)];
  if (whole || !options.mayRowSplit || options.rowsSplit || !l.normalizes() || l.output != TensorRole::Ofm)
    return whole;
  // No valid schedule holds whole rows: split them, each statistics pass
  // streamed from DRAM (docs/directives.md §7). Where that fails too, E0821
  // gives the whole rows' reason.
  IntraLayerOptions split = options;
  split.rowsSplit = true;
  SolveFailure splitWhy;
  return solveTiled(net, layer, hw, given, split, stats, splitWhy);
}

std::optional<IntraLayerSolution> solveOnVector(const Network &net, int layer, const Hardware &hw, int unit,
                                                const LayerScheduleModel *given, const IntraLayerOptions &options,
                                                IntraLayerStats &stats, SolveFailure &why) {
  const VectorUnit &v = hw.vectors.at(static_cast<size_t>(unit));
  std::optional<LayerScheduleModel> shifted;
  if (given) {
    shifted = shiftLevels(*given, v.level);
    shifted->unit = -1;
  }
  std::optional<IntraLayerSolution> sol =
      solveLayer(net, layer, *v.truncated, shifted ? &*shifted : nullptr, options, stats, why);
  if (!sol)
    return sol;
  sol->schedule = shiftLevels(std::move(sol->schedule), -v.level);
  sol->schedule.unit = unit;
  if (given)
    sol->schedule.unitRange = given->unitRange;
  sol->result = liftVectorResult(std::move(sol->result), v.level, unit);
  return sol;
}

std::optional<IntraLayerSolution> solvePlaced(const Network &net, int layer, const Hardware &hw,
                                              const LayerScheduleModel *given, const IntraLayerOptions &options,
                                              bool mayUseVector, IntraLayerStats &stats, SolveFailure &why) {
  std::optional<IntraLayerSolution> best = solveLayer(net, layer, hw, given, options, stats, why);
  if (given || !mayUseVector || !net.layers[static_cast<size_t>(layer)].vectorRefusal().empty())
    return best;
  auto value = [&](const IntraLayerSolution &s) {
    return objectiveValue(options.objective, s.result.energyPj, s.result.latencyCycles);
  };
  for (size_t u = 0; u < hw.vectors.size(); ++u) {
    if (!hw.vectors[u].truncated)
      continue;
    IntraLayerStats mine;
    SolveFailure ignored;
    std::optional<IntraLayerSolution> sol =
        solveOnVector(net, layer, hw, static_cast<int>(u), nullptr, options, mine, ignored);
    stats.candidates += mine.candidates;
    stats.rejected += mine.rejected;
    stats.capped = stats.capped || mine.capped;
    stats.limited = stats.limited || mine.limited;
    // Strictly less: the MAC array (then the earlier unit) wins a tie.
    if (sol && (!best || value(*sol) < value(*best))) {
      best = std::move(sol);
      stats.provedOptimal = mine.provedOptimal;
      stats.lowerBoundPj = mine.lowerBoundPj;
    }
  }
  return best;
}

} // namespace dfl
