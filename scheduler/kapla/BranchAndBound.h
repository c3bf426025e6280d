// The exhaustive yardstick: branch and bound over the whole intra-layer
// space, top-down, seeded with KAPLA's descent (docs/solver.md, "The
// exhaustive yardstick").
//
// The space is the one the bottom-up enumeration had: per free level l and
// dim, a tile t_l and an array tile a_l = t_l * r_l with a_{l-1} | t_l | a_l,
// a_l dividing the enclosing tile (t_{l+1}; the layer bound, or the forced
// forwarding tile, at the top) and limit(l), t_top = forced where forced; every
// loop order; a fixed level as absorbFixed reads it. Bottom-up asked
// a_{l-1} | t_l, t_l | limit, a_l | limit; "a_l divides t_{l+1}" is the
// level above's a_l | t_{l+1}, and t_l | a_l | limit, so both describe the
// same chains of divisors. Both prune only what cannot complete (occupancy
// grows with every tile, the units with every stack factor) and check
// arrayFits and fits on each whole level, so the same complete plans reach
// score(). Loop orders giving the same updates are scored once (same directives).
//
// The bound (objective energy): the energy is the constants C (the MACs and
// their level-0 accesses), one term per boundary l/l+1
// (LevelResult::boundaryEnergyPj), each >= 0 and a function of the
// directives of levels >= l only (checked on stdlib layers by
// tests/unit/BoundTest.cpp), and the static energy, the chip's leakage over
// the latency. With levels >= m decided and the levels below at their minimal
// completion (tile = the array tile below, no stacks: valid whenever any
// completion is), the analysis scores C and the terms b >= m exactly, the
// same for every completion. The latency of every completion is at least
//  - the cycles of each boundary above m (level l >= m+1's traffic over its
//    bandwidth: that traffic is the boundary l-1/l's, of levels >= l-1 >= m,
//    as are its units in use), and
//  - the work over the PEs it can use: the units in use at level m times
//    every unit of each level below (computeCycles = work * padding / PEs,
//    the padding >= 1),
// so the static energy is at least the chip's leakage over the larger of
// those (staticFloor); each term below m, role by role, is at least the
// compulsory traffic (compulsoryBelow) and the layer's on-chip floor
// (Floors.h: each word it must move crosses every boundary on chip once),
// boundary 0/1 also the reloads a level-0 buffer of its capacity forces
// (reloadFloorPj); at the root, where nothing is decided, the layer's floors
// (its DRAM words and the on-chip floor) and the reloads. The subtree's bound is C + the terms >= m + those floors,
// and never below its parent's (which holds for the whole subtree);
// a subtree whose bound is not below the incumbent (seeded with KAPLA's
// solution) is cut. A level's assignment is first bounded without the
// analysis (cheapBound: the parent's exact part and the floor from its units
// alone), which cuts the assignments using too few units to beat the
// incumbent before they cost an analysis; at the node level also by its
// DRAM refetches (refetchPj), at level 0 by the reloads of its tile (leafBound).
#pragma once

#include "scheduler/kapla/KaplaDescent.h"
#include "scheduler/analysis/Floors.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace dfl::intra {

class BranchAndBound : public KaplaDescent {
public:
  using KaplaDescent::KaplaDescent;

  /// The best plan of the space (proved optimal unless capped or stopped:
  /// IntraLayerStats::provedOptimal), seeded with KAPLA's (seedWithKapla).
  std::optional<IntraLayerSolution> exhaustive(SolveFailure &why);

