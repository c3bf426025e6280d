// A Gecode search stop for dflc's constraint models (intrinsic embedding,
// core placement): internal to scheduler/, which alone links Gecode.
#pragma once

#include <gecode/search.hh>

#include <chrono>
#include <cstdint>
#include <optional>

namespace dfl {

/// Stops past a count of search nodes or of failures, whichever comes first:
/// work, not wall time, so a search ends at the same point on an idle and on
/// a loaded machine (docs/limits.md) and its result depends on the inputs
/// alone. A wall-clock deadline is only for a user who asks for one (`dflc
/// embed --time-limit`); timedOut() then says it was what stopped the search.
class WorkLimitStop : public Gecode::Search::Stop {
public:
  using Clock = std::chrono::steady_clock;
  WorkLimitStop(uint64_t nodes, uint64_t failures, std::optional<Clock::time_point> deadline = std::nullopt)
      : nodes_(nodes), failures_(failures), deadline_(deadline) {}
  bool stop(const Gecode::Search::Statistics &s, const Gecode::Search::Options &) override {
    if (s.node > nodes_ || s.fail > failures_)
      return true;
    if (deadline_ && Clock::now() >= *deadline_)
      return timedOut_ = true;
    return false;
  }
  bool timedOut() const { return timedOut_; }

private:
  uint64_t nodes_, failures_;
  std::optional<Clock::time_point> deadline_;
  bool timedOut_ = false;
};

} // namespace dfl
