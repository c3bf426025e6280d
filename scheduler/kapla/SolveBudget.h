// The solve budget: a deadline, a candidate cap and a cancel flag, and how a
// solve ended under it (docs/solver.md, "Solving under a budget").
//
// SolveBudget is the caller's request (SolverOptions::budget; all limits off by
// default). BudgetMeter is one solve's use of it, shared by every search of
// that solve: IntraLayerSolver's score() counts each candidate and every
// search asks stop() where it scores them (KAPLA's descent, the branch and
// bound, random sampling), the inter-layer solver between its steps. A limit
// reached is soft for the time and the candidates — a search stops only once
// it holds a valid schedule of its layer (the incumbent; the first valid
// candidate at the latest), so a tiny limit still yields a complete, valid
// schedule — and hard for cancellation: nothing more is wanted.
//
// The statuses follow Gecode's and Unison's convention: Complete (their
// "optimal": every search ran to its end — the best the method finds, proved
// optimal only where the exhaustive search says so), Feasible (a limit was
// reached; the best schedule found so far), NoneWithinLimit (a limit was
// reached before some layer had a valid schedule), Infeasible (a search ran to
// its end and found none). A constrained solve (--max-latency, --max-energy)
// adds Unmet: schedules were found, none within the constraints; the one
// closest to them is returned so the caller can say how far off it is.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace dfl {

/// The limit that stopped a solve early.
enum class SolveLimit { None, Time, Candidates, Cancelled };
/// "time", "candidates", "cancelled" ("none" for None).
const char *solveLimitName(SolveLimit limit);

enum class SolveStatus { Complete, Feasible, NoneWithinLimit, Infeasible, Unmet };
/// "complete", "feasible", "none within limit", "infeasible", "unmet".
const char *solveStatusName(SolveStatus status);

struct SolveBudget {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;
  /// Candidates scored over the whole solve (every layer, every search); 0: no cap.
  int64_t maxCandidates = 0;
  /// Set by another thread to stop the solve (the language server's $/cancelRequest).
  const std::atomic<bool> *cancel = nullptr;
  /// Called after every candidate scored with the count so far (progress
  /// within a layer; tests cancel through it at a chosen candidate).
  std::function<void(int64_t)> onCandidate;

  bool limited() const { return deadline || maxCandidates > 0 || cancel; }
};

class BudgetMeter {
public:
  explicit BudgetMeter(const SolveBudget &budget) : budget_(budget) {}

  /// Whether any limit is set (without one, exhausted() is always false).
  bool limited() const { return budget_.limited(); }
  /// One more candidate scored.
  void scored() {
    const int64_t n = candidates_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (budget_.onCandidate)
      budget_.onCandidate(n);
  }
  /// Whether a limit has been reached; once it has, it stays reached (a
  /// cancellation seen later replaces the limit recorded).
  bool exhausted();
  /// Whether a search should stop now: the solve is cancelled, or a limit is
  /// reached and the search holds a valid schedule to return.
  bool stop(bool haveIncumbent) { return exhausted() && (haveIncumbent || hit_ == SolveLimit::Cancelled); }
  bool cancelled() { return exhausted() && hit_ == SolveLimit::Cancelled; }
  /// The limit reached (None: none yet).
  SolveLimit hit() const { return hit_; }
  int64_t candidates() const { return candidates_; }
  /// Whether the solve may run its independent solves on several threads:
  /// not under a candidate cap or a per-candidate callback, which count the
  /// candidates in the order one thread scores them.
  bool threadable() const { return budget_.maxCandidates <= 0 && !budget_.onCandidate; }

private:
  const SolveBudget &budget_;
  // Atomic: the solver's threads share one meter (a deadline or a
  // cancellation stops them all).
  std::atomic<int64_t> candidates_{0};
  std::atomic<SolveLimit> hit_{SolveLimit::None};
  // The deadline is read every kClockEvery candidates (the clock cost 0.8 %
  // of a solve read at every one): a search stops at most that many late.
  static constexpr int64_t kClockEvery = 64;
  std::atomic<int64_t> clockAt_{0};   // the candidate count at which the clock is read next
};

} // namespace dfl
