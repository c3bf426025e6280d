// Two schedules of one network on one hardware template side by side (`dflc
// diff`): per layer and in total the energy and latency of each and their
// ratio, the total energy by component, the segments, and the directives
// that differ (docs/cli.md).
#pragma once

#include "scheduler/analysis/Analysis.h"

#include <string>

namespace dfl {

/// `a` and `b` name the same network and hardware; `labelA`/`labelB` say
/// where each comes from (its file).
std::string scheduleDiffText(const Model &model, const Schedule &a, const ScheduleResult &ra, const std::string &labelA,
                             const Schedule &b, const ScheduleResult &rb, const std::string &labelB);

} // namespace dfl
