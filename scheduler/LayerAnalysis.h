// Internal to the scheduler: the per-layer half of analyzeSchedule.
#pragma once

#include "scheduler/Analysis.h"

namespace dfl {

/// Analyzes one layer's directives (schedule may be null: nothing given).
/// Appends the layer's validity problems to `issues`.
LayerResult analyzeLayer(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *schedule,
                         std::vector<Issue> &issues);

/// The hops from the nearest corner of a rows x cols mesh, summed over its
/// first `used` units in row-major order (docs/directives.md §6): a closed
/// form, since a mesh of 2^31 units made a loop over them hang every analysis.
double cornerHopSum(int64_t used, int64_t rows, int64_t cols);

} // namespace dfl
