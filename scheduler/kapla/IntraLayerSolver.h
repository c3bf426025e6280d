// KAPLA's intra-layer solver (paper §IV-C): bottom-up over the memory levels,
// from the PE's unit tensors up; at each level a stacking pass (spread tiles
// over the level's units) then a caching pass (enlarge the tile each buffer
// holds), each step enlarging one dimension to its next blocked size — the one
// that most reduces the currently most-accessed tensor's accesses (ties by the
// second) — until the level's units or capacity are used up; over a few loop
// orders. Every candidate is scored by the same analysis `dflc check` runs, so
// what the solver returns checks with identical numbers.
//
// Levels the user (or the hardware) fixed are kept verbatim.
//
// The parts (internal to scheduler/, namespace dfl::intra): the space
// (TilingSpace.h), the objective every candidate is scored by
// (LayerObjective.h), and the searches — KAPLA's descent (KaplaDescent.h),
// the exhaustive branch and bound (BranchAndBound.h), random sampling
// (RandomSearch.h). solveLayer picks one by IntraLayerOptions::search.
#pragma once

#include "scheduler/analysis/Analysis.h"
#include "scheduler/kapla/SolveBudget.h"
#include "scheduler/kapla/SolveFailure.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

namespace intra {
class AnalysisMemo;
}

enum class Objective { Energy, Latency, EDP };
const char *objectiveName(Objective o);
double objectiveValue(Objective o, double energyPj, double latencyCycles);

enum class IntraLayerSearch {
  Kapla,        // stacking/caching cost descent (KAPLA §IV-C)
  Exhaustive,   // every blocked tiling, stack factor and loop order; safe branch and bound
  Random,       // samples of the same space drawn within its buffers (like Timeloop's random mapper)
};

/// A layer of a temporal segment priced as the segment runs it (§9,
/// keepOnChip): the share of each role's DRAM reads that are intermediates
/// read out of the node buffers, and whether its output's write-back stays
/// there. A plan good alone can be poor in a segment: with those DRAM words
/// gone, its compute or on-chip traffic binds the latency (docs/solver.md,
/// "Layers solved as the segment prices them").
struct OnChipPricing {
  std::array<double, kNumRoles> reads{};
  bool output = false;
  bool any() const { return output || std::any_of(reads.begin(), reads.end(), [](double s) { return s > 0; }); }
  std::string key() const {
    std::string k = "/o" + std::to_string(output);
    for (double share : reads)
      k += "," + std::to_string(share);
    return k;
  }
};

/// Layer x's result `alone` as a temporal segment runs it, priced by
/// `onChip` (keepOnChip, the latency settled): what the solver scores.
LayerResult pricedOnChip(const Network &net, int x, const Hardware &hw, const LayerResult &alone,
                         const OnChipPricing &onChip);

struct IntraLayerOptions {
  Objective objective = Objective::Energy;
  IntraLayerSearch search = IntraLayerSearch::Kapla;
  /// Exhaustive: stop after this much work (analyses, and the steps of the
  /// enumeration at a fixed rate: BranchAndBound::kStepsPerAnalysis; 0: no
  /// limit) and return the best so far.
  /// Random: the number of samples.
  int64_t maxCandidates = 0;
  uint64_t seed = 1;   // Random: fixed, so runs are reproducible
  /// Units of the second-outermost level (the nodes) the layer may use; 0: all.
  int64_t maxNodes = 0;
  /// Per-node tile sizes the second-outermost level must have (0: free): the
  /// matched forwarding granularity of a spatially pipelined segment
  /// (docs/directives.md §9, E0814). Channel-wise layers take `C` for `K`.
  DimVector fixedTopTile{};
  /// Per-dim stack factor the second-outermost level must have where
  /// fixedTopTile is set (0: free). 1 along a forwarded channel dim cut into
  /// chunks: the region walks the chunks one by one on both ends, so the
  /// producer's and the consumer's update steps match (E0814).
  DimVector fixedTopStack{};
  /// The second-outermost level walks the batch outermost (its `N` update
  /// last, whatever the loop order): a layer of a temporal segment run in
  /// batch chunks (docs/directives.md §9) stops between two chunks.
  bool topBatchOutermost = false;
  /// Dims the second-outermost level walks outside all others, innermost
  /// first (after topBatchOutermost's N): a fused attention's layers walk
  /// their head groups outermost and the queries inside them, all alike, so
  /// that each forwards a head group's rows query tile by query tile.
  std::vector<Dim> topOutermost;
  /// Exhaustive: start from KAPLA's solution as the incumbent (off only to
  /// test that the bound alone finds the same optimum).
  bool seedWithKapla = true;
  /// Exhaustive, tests only: analyse the level-0 assignments the leaf
  /// bound would cut too, and count those scoring below it
  /// (IntraLayerStats::leafBoundMisses: a bound that is not one).
  bool auditLeafBound = false;
  /// Exhaustive, objective energy: the optimality gap tolerated, a fraction
  /// (as a MIP solver's relative gap): a subtree whose bound is within it of
  /// the incumbent (bound * (1 + gap) >= incumbent) is cut, and the search
  /// ends with its result within that gap of its lower bound. 0: prove the
  /// optimum.
  double gap = 0;
  /// Bytes of each node's buffer (the second-outermost level) the layer may
  /// not use: room kept for a temporal segment's intermediates (E0819). All
  /// searches see that level's capacity less this.
  int64_t reservedTopBytes = 0;
  /// A softmax's or norm's rows (docs/directives.md §7, "Rows and the
  /// passes"): whole in the outermost on-chip level's tiles, and where no
  /// such schedule is valid, split there when `mayRowSplit` (each statistics
  /// pass streams the input from DRAM). Off for the layers of a segment of
  /// several (E0826). `rowsSplit`: this solve's tiles split them.
  bool mayRowSplit = true;
  bool rowsSplit = false;
  /// A layer of a temporal segment priced as the segment runs it (none: alone).
  OnChipPricing onChip;
  /// Per dim, the largest tile any level may have (0: no limit). A layer of
  /// a segment split into instances is solved on its largest piece and runs
  /// every piece with its directives; a tile past a smaller piece's extent is
  /// no tile of that piece (E0806: the halo makes the edge pieces larger).
  DimVector maxTile{};
  /// The solve's budget (null: none). Every candidate scored is counted; a
  /// search stops where it scores them once a limit is reached and it holds
  /// a valid schedule (at once when cancelled), returning the best scored.
  BudgetMeter *budget = nullptr;
  /// Where the descent's analyses of completed plans are kept across solves
  /// (null: within each solve only); see intra::AnalysisMemo.
  intra::AnalysisMemo *analyses = nullptr;
  /// Keep what pricing reads beside the memo's unpriced entries of whole
  /// layers (intra::UnpricedResult): where priced solves follow, the
  /// inter-layer solver's temporal segments.
  bool keepUnpriced = false;
};

