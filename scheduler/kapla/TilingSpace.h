// The intra-layer solver's space (docs/solver.md, "Intra-layer"): per level
// below the outermost a tile and a stack factor per independent dim and a
// loop order (Plan); the blocked sizes a level may take, what fits its buffer
// and its units, the constraints of the inter-layer scheme (forced top-level
// tiles, node limit, reserve), the levels the user or the hardware fixed, and
// a plan's directives. Internal to scheduler/: the searches derive from it.
#pragma once

#include "scheduler/kapla/IntraLayerSolver.h"
#include "model/LoopNest.h"

#include <array>
#include <optional>
#include <random>
#include <vector>

namespace dfl::intra {

constexpr size_t kND = 7;

/// Loop orders tried at every level, innermost first; each keeps one tensor
/// stationary the longest (ofm: reductions innermost; wgt: N and the output
/// plane innermost; ifm: K innermost).
const std::vector<std::array<Dim, kND>> &loopOrders();

/// A candidate in the solver's space: per level, a tile and a stack factor per
/// independent dim, and a loop order. Everything else follows (docs/directives.md).
struct Plan {
  struct LevelPlan {
    std::array<int64_t, kND> tile{}, repl{};
    size_t order = 0;
    bool fixed = false;   // given by the user or the hardware: emitted verbatim
  };
  std::vector<LevelPlan> levels;   // all but the outermost
};

/// One layer's space under one set of options; the searches (KaplaDescent,
/// BranchAndBound, RandomSearch) build on it through LayerObjective.
class TilingSpace {
public:
  TilingSpace(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *given,
              const IntraLayerOptions &options);

  Plan initialPlan() const;

  /// Every free level at its smallest: tile = the array tile below, no stacks.
  Plan minimalPlan();

  /// The extent level l's array tile must divide along dim i: below a given
  /// level, its tile; below the forced top-level tile, that tile; elsewhere
  /// the layer bound.
  int64_t limit(size_t l, size_t i) const {
    if (int64_t given = givenAbove_[l][i])
      return given;
    return forced_[i] && l < top_ ? forced_[i] : bound_[i];
  }

  /// The top level's forced tiles (the forwarding granularity) replace the
  /// inner array tile there; a multiple of it, since the levels below divide it.
  void applyForced(Plan &p, size_t l) const;

  /// The array tile of the level below along dim i (1 below level 0): level l's tile is a multiple of it.
  static int64_t unitBelow(const Plan &p, size_t l, size_t i);

  /// The tile level l's array tile steps through along dim i: the next level's (the layer bound at the top).
  int64_t enclosingTile(const Plan &p, size_t l, size_t i) const;

  /// The tile level l must have along dim i (0: free): what its written
  /// tensors or stacks pin (pinnedLevel), else the forced top-level tile.
  int64_t forcedTile(size_t l, size_t i) const {
    return pinTile_[l][i] ? pinTile_[l][i] : l == top_ ? forced_[i] : 0;
  }
  bool forcedAt(size_t l, size_t i) const { return forcedTile(l, i) != 0; }

  /// A stack factor level l may not have along dim i (fixedTopStack; at the
  /// intrinsic level, any but the unit's).
  bool stackBarred(size_t l, size_t i, int64_t repl) const;

  /// The stack factor level l starts with along dim i: the intrinsic's unit
  /// at its level (docs/embedding.md, "Intrinsic-aware scheduling"), else 1.
  int64_t initialRepl(size_t l, size_t i) const {
    if (pinRepl_[l][i])
      return pinRepl_[l][i];
    if (l == top_ && forcedStack_[i])
      return forcedStack_[i];
    return static_cast<int>(l) == intrinsicLevel_ && unitRepl_[i] ? unitRepl_[i] : 1;
  }

  /// The position of an independent dim in kIndependentDims.
  static size_t index(Dim d);

  /// A level given whole (a tensor for each of the layer's roles, by the
  /// user): kept verbatim.
  bool fixedLevel(size_t l) const { return givenLevel(l) != nullptr; }

  const LevelDirectives *givenLevel(size_t l) const;

