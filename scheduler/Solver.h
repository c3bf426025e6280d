// Fills in a schedule: given a network, a hardware template and the directives
// the user wrote (any subset), returns a complete schedule that respects them,
// with its analysis and solver statistics. Solvers are registered by name.
#pragma once

#include "scheduler/Analysis.h"
#include "scheduler/InterLayerSolver.h"
#include "scheduler/IntraLayerSolver.h"
#include "scheduler/SolveBudget.h"
#include "scheduler/SolveFailure.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

struct SolverOptions {
  Objective objective = Objective::Energy;
  /// Called with (layers done, layers in all) as the solver progresses.
  std::function<void(size_t, size_t)> progress;
  /// Segment chains the inter-layer DP keeps for the real solve (KAPLA §IV-B); >= 1.
  size_t topK = 4;
  /// Spatially pipelined segments considered (false: temporal segments only;
  /// the benchmark's "before" column).
  bool spatial = true;
  /// A deadline, a candidate cap and a cancel flag (none by default).
  SolveBudget budget;
};

struct SolverStats {
  int64_t candidates = 0, rejected = 0;
  int64_t cappedLayers = 0;   // layers whose search stopped at its candidate limit
  int64_t provedLayers = 0;   // layers whose exhaustive search finished: optimal in the space
  double seconds = 0;
  InterLayerStats interLayer;
  double layerSeconds = 0;    // phase 1: every layer alone on all nodes
  /// Complete, or Feasible when the budget stopped the solve (`limit`).
  SolveStatus status = SolveStatus::Complete;
  SolveLimit limit = SolveLimit::None;
  int64_t limitedLayers = 0;  // layers whose search the budget stopped
};

struct Solution {
  Schedule schedule;
  ScheduleResult result;
  SolverStats stats;
};

class Solver {
public:
  virtual ~Solver() = default;
  /// The complete schedule (status Complete or Feasible), or nullopt with
  /// `failure` saying why (status Infeasible or NoneWithinLimit).
  virtual std::optional<Solution> solve(const Model &model, const Schedule &given, const SolverOptions &options,
                                        SolveFailure &failure) = 0;
};

/// The registered solver names, in order ("kapla" first: the default).
std::vector<std::string> solverNames();
/// nullptr if `name` is not registered. `cap` overrides the exhaustive solver's
/// per-layer candidate limit (0: its default).
std::unique_ptr<Solver> makeSolver(const std::string &name, int64_t cap = 0);

} // namespace dfl
