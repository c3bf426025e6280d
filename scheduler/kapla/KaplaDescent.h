// KAPLA's intra-layer descent (paper §IV-C; docs/solver.md): bottom-up over
// the levels, a stacking and a caching pass per level, each step growing the
// dim that most reduces the most accessed tensor's accesses; several pass
// orders, per loop order and not, each best plan polished by local descent.
#pragma once

#include "scheduler/kapla/LayerObjective.h"

namespace dfl::intra {

class KaplaDescent : public LayerObjective {
public:
  using LayerObjective::LayerObjective;

  /// KAPLA's descent. The greedy is myopic; a few runs of it cost little and
  /// catch its worst misses: the three orders of its passes, with each level's
  /// loop order chosen after every pass; and two of them again with each
  /// level's passes run under each of its loop orders in turn (Algorithm 1;
  /// stack-cache adds nothing there). The best plan of each kind is polished by
  /// local descent, the better result kept — so the result is never worse than
  /// the first kind alone. The runs share most candidates (scored() memoizes).
  std::optional<IntraLayerSolution> kaplaSearch(SolveFailure &why);

protected:
  enum class PassOrder { StackCache, CacheStack, StackCacheStack };

  /// Where a role bypasses a level or a level keeps its roles in buffers of
  /// their own, the greedy's steps, ranked by one boundary's accesses, can
  /// stop far from the best (on eyeriss_pspad's pointwise convs, 2.4x the
  /// energy of the best of 2,000 random plans): kSampledStarts plans drawn at
  /// random within every level's buffers (drawPlan), the best kPolishedStarts
  /// of them polished, the best result kept (docs/solver.md, "Sampled starts").
  std::optional<IntraLayerSolution> sampledStarts();
  static constexpr int kSampledStarts = 128;
  static constexpr size_t kPolishedStarts = 4;
  /// Under the energy objective, within kNearFloor of the layer's floor (Floors.h):
  /// no schedule can gain more, so no sampled starts (most element-wise layers).
  bool nearFloor(const std::optional<IntraLayerSolution> &s) const;
  static constexpr double kNearFloor = 0.05;

  /// The runs and polish above in the space as it stands (exact or uneven
  /// tiles): all of them, or only the first (stack-cache, orders after the
  /// passes); `bestPlan`, if given, receives the plan of the result.
  std::optional<IntraLayerSolution> descentRuns(SolveFailure &why, bool allRuns, Plan *bestPlan);

  /// One bottom-up run of the stacking and caching passes. With `perOrder`, a
  /// level's passes run once under each of its loop orders (KAPLA's Algorithm
  /// 1), the best result kept; the order decides which tensor is the most
  /// accessed and so which dims the passes grow (a weight-gradient layer's
  /// output stays put only with N innermost). Otherwise the orders are chosen
  /// after each pass.
  const Score *descend(PassOrder order, bool perOrder, Plan &plan, SolveFailure &why);

  /// Chooses each free level's loop order, innermost level first.
  void pickOrders(Plan &p);

  /// Local descent after the passes: move any free level's tile or stack factor
  /// along one dim one blocked size up or down; take the best move that
  /// improves the objective; repeat until none does.
  /// With `stackJumps`, stackJump is among the moves (the sampled starts only).
  void polish(Plan &p, bool stackJumps = false);

  /// Plateau move: level l's tile along dim i to its largest blocked size
  /// (the whole dim where it divides), with one other dim's tile shrunk to
  /// the largest blocked size that makes the level fit again. A dim whose
  /// reuse appears only once the tile covers it whole (the ifm of a 1x1 conv
  /// stays put across K only with all of C) gains nothing from the single
  /// steps before that, so the greedy and the one-step moves never cross to it.
  template <class F>
  void jump(const Plan &p, size_t l, size_t i, F &&consider);

  /// Grows level l's tile (or stack factor) along dim i to its next blocked
  /// size, then each level above to the smallest tile that is a multiple of
  /// the array tile below it; false if the result is not blocked or does not fit.
  bool lift(Plan &q, size_t l, size_t i, bool stacking) const;

  /// Stack jump: level l's stack factor along dim i to the one whose array
  /// tile covers the dim whole, the levels above grown to stay blocked, and
  /// the lowest of them that no longer fits shrunk along one other dim to the
  /// largest blocked size that fits. Where a role bypasses the level above
  /// (eyeriss_pspad's weights), it stays put in the array only once the array
  /// tile holds it whole; each stack step before that costs the level above
  /// room and reuse and gains nothing, so the one-step and coupled moves never
  /// cross to it.
  template <class F>
  void stackJump(const Plan &p, size_t l, size_t i, F &&consider);

  /// Level m no longer fits: for each dim but i, its tile shrunk to the
  /// largest blocked size below it that fits, passed to `each`.
  template <class F>
  void refit(const Plan &q, size_t m, size_t i, F &&each);

  /// lift's second half: each level above l along dim i grown to the smallest
  /// tile blocked over the array tile below it; false at a fixed level.
  bool liftAbove(Plan &q, size_t l, size_t i) const;

  /// Every free level from l up blocked along dim i, within its units and buffers.
  bool fitsFrom(const Plan &q, size_t l, size_t i) const;

  /// The stack factor next to level l's along dim i (up: the next larger)
  /// that keeps the plan blocked; 0 (or out of range) if none. Every integer
  /// is tried up to kEveryStepLimit units, a bounded set above.
  int64_t neighbourRepl(const Plan &q, size_t l, size_t i, bool up) const;

  void stack(Plan &p, size_t l) { grow(p, l, true); }

  void cache(Plan &p, size_t l) { grow(p, l, false); }

  /// Repeatedly enlarges one dim by one blocked step (stacking: the stack factor;
  /// caching: the tile), choosing by KAPLA's rule, while the result stays valid.
  void grow(Plan &p, size_t l, bool stacking);
  /// The accesses of each role at level l's outer boundary, by which the
  /// passes rank the tensors: KAPLA's, at level l + 1 (where a role bypasses
  /// l + 1 it counts nothing there, so the greedy ignores it), or with
  /// `holderRanking_` at the level holding the role above l (docs/directives.md
  /// §6 "Bypass"): the fills it takes from further out.
  std::array<double, kNumRoles> boundaryAccesses(const Score &s, size_t l) const;
  /// kaplaSearch under one ranking.
  std::optional<IntraLayerSolution> rankedSearch(SolveFailure &why);
  bool holderRanking_ = false;
};

} // namespace dfl::intra
