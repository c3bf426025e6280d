// The objective of the intra-layer searches: a plan, completed (levels above
// the one being decided at their smallest), turned into directives and scored
// by the analysis `dflc check` runs (score; memoized as a Score for the
// descent: scored). Every candidate of every search is scored here, so here
// the solve budget counts them and the incumbent — the best valid schedule
// scored — is kept for when the budget stops a search (stopping, finish).
#pragma once

#include "scheduler/kapla/TilingSpace.h"

#include <string>
#include <unordered_map>

namespace dfl::intra {

/// What the descent reads of a scored plan: the objective, and per level the
/// accesses (reads + writes) of each role.
struct Score {
  double value = 0;
  std::vector<std::array<double, kNumRoles>> accesses;
};

class LayerObjective : public TilingSpace {
public:
  LayerObjective(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *given,
                 const IntraLayerOptions &options, IntraLayerStats &stats);

  /// A search's result; or, where the budget stopped the search, the best
  /// valid schedule it scored (none: `why` says NoneWithinLimit).
  std::optional<IntraLayerSolution> finish(std::optional<IntraLayerSolution> sol, SolveFailure &why);

  /// Scores the plan as it stands, levels above the one being decided holding
  /// just their inner array tile (the smallest valid completion).
  std::optional<IntraLayerSolution> evaluate(const Plan &p) { return score(completed(p)); }

  Plan completed(const Plan &p) const;

  /// evaluate(), memoized, reduced to a Score (null: invalid): the descent's
  /// runs and passes meet the same completed plans again and again.
  const Score *scored(const Plan &p);

  std::optional<IntraLayerSolution> score(const Plan &p);

  /// Why a plan the search ended on is not valid: its first issue, preferring
  /// one at a directive written in the source (SolveFailure::constraint).
  void explain(const Plan &p, SolveFailure &why) const;

  /// Level l of `p` set at its smallest on the levels below (their array
  /// tile; pins and forced tiles applied), or as written where given whole.
  /// DoesNotFit where it cannot hold that, or the next level its stacked
  /// tile: `why` then has the bytes and the given directive that sets them.
  enum class LevelStart { Given, Free, DoesNotFit };
  LevelStart startLevel(Plan &p, size_t l, SolveFailure &why);

  /// Every level at its smallest, innermost first (levels given whole as
  /// written); none, with `why` DoesNotFit, where a level cannot hold it.
  std::optional<Plan> smallestCompletion(SolveFailure &why);

protected:
  LayerScheduleModel directivesOf(const Plan &p) const;

  /// The node-level units of `r` where they exceed the nodes the solve may
  /// use (IntraLayerOptions::maxNodes: a segment's region); 0 if within.
  int64_t crowding(const LayerResult &r) const;

  /// The innermost level given in part (pinnedLevel), if any.
  const LevelDirectives *firstPinned() const;
  /// What it fixes, as written: "level REGF of hardware 'ws' fixes: ...".
  std::string pinnedText(const LevelDirectives &d) const;

  /// A failure of this layer, the reason's numbers to be filled in.
  SolveFailure failure(SolveFailure::Reason reason) const;

  /// Whether the search should stop where it is (the solve budget: a limit
  /// reached and a valid schedule scored, or cancelled). Once true, true.
  bool stopping();

  IntraLayerStats &stats_;
  const int64_t firstCandidate_;   // the cap is per layer; stats may add up several (a segment's layers)
  size_t decided_ = 0;
  std::unordered_map<std::string, std::optional<Score>> memo_;   // scored()'s results by completed plan
  BudgetMeter *budget_;         // the solve's (null: none)
  const bool limited_;          // it has a limit: the incumbent is kept, stopping() asks it
  bool stopped_ = false;        // a search stopped at the budget
  std::optional<IntraLayerSolution> incumbent_;   // the best valid schedule scored (limited_ only)
  double incumbentValue_ = 0;
};

} // namespace dfl::intra