struct IntraLayerStats {
  int64_t candidates = 0;   // schedules evaluated
  int64_t rejected = 0;     // of which invalid
  bool capped = false;      // exhaustive search hit maxCandidates
  bool provedOptimal = false;   // exhaustive search finished: its result is the optimum of the space
  /// Exhaustive search finished (not capped, bounds safe): its result is
  /// within IntraLayerOptions::gap of lowerBoundPj (provedOptimal where
  /// the gap cut nothing).
  bool provedWithinGap = false;
  int64_t prunedByBound = 0;    // exhaustive: subtrees cut by the lower bound
  /// Exhaustive: the steps of its enumeration (a tile and stack factor tried
  /// for a dim, a loop order cut before its analysis); kStepsPerAnalysis of
  /// them count as one analysis against maxCandidates.
  int64_t enumerated = 0;
  /// Exhaustive, objective energy: a lower bound of the layer's optimum in the
  /// space — the result's energy when proved, else the least bound of a
  /// subtree the limit or the gap tolerance left open (0: none known).
  double lowerBoundPj = 0;
  bool limited = false;         // a search stopped at the solve budget (IntraLayerOptions::budget)
  /// Plans a priced solve priced from an unpriced analysis kept in the memo
  /// (intra::UnpricedResult) rather than analysed again.
  int64_t repriced = 0;
  /// IntraLayerOptions::auditLeafBound: leaves audited, and those below their bound.
  int64_t leafBoundAudits = 0, leafBoundMisses = 0;
};

struct IntraLayerSolution {
  LayerScheduleModel schedule;   // every level below the outermost
  LayerResult result;
};

/// Solves one layer. `given` holds the directives the user wrote for it (may be
/// null); a level given there is kept as written. Returns nullopt with `why`
/// set when no valid schedule was found (which level, what does not fit; or
/// that the budget ran out first).
std::optional<IntraLayerSolution> solveLayer(const Network &net, int layer, const Hardware &hw,
                                             const LayerScheduleModel *given, const IntraLayerOptions &options,
                                             IntraLayerStats &stats, SolveFailure &why);

/// Solves one layer on vector unit `unit` of `hw` (docs/solver.md, "Vector
/// units"): the search on the unit's truncated template, `given`'s levels
/// moved to it, the schedule and result moved back to `hw`'s levels.
std::optional<IntraLayerSolution> solveOnVector(const Network &net, int layer, const Hardware &hw, int unit,
                                                const LayerScheduleModel *given, const IntraLayerOptions &options,
                                                IntraLayerStats &stats, SolveFailure &why);

/// Solves one layer where it runs best: on the MAC array and, where
/// `mayUseVector` and the layer has no block the user wrote, on each vector
/// unit that can run it, keeping the least by the objective (the array on a
/// tie). A written block keeps its placement (`on V`, or the array).
std::optional<IntraLayerSolution> solvePlaced(const Network &net, int layer, const Hardware &hw,
                                              const LayerScheduleModel *given, const IntraLayerOptions &options,
                                              bool mayUseVector, IntraLayerStats &stats, SolveFailure &why);

} // namespace dfl
