// Internal to the scheduler: the per-layer half of analyzeSchedule.
#pragma once

#include "scheduler/analysis/Analysis.h"

#include <optional>

namespace dfl {

/// Analyzes one layer's directives (schedule may be null: nothing given).
/// Appends the layer's validity problems to `issues`.
LayerResult analyzeLayer(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *schedule,
                         std::vector<Issue> &issues);
/// The same for `shape` standing in for layer `layer` of `net` (a piece of
/// it: scheduler/analysis/Instances.h).
LayerResult analyzeLayer(const Network &net, const Layer &shape, int layer, const Hardware &hw,
                         const LayerScheduleModel *schedule, std::vector<Issue> &issues);

/// While one lives, this thread's analyses enumerate every window sum
/// afresh instead of reading the ones kept by what they read (a cache:
/// tests check that it changes no result).
class FreshWindowSums {
public:
  FreshWindowSums();
  ~FreshWindowSums();
  FreshWindowSums(const FreshWindowSums &) = delete;
  FreshWindowSums &operator=(const FreshWindowSums &) = delete;

private:
  bool before_;
};

/// §7 "Vector units": a result analysed on vector unit `unit`'s truncated
/// template, its levels moved up by `offset` (the unit's level) and those
/// inside it added, empty: as the full template indexes them. And back down.
LayerResult liftVectorResult(LayerResult r, int offset, int unit);
LayerResult lowerVectorResult(LayerResult r, int offset);

/// §7: the first of a normalization's row dims along which `extent` (a
/// level's tile) splits its rows, and the row's words along it (nullopt: whole rows).
std::optional<std::pair<Dim, int64_t>> splitRowDim(const Layer &layer, const DimVector &extent);

/// §8: a layer's latency (the longer of its compute cycles and each level's
/// traffic at that level's bandwidth), its binding level, and the static energy
/// the chip leaks meanwhile (energyPj adjusted). Run again on a layer whose
/// traffic a segment changes: words kept on chip cross no DRAM boundary.
void settleLatency(const Hardware &hw, LayerResult &lr);
/// Level l's traffic at its bandwidth, as settleLatency sets its cycles
/// (nullopt: the level has no bandwidth, so no cycles of its own).
std::optional<double> boundaryCycles(const Hardware &hw, const LayerResult &lr, size_t l);

} // namespace dfl