  /// A level given in part (docs/directives.md §10, §11): the user's block
  /// without all its tensors, or the hardware's fixed dataflow. The search
  /// completes it: the dims its tensors give and its stacks are pinned
  /// (forcedTile, initialRepl, stackBarred), its stacks come first and its
  /// updates, if any, are kept (directivesFor). Null if none.
  const LevelDirectives *pinnedLevel(size_t l) const { return pinned_[l].source; }

  /// A level given as written: its tile is what its tensors say, its array tile
  /// what its stacks cover; the levels above build on that.
  void absorbFixed(Plan &p, size_t l);

  /// Level l with (tile, repl) along dim i is blocked: the tile is a multiple
  /// of the inner array tile (or the whole limit), the next level's tile a
  /// multiple of this array tile (or the whole limit), and every level covers
  /// its enclosing tile, a partial last tile allowed (covers()).
  bool blockedOk(const Plan &p, size_t l, size_t i, int64_t tile, int64_t repl) const;

  /// `repl` stacked tiles of `tile` cover `enclosing` as docs/directives.md §4
  /// allows: the tile fits, and the last stacked tile starts inside it (the
  /// array tile over-covers by less than one tile; updates cover the rest).
  static bool covers(int64_t tile, int64_t repl, int64_t enclosing) {
    return tile <= enclosing && tile * (repl - 1) < enclosing;
  }

  /// The blocked sizes of `whole` over `unit` (docs/solver.md, "Blocked
  /// sizes"), ascending: unit * ceil(n/k) for k = 2..n, n = ceil(whole/unit),
  /// and whole itself — each the smallest multiple of `unit` that covers
  /// `whole` in k steps. The divisors of whole (as multiples of unit) are among
  /// them; so is the tile that spreads whole evenly over any number of units.
  /// Without `uneven`, only the exact ones: the multiples of unit dividing whole.
  /// Above kEveryStepLimit units a bounded subset (docs/solver.md): the space
  /// grows with a dim's magnitude only up to there, so a batch of 2^31 costs
  /// what one of 2^16 does.
  static const std::vector<int64_t> &blockedSizes(int64_t unit, int64_t whole, bool uneven = true);
  /// Up to this many units along a dim, every ceil(n/k) is a blocked size.
  static constexpr int64_t kEveryStepLimit = int64_t(1) << 16;
  /// Above it: ceil(n/k) and k for k up to kFewSteps, the powers of two p and
  /// ceil(n/p), and the divisors d, n/d with d up to kDivisorSearch.
  static constexpr int64_t kFewSteps = 64;
  static constexpr int64_t kDivisorSearch = int64_t(1) << 16;

  static int64_t unitsOf(const Plan::LevelPlan &lp);

  /// Occupancy with the dims not yet chosen at their smallest (their current
  /// value), and no tile past IntraLayerOptions::maxTile: every search grows
  /// a tile only through here (fits), so none generates a plan a smaller piece
  /// cannot run.
  bool fitsPartial(const Plan &p, size_t l) const;

  /// The bytes this solve keeps free at level l (IntraLayerOptions::reservedTopBytes
  /// at the node level) in each buffer holding the input or the output.
  int64_t reserve(size_t l) const;
  /// The first buffer of level l the plan's tiles overflow, less the reserve,
  /// or -1 (Hardware::overflowingBuffer, the analysis' rule, §5). Every
  /// capacity check of every search goes through here (and score()
  /// re-checks the analysis').
  int overflowing(const Plan &p, size_t l) const;
  /// Buffer b of level l's capacity as this solve may use it.
  std::optional<int64_t> capacity(size_t l, size_t b) const;

  /// The input window along X or Y of `out` output positions under a filter
  /// extent of `win` (stride, dilation along `in`'s axis): Xi from Xo and R, Yi from Yo and S.
  int64_t windowIn(Dim in, int64_t out, int64_t win) const { return windowSpan(out, win, layer_.window.along(in)); }

  /// Words of a role's tile at level l (for capacity checks before evaluation).
  int64_t tileWords(const Plan &p, size_t l, TensorRole r) const;

  /// Per buffer of level l, the bytes of the plan's tiles (Hardware::bufferBytes).
  BufferBytes occupancy(const Plan &p, size_t l) const;

  /// The level's tiles fit its buffer, and the stacked tile fits the next level's (so a completion exists).
  bool fits(const Plan &p, size_t l) const;
  /// The plan with level l+1's tiles at level l's stacked tile (its least).
  static Plan stackedAbove(const Plan &p, size_t l);