  /// What the search cuts by, for tests (tests/unit/BoundTest.cpp): the
  /// bound of the subtree whose levels >= m are those of the plan `r` scores
  /// (whatever lies below), and the bound the top level's directives `top`
  /// give without an analysis (refetchPj, the floors below the root and the
  /// static floor over `units` nodes), both with `r`'s work and constants.
  double subtreeBound(const LayerResult &r, size_t m);
  double topLevelBound(const LevelDirectives &top, int64_t units, const LayerResult &r);
  /// What topLevelBound claims of the terms of the top boundary and C (the
  /// floors' exact part and refetchPj), with `r`'s work and constants.
  double topLevelExact(const LevelDirectives &top, const LayerResult &r) {
    learn(r);
    return rootDecided().exact + refetchPj(top);
  }
  /// The reloads' floor of boundary 0/1 (reloadFloorPj) under level-0 tiles
  /// within `enclosing`, with `r`'s work.
  double reloadFloor(const LayerResult &r, const DimVector &enclosing) {
    learn(r);
    return reloadFloorPj(enclosing);
  }

protected:
  /// What the decided levels >= `level` fix for every completion below: C
  /// and the boundary terms >= level (exact), the largest cycles of a
  /// boundary above it, the units in use at `level` (and above), and the
  /// subtree's lower bound.
  struct Decided {
    double exact = 0, below = 0, cycles = 0, bound = 0;
    int64_t units = 1;
    size_t level = 0;
    /// Per role, what bounds its part of boundary 0/1 in decidedBy (its
    /// compulsory words, the on-chip floor).
    std::array<double, kNumRoles> compulsory{};
  };

  struct Branch {
    Plan::LevelPlan level;
    Decided decided;
  };

  /// One level's scored candidates not yet expanded, under `parent` (the
  /// decided levels above); `enumerated` once every candidate was scored.
  struct Batch {
    std::vector<Branch> pending;
    size_t scored = 0;
    Decided parent;
    bool enumerated = false;
  };

  /// A level's candidates are expanded best first in batches of this many
  /// scored: bounded memory on levels with millions. With an incumbent the
  /// batch is large, so that a capped search has bounded most of a level
  /// (its open bound is theirs, not the parent's); without one it is small,
  /// so that complete plans are reached early.
  static constexpr size_t kBatch = size_t(1) << 16, kFirstBatch = 4096;

  /// The work of this many steps of the enumeration (IntraLayerStats::
  /// enumerated) counts as one analysis against the per-layer limit, so that
  /// the time a layer takes is bounded by the limit whatever the bounds cut
  /// before an analysis: measured (perf, MLP on eyeriss_multinode at batch
  /// 64, 10-150 M steps a layer) a step costs 0.6-0.8 us, an analysis about 50.
  static constexpr int64_t kStepsPerAnalysis = 64;

  /// The per-layer limit (maxCandidates: the analyses, and the steps at
  /// kStepsPerAnalysis) is reached, or the solve budget says stop.
  bool exhausted();

  /// Decides the highest free level at or below m, best bound first; levels
  /// above m are decided (`parent`), those below hold the minimal completion.
  void branch(Plan &p, size_t m, const Decided &parent);

  /// The chip's leakage over the latency floor: the larger of `cycles` and
  /// the work over `pes` PEs (0 until an analysis gave the work).
  double staticFloor(double cycles, int64_t pes) const;

  /// The product of the hardware's units over levels [lo, hi): the most a
  /// completion may use there.
  int64_t unitsBetween(size_t lo, size_t hi) const;

  /// What levels >= m of a scored plan (the minimal completion below m) fix.
  Decided decidedBy(const LayerResult &r, size_t m) const;

  /// Lower bounds of the boundary terms below m of every completion of
  /// levels >= m as scored in `r`, per boundary b < m (by its inner level)
  /// and role: the words filled into level m that every level below must
  /// take in again (compulsoryBelow's comment says which), and the output
  /// words, across each boundary below m once (crossingsPj, the on-chip
  /// floor's rule).
  std::vector<std::array<double, kNumRoles>> compulsoryBelow(const LayerResult &r, size_t m) const;

  /// A lower bound of every plan completing `parent` (levels >= 1) with
  /// level 0's assignment in `p`, without its analysis: as cheapBound, with
  /// boundary 0/1 at least, per role, its compulsory words or the reloads
  /// this tile forces on the roles its innermost update moves (reloadFloorPj's
  /// argument, with this tile's reuse).
  double leafBound(const Plan &p, const Decided &parent) const;

  /// A lower bound of boundary 0/1's energy (LevelResult::boundaryEnergyPj
  /// of level 0) in every plan whose level-0 tiles lie within `enclosing`
  /// (canonical extents): the reloads a level-0 buffer of its capacity forces
  /// (reloadFloorPj's comment proves it). 0 where the argument does not apply.
  double reloadFloorPj(const DimVector &enclosing) const;

