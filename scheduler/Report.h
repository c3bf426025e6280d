// The results of analyzeSchedule for people (a per-layer table: energy
// breakdown, latency, utilization, with explicit units) and for programs (JSON).
#pragma once

#include "scheduler/Analysis.h"

#include <string>

namespace dfl {

/// One energy unit per table, chosen from its largest figure so the numbers stay readable.
struct EnergyUnit {
  const char *name;
  double pj;
};
EnergyUnit energyUnitFor(double largestPj);

std::string scheduleReportText(const Model &model, const Schedule &schedule, const ScheduleResult &result);
/// {"network", "hardware", "complete", "valid", "totals": {...}, "layers": [...], "segments": [...]}
std::string scheduleReportJson(const Model &model, const Schedule &schedule, const ScheduleResult &result);

} // namespace dfl
