#include "scheduler/analysis/ScheduleCheck.h"

#include <algorithm>

namespace dfl {

std::vector<CheckedSchedule> checkSchedules(const Model &model, const std::vector<uint32_t> &files,
                                            DiagnosticsEngine &diags) {
  std::vector<CheckedSchedule> out;
  for (size_t i = 0; i < model.schedules.size(); ++i) {
    const Schedule &s = model.schedules[i];
    if (s.network < 0 || s.hardware < 0 || std::find(files.begin(), files.end(), s.range.begin.file) == files.end())
      continue;
    out.push_back({static_cast<int>(i), analyzeSchedule(model, s)});
    const ScheduleResult &r = out.back().result;
    reportIssues(r.issues, diags);
    reportIssues(r.warnings, diags);
    if (r.valid && !r.complete) {
      std::vector<std::string> missing;
      for (const LayerResult &lr : r.layers)
        missing.insert(missing.end(), lr.missing.begin(), lr.missing.end());
      // The first five are enough to act on; the count says how much is left.
      size_t shown = std::min<size_t>(missing.size(), 5);
      std::string what = joinList({missing.begin(), missing.begin() + static_cast<long>(shown)}, "; ", "; ");
      if (missing.size() > shown)
        what += "; and " + std::to_string(missing.size() - shown) + " more";
      diags.report(s.range, diag::warn_schedule_incomplete) << what;
    }
  }
  return out;
}

} // namespace dfl
