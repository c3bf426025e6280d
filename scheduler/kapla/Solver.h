// Fills in a schedule: given a network, a hardware template and the directives
// the user wrote (any subset), returns a complete schedule that respects them,
// with its analysis and solver statistics. Solvers are registered by name.
#pragma once

#include "scheduler/analysis/Analysis.h"
#include "scheduler/kapla/InterLayerSolver.h"
#include "scheduler/kapla/IntraLayerSolver.h"
#include "scheduler/kapla/SolveBudget.h"
#include "scheduler/kapla/SolveFailure.h"

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
  /// false (--no-pipelining): layer by layer, every layer its own segment, no
  /// inter-layer step, whatever the hardware allows (segments the user wrote stay).
  bool pipelining = true;
  /// Constraints (--max-latency, --max-energy): the objective is minimized
  /// among the schedules evaluated that meet them (docs/solver.md,
  /// "Constraints and the energy-latency front").
  std::optional<double> maxLatencyCycles, maxEnergyPj;
  /// Keep every whole-schedule alternative evaluated, under every objective,
  /// in Solution::alternatives (--pareto).
  bool keepAlternatives = false;
  /// Threads for the independent solves (each layer alone, the segments'
  /// costs, the short list's spatial segments); 0: the CPUs this process may
  /// use. The result does not depend on it (docs/solver.md, "Speed").
  size_t threads = 0;
  /// --gap: the optimality gap the exact search tolerates per layer, a
  /// fraction (IntraLayerOptions::gap; 0: it proves the optimum).
  double gap = 0;

  bool constrained() const { return maxLatencyCycles || maxEnergyPj; }
};

/// One layer alone under the exact search (docs/solver.md, "The exhaustive
/// yardstick"): whether it proved its schedule optimal, its energy, and the
/// least energy any schedule of the space can have (its best lower bound).
struct ExactLayer {
  int layer = -1;
  bool proved = false;
  double energyPj = 0, lowerBoundPj = 0;
};

struct SolverStats {
  int64_t candidates = 0, rejected = 0;
  int64_t cappedLayers = 0;   // layers whose search stopped at its candidate limit
  int64_t provedLayers = 0;   // layers whose exhaustive search finished: optimal in the space
  std::vector<ExactLayer> exactLayers;   // exhaustive, objective energy: each layer alone
  double seconds = 0;
  InterLayerStats interLayer;
  double layerSeconds = 0;    // phase 1: every layer alone on all nodes
  /// Complete, or Feasible when the budget stopped the solve (`limit`); Unmet
  /// when no schedule evaluated meets the constraints.
  SolveStatus status = SolveStatus::Complete;
  /// The objectives solved for, in order: the one asked for, then (for the
  /// constraints or the front) the others.
  std::vector<Objective> objectivesSolved;
  /// Whole schedules evaluated by those solves (kept for the constraints or the front).
  int64_t alternativesEvaluated = 0;
  SolveLimit limit = SolveLimit::None;
  int64_t limitedLayers = 0;  // layers whose search the budget stopped
};

struct Solution {
  Schedule schedule;
  ScheduleResult result;
  SolverStats stats;
  /// Every whole schedule evaluated (the objective's solve; with
  /// keepAlternatives, the constraints or another objective, theirs too).
  std::vector<Alternative> alternatives;
  /// The schedule's segments of two or more layers, priced every way: why the
  /// solver chose them (empty when layer by layer won or the user wrote them).
  std::vector<SegmentCosts> segmentCosts;
};

/// Whether the totals meet the options' constraints.
bool meetsConstraints(const SolverOptions &o, double energyPj, double latencyCycles);
/// How far the totals are from the constraints: the largest ratio of a total
/// to its bound (<= 1: met).
double constraintExcess(const SolverOptions &o, double energyPj, double latencyCycles);
/// The alternatives no other dominates in energy and latency (<= in both, <
/// in one), one per distinct pair of totals, by latency ascending.
std::vector<Alternative> energyLatencyFront(const std::vector<Alternative> &alternatives);
/// Every segment of the schedule by its first layer: those it lists, and each
/// other of the network's `layers` alone (as the analysis runs them).
std::vector<Segment> segmentsOf(const Schedule &s, size_t layers);

class Solver {
public:
  virtual ~Solver() = default;
  /// The complete schedule (status Complete or Feasible; Unmet: the one
  /// closest to the constraints), or nullopt with `failure` saying why
  /// (status Infeasible or NoneWithinLimit).
  virtual std::optional<Solution> solve(const Model &model, const Schedule &given, const SolverOptions &options,
                                        SolveFailure &failure) = 0;
};

/// The registered solver names, in order ("kapla" first: the default).
std::vector<std::string> solverNames();
/// nullptr if `name` is not registered. `cap` overrides the exhaustive solver's
/// per-layer candidate limit (0: its default).
std::unique_ptr<Solver> makeSolver(const std::string &name, int64_t cap = 0);

} // namespace dfl
