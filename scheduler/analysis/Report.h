// The results of analyzeSchedule for people (a per-layer table: energy
// breakdown, latency, utilization, with explicit units) and for programs (JSON).
#pragma once

#include "model/Evaluation.h"
#include "scheduler/analysis/Analysis.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dfl {

/// A level's trip counts, innermost first, comma-separated; 0 (an outermost
/// update stepping over an extent the solver still picks) is "?".
std::string tripCountsText(const std::vector<int64_t> &trips);

/// A segment's kind as the tables say it: "spatial", "temporal", "temporal,
/// Yo/4" (split into instances) or "one layer".
std::string segmentKindText(const SegmentResult &segment);
/// The lines under the per-layer table of a complete, valid schedule: its
/// segments of two or more layers, the layers that dominate energy and
/// latency, the PE utilization (median layer, time-weighted); else "".
std::string scheduleStoryText(const Network &net, const ScheduleResult &result);

std::string scheduleReportText(const Model &model, const Schedule &schedule, const ScheduleResult &result);
/// Per layer and in total, the energy and latency beside their lower bounds
/// (scheduler/analysis/Floors.h), the gaps, and what binds each layer's
/// bound: `dflc -v`. Empty unless the schedule is complete and valid.
std::string floorsText(const Network &net, const Hardware &hw, const ScheduleResult &result);
/// {"network", "hardware", "complete", "valid", "totals": {...}, "layers": [...], "segments": [...]}
std::string scheduleReportJson(const Model &model, const Schedule &schedule, const ScheduleResult &result);

} // namespace dfl
