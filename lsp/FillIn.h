// The code action "Fill in missing directives": for each valid but incomplete
// schedule of a document, the solver completes it (off the main loop: a
// request is cancellable between layers) and the action edits the schedule
// into the complete one; inside an incomplete `layer NAME { ... }` block also
// "... of layer NAME", that block alone. Disabled, with the solver's reason,
// when no valid schedule exists. Computed once per text and configuration.
//
// The edits come from the model, not from text: each level block, layer block
// and segment the solver added is printed by model/ScheduleWriter.h's
// per-construct printers and inserted, as whole lines, before the next written
// block in the solver's order, else before the closing brace of the enclosing
// block (positions from the written constructs' source ranges). A level block
// written without directives is replaced. Everything written stays as it was,
// comments included.
//
// One solve at a time per document: a request for the text and configuration
// being solved waits for that solve (identical requests coalesce onto one
// computation); a request for a newer one stops the stale solve and waits for
// it to end before solving, and one for an older text (read before an edit
// another request has seen) gives up. A solve stops when its time limit passes (the
// best schedule found; scheduler/kapla/SolveBudget.h), when it is stale, when every
// request waiting for it was cancelled, or at stopAll (exit).
#pragma once

#include "lsp/Protocol.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dfl {
class Solver;
}

namespace dfl::lsp {

struct Compilation;

/// A solver by a name the settings validated (scheduler/kapla/Solver.h's makeSolver).
using SolverFactory = std::function<std::unique_ptr<Solver>(const std::string &)>;

class FillIn {
public:
  /// `makeSolver` null: scheduler/kapla/Solver.h's.
  explicit FillIn(SolverFactory makeSolver = nullptr);

  /// `out` (the actions found so far) followed by the fill-in actions of `c`
  /// whose schedule or layer block overlaps `range`, solved with `solverName`
  /// and `objective` (names the driver validated) within `timeLimitSeconds`.
  /// `cancelled` (may be null) ends the request: then `out` alone (the solve
  /// goes on while another request waits for it). An exception in the solve
  /// (our bug) reaches every request waiting for it, never as a cancellation.
  std::vector<CodeAction> actions(std::vector<CodeAction> out, const std::shared_ptr<const Compilation> &c,
                                  const std::string &uri, Range range,
                                  const std::shared_ptr<std::atomic<bool>> &cancelled, const std::string &solverName,
                                  const std::string &objective, double timeLimitSeconds);
  /// Stops every solve, for good: requests then get `out` alone.
  void stopAll();
  /// Solves started so far (tests: coalescing).
  int64_t solvesStarted() const { return solvesStarted_; }

private:
  struct ScopedAction {
    Range scope;   // offered when the requested range overlaps it
    CodeAction action;
  };
  /// The solve of one document's text and configuration (`key`).
  struct Flight {
    std::string key;
    uint64_t generation = 0;   // of the text solved
    std::atomic<bool> stop{false};   // the solver's cancel flag
    std::atomic<int> waiters{0};     // other requests waiting for it, not cancelled
    std::exception_ptr error;        // what the solve threw (set before it ends)
  };
  std::vector<ScopedAction> solve(const Compilation &c, const std::string &uri, Flight &flight,
                                  const std::shared_ptr<std::atomic<bool>> &cancelled, const std::string &solverName,
                                  const std::string &objective, double timeLimitSeconds, bool &stopped);

  SolverFactory makeSolver_;
  std::mutex mutex_;
  std::condition_variable flightEnded_;
  std::map<std::string, std::shared_ptr<Flight>> flights_;   // by URI: the document's one solve
  std::atomic<bool> stopped_{false};
  std::atomic<int64_t> solvesStarted_{0};
  // The last actions per document, valid for one text and configuration:
  // clients ask on every cursor move, the solver should run once per edit.
  std::map<std::string, std::pair<std::string, std::vector<ScopedAction>>> cache_;
};

} // namespace dfl::lsp