  /// The most MACs a level-0 tile fitting level 0's buffers and lying within
  /// `enclosing` does per word of role r filled while the innermost update
  /// moves `moved` (reuseOf), memoized.
  double maxReuse(TensorRole r, Dim moved, const DimVector &enclosing) const;
  /// The least reloads' energy a MAC (pJ) that any level-0 tile within the
  /// layer forces where the innermost update moves `moved`: over the tiles
  /// fitting level 0's buffers, the least sum over the roles it moves of a
  /// word's least price over its reuse (reuseOf), memoized per dim.
  double leastReloads(Dim moved) const;
  /// The MACs a word of role r filled into a level-0 tile of extents `e`
  /// serves at most while the innermost update moves `moved` (the
  /// reloads' argument): the product of the extents along reuseDims, the
  /// ifm's K times its pairs of outputs and taps per window axis.
  double reuseOf(TensorRole r, Dim moved, const DimVector &e) const;
  /// An ifm word's pairs of outputs and taps along the window axis of
  /// `out` and `taps` in tile extents `e` while the innermost update moves
  /// `moved` (reuseOf's comment says why).
  int64_t pairsOf(Dim out, Dim taps, Dim moved, const DimVector &e) const;
  /// The most p in 1..limit for which the tile `e`, with `set(p)` applied,
  /// fits level 0's buffers (bisected: words grow with p); `e` is left set
  /// to it.
  int64_t mostThatFits(DimVector &e, int64_t limit, const std::function<void(int64_t)> &set) const;
  /// Calls `each` with every level-0 tile fitting level 0's buffers whose
  /// extents along `dims` lie within `limits` (every other at 1) and whose
  /// last extent is the most that fits with the others (its window extents
  /// and a channel-wise K not kept in step: reuseOf does not read them).
  template <class F>
  void eachFullestTile(const std::vector<Dim> &dims, const std::vector<int64_t> &limits, F &&each) const;
  /// Whether level-0 tile extents `e` (its windows and a channel-wise K
  /// completed here) fit level 0's buffers.
  bool fitsLevel0(DimVector &e) const;
  /// The dims (kND bits) whose level-0 tile extents bound the MACs a word of
  /// role r serves while filled (reuseOf):
  /// the weights' and output's, those their tiles do not span; the ifm's,
  /// K and the window axes' outputs and taps.
  unsigned reuseDims(TensorRole r) const;

  /// Where reloadFloorPj's argument holds: a forward layer, level 0 chosen
  /// by the search (no written `shr` there), a level 1 below the outermost.
  bool reloadsApply() const;
  /// The layer has no input windows: no filter, stride 1, no padding.
  bool windowless() const;
  /// The layer's input windows are a conv's or a pooling's (xi = xo * stride
  /// + r * dilation - pad).
  bool windowed() const;

  /// What a word of role r filled into level 0 (r the output: a word of a
  /// level-0 tile of it leaving its residency) costs at boundary 0/1, in
  /// `word`s at their held width, as the analysis prices it: linear in the
  /// share of such words crossing to level 1 (the rest served among level
  /// 0's units), `atNone` at none, `atAll` at all; that share is at least
  /// `minShare`, so a word costs `least` at least. All 0 where r is not
  /// held there.
  struct FillCost {
    double atNone = 0, atAll = 0, least = 0, minShare = 1;
  };
  FillCost reloadCost(TensorRole r) const;

  /// A lower bound of every completion of level m's assignment in `p`
  /// without its analysis: the parent's exact part, and the static floor
  /// over the parent's cycles and the PEs the assignment's units allow.
  double cheapBound(const Plan &p, size_t m, const Decided &parent) const;
  /// cheapBound from the parent's exact and below parts alone (not its bound).
  double partsBound(const Plan &p, size_t m, const Decided &parent) const;

  /// Records C and the work from the first valid analysis.
  void learn(const LayerResult &r);

