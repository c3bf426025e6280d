#include "scheduler/kapla/SolveBudget.h"

#include "support/Check.h"

namespace dfl {

const char *solveLimitName(SolveLimit limit) {
  switch (limit) {
  case SolveLimit::None: return "none";
  case SolveLimit::Time: return "time";
  case SolveLimit::Candidates: return "candidates";
  case SolveLimit::Cancelled: return "cancelled";
  }
  DFLC_UNREACHABLE("limit " + std::to_string(static_cast<int>(limit)));
}

const char *solveStatusName(SolveStatus status) {
  switch (status) {
  case SolveStatus::Complete: return "complete";
  case SolveStatus::Feasible: return "feasible";
  case SolveStatus::NoneWithinLimit: return "none within limit";
  case SolveStatus::Infeasible: return "infeasible";
  case SolveStatus::Unmet: return "unmet";
  }
  DFLC_UNREACHABLE("status " + std::to_string(static_cast<int>(status)));
}

bool BudgetMeter::exhausted() {
  if (hit_ == SolveLimit::Cancelled)
    return true;
  // Cancellation is checked every time: it may come after another limit.
  if (budget_.cancel && budget_.cancel->load(std::memory_order_relaxed)) {
    hit_ = SolveLimit::Cancelled;
    return true;
  }
  if (hit_ != SolveLimit::None)
    return true;
  if (budget_.maxCandidates > 0 && candidates_ >= budget_.maxCandidates)
    hit_ = SolveLimit::Candidates;
  else if (const int64_t n = candidates_.load(std::memory_order_relaxed);
           budget_.deadline && n >= clockAt_.load(std::memory_order_relaxed)) {
    clockAt_.store(n + kClockEvery, std::memory_order_relaxed);
    if (SolveBudget::Clock::now() >= *budget_.deadline)
      hit_ = SolveLimit::Time;
  }
  return hit_ != SolveLimit::None;
}

} // namespace dfl