  int64_t unitsAllowed(size_t l) const;

  bool arrayFits(const Plan &p, size_t l) const;

  /// The next blocked size: the smallest of blockedSizes(unit, whole) above `current` (0: none).
  static int64_t nextBlocked(int64_t current, int64_t unit, int64_t whole, bool uneven = true);

  /// The stack factor that makes `tile` stacked reach the array tile `array`
  /// (a blocked size; the whole limit may leave the last stacked tile partial).
  static int64_t replFor(int64_t array, int64_t tile) { return (array + tile - 1) / tile; }

  LevelDirectives directivesFor(const Plan &p, size_t l) const;
  /// The same into `d`, its vectors reused (the descents build millions).
  void directivesInto(const Plan &p, size_t l, LevelDirectives &d) const;

  /// The layer's operands name tensors of net_ before it: not so for a piece
  /// solved as a network of its own (InterLayerSolver::solveAlone), whose
  /// operands name the whole network's tensors (so no floors, Floors.h).
  bool operandsResolved() const;
  /// Level l's tiles are within IntraLayerOptions::maxTile.
  bool withinMaxTile(const Plan &p, size_t l) const;

  /// A plan drawn at random, level by level innermost first (drawLevel), the
  /// given levels as written; none where a level has a dim no tile fits.
  std::optional<Plan> drawPlan(std::mt19937_64 &rng);
  /// Level l's (tile, stack factor) pairs along dim i: blocked, forced and
  /// pinned as the descents' are; each tile's factors ascending.
  std::vector<std::pair<int64_t, int64_t>> tileChoices(const Plan &p, size_t l, size_t i) const;
  /// Draws level l: per dim (in a random order), a tile uniformly among those
  /// that fit, then a stack factor among that tile's that fit, then a loop
  /// order. False where a dim has no tile that fits.
  bool drawLevel(Plan &p, size_t l, std::mt19937_64 &rng) const;

protected:
  const Network &net_;
  int layerIndex_;
  const Layer &layer_;
  const Hardware &hw_;
  const LayerScheduleModel *given_;
  IntraLayerOptions options_;
  const std::vector<TensorRole> roles_;   // layer_.roles(), kept: it returns a new vector
  std::array<int64_t, kND> bound_{};
  std::array<int64_t, kND> cap_{};      // IntraLayerOptions::maxTile (0: none)
  std::array<int64_t, kND> forced_{};   // the forwarding granularity at top_ (0: free)
  std::array<int64_t, kND> forcedStack_{};   // its stack factor at top_ (0: free)
  /// Per level given in part (pinnedLevel): where its tensors and stacks come
  /// from (the user's block, the hardware's for what the user left out).
  struct Pinned {
    const LevelDirectives *source = nullptr;    // the user's block, else the hardware's
    const LevelDirectives *hardware = nullptr;  // the hardware's fixed directives there
    const std::vector<StackDirective> *stacks = nullptr;   // written first, verbatim
  };
  std::vector<Pinned> pinned_;
  std::vector<std::array<int64_t, kND>> pinTile_, pinRepl_;   // per level (0: free)
  /// The pins of a level given in part: tiles from its tensors (the user's
  /// over the hardware's), else from its first stack along a dim; stack
  /// factors from its stacks that extend the array tile contiguously.
  void pinLevel(size_t l);
  /// The user's block of level l (the first written; null: none).
  const LevelDirectives *userLevel(size_t l) const;
  size_t top_ = 0;                      // the level whose units are the nodes
  std::vector<std::array<int64_t, kND>> givenAbove_;   // per level, the nearest given level's tile above (0: none)
  /// The level whose units compute the hardware's intrinsic and, along each
  /// dim, the stack factor it has there: the embedding's unit tensors
  /// (IntrinsicUnits.h); -1 and 0 where there is none (1-element tiles).
  int intrinsicLevel_ = -1;
  std::array<int64_t, kND> unitRepl_{};
  /// Partial last tiles allowed (blockedSizes, blockedOk); off, every level
  /// divides its enclosing tile exactly (KAPLA's descent runs both ways).
  bool uneven_ = true;
};

} // namespace dfl::intra
