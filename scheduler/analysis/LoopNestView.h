// A schedule as loop nests for people (`dflc show --loops`): per layer, per
// level outermost first, the temporal loops (`update`) and the spatial ones
// (`stack`) with their trip counts, and what each buffer holds against its
// capacity — Timeloop's mapping printout in dflc's terms (docs/cli.md).
#pragma once

#include "scheduler/analysis/Analysis.h"

#include <string>

namespace dfl {

std::string scheduleLoopsText(const Model &model, const Schedule &schedule, const ScheduleResult &result);

} // namespace dfl
