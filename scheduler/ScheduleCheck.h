// The schedule half of `dflc check`, shared by the CLI and the language server
// so that both report exactly the same diagnostics.
//
// checkSchedules: before — a Model the front end produced without errors;
// after — every schedule naming a known network and hardware is analyzed
// (analyzeSchedule), its Issues are reported, and a valid but incomplete one
// gets W0830 listing what is missing. Runs wherever the caller runs it (the
// CLI's main thread, the language server's diagnostics worker).
#pragma once

#include "Analysis.h"

#include <vector>

namespace dfl {

struct CheckedSchedule {
  int schedule = -1;   // index into Model::schedules
  ScheduleResult result;
};

std::vector<CheckedSchedule> checkSchedules(const Model &model, DiagnosticsEngine &diags);

} // namespace dfl