  /// Without the analysis, the top boundary's DRAM reads the floor leaves out
  /// under the top level's directives (its loop order as written):
  /// each of the weights (ifm) the floor counts is read again on every trip of
  /// an update not moving them outside the innermost one that does (the
  /// analysis' loads: trip counts from the innermost relevant update out; a
  /// sweep of the relevant ones covers every word). 0 where a written top
  /// level splits a tile among its units (`shr`).
  double refetchPj(const LevelDirectives &top) const;
  /// The share of the ifm's data along the window axis of `out` (Xo or Yo)
  /// a sweep of the top level's updates `top` reads at least (>= 1): the
  /// halos neighbouring positions of the update moving `out` both read,
  /// unless the innermost update moving the ifm moves this axis (slides).
  double haloFactor(const LevelDirectives &top, Dim out) const;
  /// The same for level 0's units' fills in the leaf plan `p` (blocks of
  /// level 0's tiles).
  double unitHaloFactor(const Plan &p, Dim out) const;
  /// The ranges [lo, hi) of dim i's tiles at `level` in `p`, each level's
  /// splitting the enclosing one's from its start (p.levels.size(): the
  /// layer's whole extent).
  std::vector<std::pair<int64_t, int64_t>> blocks(const Plan &p, size_t i, size_t level) const;
  /// The data rows (columns) along `out`'s window axis that a visit of
  /// every pair of an output block and a tap block reads, over the axis'
  /// data (>= 1; 1 without windows or with dilation).
  double windowCoverage(Dim out, const std::vector<std::pair<int64_t, int64_t>> &outBlocks,
                        const std::vector<std::pair<int64_t, int64_t>> &tapBlocks) const;

  /// The root: nothing decided; the layer's floors.
  Decided rootDecided();

  /// The search stopped with this subtree open: its bound bounds what it holds.
  void leftOpen(double bound) { openBound_ = std::min(openBound_, bound); }
  /// A subtree of this bound cannot beat the incumbent, or only by less than
  /// the gap tolerated (then its bound is kept: it still bounds the optimum).
  bool cuts(double bound) {
    if (bound >= exBestValue_)
      return true;
    if (options_.gap <= 0 || bound * (1 + options_.gap) < exBestValue_)
      return false;
    gapBound_ = std::min(gapBound_, bound);
    return true;
  }

  /// Every (tile, stack factor) of level m along dims >= dim, the dims after
  /// `dim` at their smallest; prunes only partial levels that cannot fit.
  void enumerateLevel(Plan &p, size_t m, size_t dim, bool leaf, Batch &batch);

  /// Scores level m's assignment under each loop order with distinct updates:
  /// on the lowest free level the plan is complete (offered as a solution);
  /// above, the score is the subtree's bound.
  void scoreOrders(Plan &p, size_t m, bool leaf, Batch &batch);

  /// Recurses into the pending candidates of level m, lowest bound first, until
  /// the bound reaches the incumbent.
  void expand(Plan &p, size_t m, Batch &batch);

  /// A complete valid plan: the new incumbent if better. A negative boundary
  /// term would break the bound's premise: the search then claims nothing.
  void offer(IntraLayerSolution sol);

  std::optional<IntraLayerSolution> exBest_;   // exhaustive: the incumbent
  double exBestValue_ = 0;
  double constants_ = 0, work_ = 0;   // C and the work, from the first valid analysis
  double openBound_ = 0;   // the least bound of a subtree left open (capped)
  double gapBound_ = 0;    // the least bound of a subtree cut by the gap tolerance
  int64_t steps_ = 0;      // of the enumeration (kStepsPerAnalysis)
  mutable std::map<std::vector<int64_t>, double> reuseMemo_;   // maxReuse: role, moved dim, extents
  mutable std::vector<int64_t> aloneFit_;   // per dim, the most a level-0 tile fits, every other extent at 1
  mutable std::array<double, kND> leastReloads_{};   // per dim moved
  mutable unsigned leastReloadsDone_ = 0;            // kND bits: which are
  /// Per role, what a reload costs (reloadCost; 0: not counted: no
  /// weights, an ifm with windows of another kind, not held) and the kND
  /// indices of the dims whose updates move it.
  struct Reloads {
    bool ready = false;
    std::array<double, kNumRoles> pjPerWord{};   // cost[r].least
    std::array<FillCost, kNumRoles> cost{};
    std::array<unsigned, kNumRoles> moves{};
  };
  mutable Reloads reloads_;
  const Reloads &reloads() const;
  std::optional<DramFloor> dramFloor_;   // the layer's DRAM words in any schedule
  OnChipFloor onChip_;                   // and its words on chip (rootDecided)
  bool pruneByBound_ = false;   // exhaustive, objective energy
  bool boundSafe_ = true;       // no boundary term seen negative
};

} // namespace dfl::intra
