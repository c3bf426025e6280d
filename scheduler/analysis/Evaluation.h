// The memory-hierarchy target's side of the one evaluator (model/Evaluation.h):
// a schedule's analysis as rows per layer and energy by component.
#pragma once

#include "model/Evaluation.h"
#include "scheduler/analysis/Analysis.h"

namespace dfl {

/// Per layer: its energy by component (MAC, each memory level, NoC, bus,
/// static), latency and PE utilization, for a layer the analysis completed;
/// the totals where the whole schedule is complete and valid.
Evaluation evaluationOf(const Model &model, const Schedule &schedule, const ScheduleResult &result);

} // namespace dfl
