// `dflc export --timeloop LAYER OUT/`: one layer of a checked schedule as
// Timeloop v0.4 YAML (NVlabs/timeloop, the `v3.0.3` tag's timeloop-model):
// the problem, the architecture with its energy table given directly (ERT, no
// Accelergy) and the mapping. docs/timeloop.md is the reference: how each
// directive becomes factors, and what the two cost models count differently.
#pragma once

#include "model/Model.h"
#include "scheduler/analysis/Analysis.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>

namespace dfl::driver {

/// Layer `layer` (an index into the schedule's network) of schedule `s`,
/// checked as `r`, as one Timeloop YAML file; nullopt with a located refusal
/// (E1502-E1504) in `diags` where Timeloop cannot express it.
std::optional<std::string> timeloopYaml(const Model &model, const Schedule &s, const ScheduleResult &r, int layer,
                                        DiagnosticsEngine &diags);

} // namespace dfl::driver
