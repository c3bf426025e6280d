// The schedule half of `dflc check`, shared by the CLI and the language server
// so that both report exactly the same diagnostics.
//
// checkSchedules: before — a Model the front end produced without errors and
// the buffer ids of the files given (`dflc check FILE...`, the editor's
// document); after — every schedule declared in those files and naming a known
// network and hardware is analyzed (an imported schedule is context: a
// compiled out/schedule.dfl imports the partial one it completes)
// (analyzeSchedule), its Issues are reported, and a valid but incomplete one
// gets W0830 listing what is missing. Runs wherever the caller runs it (the
// CLI's main thread, the language server's diagnostics worker).
#pragma once

#include "scheduler/analysis/Analysis.h"

#include <cstdint>
#include <vector>

namespace dfl {

struct CheckedSchedule {
  int schedule = -1;   // index into Model::schedules
  ScheduleResult result;
};

std::vector<CheckedSchedule> checkSchedules(const Model &model, const std::vector<uint32_t> &files,
                                            DiagnosticsEngine &diags);

} // namespace dfl
