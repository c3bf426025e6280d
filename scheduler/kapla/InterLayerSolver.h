// KAPLA's inter-layer solver (paper §IV-B): segment slicing and layer
// pipelining over the topological order.
//
// Before: a complete, valid schedule with every layer solved alone on all
// nodes and no segments (the layer-wise solution) and its analysis. After: the
// best schedule found among (a) that one, (b) the best chain of temporal
// segments and (c) the top-k segment chains of a DP over estimated segment
// costs, where a segment is a single layer, a temporal segment (exact cost,
// the analysis' own: over the whole batch, or in batch chunks with its layers
// re-solved to walk the batch outermost; layers that leave its intermediates
// too little node buffer are re-solved with a reserve for them), the same
// split into instances where its intermediates crowd the node buffers
// (GraphTurbo's instances, scheduler/analysis/Instances.h: exact, each layer solved on
// its largest piece) or a spatially pipelined segment (node regions in
// proportion to work; its schemes — matched forwarding granularities at the top level, batch tile x
// channel split — after a conservative validity check and Pareto pruning of
// their estimated per-tensor access counts; ranked by a safe lower bound).
// The short list is then solved for real — the intra-layer solver on each
// spatial segment's layers, constrained to its region and granularity, over
// its schemes — and scored by the same analysis `dflc check` runs; the best
// valid chain by the objective wins. Runs inside the Solver.
#pragma once

#include "scheduler/analysis/Analysis.h"
#include "scheduler/analysis/Instances.h"
#include "scheduler/kapla/IntraLayerSolver.h"
#include "scheduler/kapla/SegmentChains.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

/// Why a segment of a chain runs the way it does: the energy of each way the
/// solver knew to run its layers (KAPLA §IV-B's alternatives), and for those
/// it did not price, why not.
struct SegmentCosts {
  int first = 0, last = 0;               // network order
  SegmentKind chosen = SegmentKind::Single;   // Single: the layers one by one
  double layerByLayerPj = 0;             // each layer its own segment
  std::optional<double> temporalPj;      // exact (the analysis'); none: see temporalWhy
  std::optional<double> spatialPj;       // solved for real; none: see spatialBoundPj, spatialWhy
  std::optional<double> spatialBoundPj;  // the lower bound, where the option survived pruning
  std::string temporalWhy, spatialWhy;   // why there is no price
  std::optional<double> instancesPj;     // temporal, split into instances (exact); none: see instancesWhy
  InstanceSplit split;                   // the split priced
  std::string instancesWhy;
};

/// A whole schedule a solve evaluated, with its totals: what the energy-latency
/// front and the constraints (SolverOptions) choose among.
struct Alternative {
  Schedule schedule;
  double energyPj = 0, latencyCycles = 0;
  Objective foundBy = Objective::Energy;   // the objective of the solve that evaluated it
  std::vector<SegmentCosts> segmentCosts;  // its segments of two or more layers
};

struct InterLayerOptions {
  Objective objective = Objective::Energy;
  IntraLayerOptions intra;   // for the layers of spatial segments and re-solves with a reserve
  size_t topK = 4;           // segment chains kept by the DP
  bool prune = true;         // conservative and lower-bound pruning (off: tests compare)
  size_t maxSpatial = 4;     // layers per spatial segment
  size_t maxTemporal = 8;    // layers per temporal segment
  std::vector<bool> fixedLayers;   // per layer: the user wrote directives for it (never re-solved)
  /// Per layer, the user's block (null: none). Where given, a fixed layer of
  /// a temporal segment is re-solved around it for a reserve or batch chunks
  /// (its written levels kept, solveLayer); where not, fixed layers keep
  /// their layer-wise schedule. Set for the segments the user writes.
  std::vector<const LayerScheduleModel *> written;
  /// Where every valid chain scored is appended (null: nowhere).
  std::vector<Alternative> *alternatives = nullptr;
  /// Threads solving independent segments at once (docs/solver.md, "Speed"):
  /// each solve is memoized once by its key and the results reduced in
  /// order, so the schedule and every count are the same for any number.
  size_t threads = 1;
};

struct InterLayerStats {
  int64_t candidates = 0;      // spatial segment candidates (segment x granularity)
  int64_t prunedInvalid = 0;   // by the conservative validity check
  int64_t prunedBuffer = 0;    // schemes solved whose consumers lack room for their dependences (E0824)
  int64_t prunedPareto = 0;    // by Pareto pruning: access counts and buffer dominated by another scheme's
  int64_t prunedBound = 0;     // by the lower bound (no better than the exact alternative)
  int64_t skippedByEstimate = 0;   // schemes not solved: estimate above the segment energy found
  int64_t chains = 0;          // chains solved for real
  int64_t segmentsSolved = 0;  // spatial segment schemes solved by the intra-layer solver
  int64_t temporalReserved = 0;   // temporal segments kept only by re-solving layers with a reserve
  int64_t reserveSolves = 0;   // layer solves with a node-buffer reserve (memoized per shape and reserve)
  int64_t chunkSolves = 0;     // layer solves walking the batch in a temporal segment's chunks, no reserve
  int64_t pieceSolves = 0;     // layer solves on a piece of a segment split into instances
  int64_t splitsTried = 0;     // instance splits of temporal segments costed
  IntraLayerStats intra;       // the intra-layer solves of spatial segments and with reserves
  double estimateSeconds = 0, shortListSeconds = 0;
};

/// A spatially pipelined segment with one inter-layer scheme: layers
/// first..last (network order), the nodes each may use, and the forwarding
/// granularity at the top level: every layer's node tile has `N = batchTile`,
/// and the channel dim of each tensor forwarded to a single-operand consumer
/// (producer `K` = consumer `C`) is cut into `channelSplit` equal tiles.
struct SpatialSegment {
  int first = 0, last = 0;
  std::vector<int64_t> nodes;   // per layer of the segment
  int64_t batchTile = 1;
  int64_t channelSplit = 1;     // 1: whole channels
  int64_t queryTile = 0;        // per node step on each layer: a fused attention's queries (Xo), a pointwise segment's rows or tokens; 0: none
};

/// Whether layer x is part of a fused attention (FLAT: scores, softmax and
/// the matmul of the probabilities) inside layers first..last.
bool inFusedAttention(const Network &net, int first, int last, int x);

/// The node level's constraints on layer x of spatial segment s, with
/// `o.maxNodes` nodes (docs/directives.md §9, E0814): the forced tiles (the
/// batch tile, the channel split, a fused attention's head rows and query
/// tile) unstacked, and a fused attention's per-node tiles, stacks and
/// outermost dims. One rule for the solver's schemes and for the layers of a
/// pipelined segment the user partly wrote.
void segmentNodeConstraints(const Network &net, const Hardware &hw, const SpatialSegment &s, int x, IntraLayerOptions &o);

/// The optimistic top-level picture of one scheme (KAPLA §IV-B, "fast cost
/// estimation"): per tensor of each layer its DRAM and node-buffer (GBUF)
/// access counts in words, the buffer one node needs at least, and an energy
/// estimate from them. Not a bound (see docs/solver.md): only for Pareto
/// pruning and for ranking; pruning by the bound uses lowerBoundPj.
struct SchemeEstimate {
  std::vector<double> accesses;   // per layer: wgt, ifm, ofm at DRAM, then at GBUF
  double bufferBytes = 0;         // the largest per-node minimum over the layers
  double steps = 0;               // a fused attention's query steps (queries / query tile); 0 otherwise
  double energyPj = 0;
  /// Pareto pruning's vector: the access counts, the buffer, the steps.
  std::vector<double> paretoVector() const;
};

/// Indices of the points no other point dominates (<= everywhere, < somewhere),
/// in input order. Equal points dominate neither, so both are kept.
/// Everything of a layer the intra-layer solver looks at, not its name or
/// place: equal keys, equal schedules (the layer solves' memo; the exact
/// search's benchmark solves each shape once).
std::string shapeKey(const Layer &l);

std::vector<size_t> paretoFront(const std::vector<std::vector<double>> &points);

class InterLayerSolver {
public:
  InterLayerSolver(const Model &model, const Schedule &layerwise, const ScheduleResult &layerwiseResult,
                   const InterLayerOptions &options);

  /// The chosen schedule (never worse by the objective than `layerwise`).
  std::pair<Schedule, ScheduleResult> solve(InterLayerStats &stats);

  /// Node regions in proportion to the layers' work (each at least one node);
  /// empty if the segment has more layers than there are nodes.
  std::vector<int64_t> allocateNodes(int first, int last) const;
  /// The same over `units` nodes for `layers` (network indices): a user's
  /// segment whose other layers' regions are written.
  std::vector<int64_t> allocateNodes(const std::vector<int> &layers, int64_t units) const;
  /// The forwarding granularities (batch tiles) tried for a segment.
  std::vector<int64_t> batchTiles() const;
  /// The channel splits tried for a segment: 1 (whole), 2 and 4 where they
  /// divide every forwarded channel dim of it.
  std::vector<int64_t> channelSplits(int first, int last) const;
  /// Every scheme of the segment: batch tiles x channel splits.
  std::vector<SpatialSegment> schemes(int first, int last, const std::vector<int64_t> &nodes) const;
  /// Conservative check: false only if no schedule of the segment's layers
  /// with these regions and this granularity is valid.
  bool mayFit(const SpatialSegment &s) const;
  /// Optimistic energy of the segment: never above what analysis charges it.
  double lowerBoundPj(int first, int last) const;
  /// The scheme's estimate (granularity-dependent; >= lowerBoundPj, not a bound).
  SchemeEstimate estimate(const SpatialSegment &s) const;
  /// The segment solved for real (its layers' schedules, in the layer-wise
  /// schedule's context): nullopt if the intra-layer solver finds no valid one.
  std::optional<std::pair<Schedule, ScheduleResult>> solveSpatial(const SpatialSegment &s, InterLayerStats &stats);
  /// solveSpatial over the given schemes: the best by the objective.
  std::optional<std::pair<Schedule, ScheduleResult>> solveSpatialBest(const std::vector<SpatialSegment> &schemes,
                                                                      InterLayerStats &stats);
  /// Of the last solveSpatialBest, the last scheme refused for E0824 alone (its layers
  /// complete and valid, a consumer short of buffer): what a segment the
  /// user wrote gets when no scheme is valid, so the check names that rule.
  const std::optional<Schedule> &shortOfBuffer() const { return shortOfBuffer_; }
  /// Of the last solveSpatialBest, why its most promising scheme failed
  /// where one of its layers has no schedule under the scheme's forced tiles
  /// and nodes (the layer's failure; none if every scheme's layers solved):
  /// what a segment the user wrote reports when no scheme is valid.
  const std::optional<SolveFailure> &schemeFailure() const { return schemeFailure_; }
  /// The node-buffer reserve a temporal segment's intermediates of `bytes`
  /// need per node, rounded up to the levels re-solves are made at (sixteenths
  /// of a node's buffer) and above `above`; 0 if none is enough.
  int64_t reserveLevel(int64_t bytes, int64_t above = 0) const;
  /// Layer x solved alone on all nodes leaving `reserve` bytes of each node's
  /// buffer free (IntraLayerOptions::reservedTopBytes) and, if `batchTile`,
  /// walking the batch outermost at the top level in chunks of `batchTile`
  /// (a temporal segment's batch chunks, docs/directives.md §9): nullopt if
  /// impossible. Memoized by shape: the schedule's `layer` is the first such layer's.
  /// `pieces`: layer x split into instances, solved on its largest piece with
  /// no tile past a smaller one's extent (IntraLayerOptions::maxTile).
  const std::optional<IntraLayerSolution> &solveAlone(int x, int64_t reserve, int64_t batchTile,
                                                      InterLayerStats &stats, const LayerPieces *pieces = nullptr,
                                                      const OnChipPricing &onChip = {});
  /// The batch tiles temporal segments are tried with: the whole batch (the
  /// layers' own schedules) first, then the smaller batchTiles().
  std::vector<int64_t> temporalTiles() const;

  /// Temporal segment first..last (docs/directives.md §9), exact: the least
  /// energy of its variants (temporalVariant) over temporalTiles(); the
  /// chosen variant's re-solved layers are kept for useReserved.
  std::optional<double> temporalCost(int first, int last, InterLayerStats &stats, bool *reserved = nullptr);
  /// Temporal segment first..last split into instances (docs/directives.md
  /// §9, "Instances"), exact: for each batch tile, the split SplitInfo picks
  /// (splitFor) and the next larger count, each a temporalVariant; the
  /// cheapest, with its split and layers kept for useSplit. None, and `why`,
  /// when no split is possible or valid.
  std::optional<double> instancesCost(int first, int last, InstanceSplit &split, std::string &why,
                                      InterLayerStats &stats);
  /// Per split dim (Yo, Xo) of segment first..last, why it cannot be split
  /// along it, or the instance counts that divide its output and that
  /// instanceSplitRefusal accepts, each with the words per sample of the
  /// intermediates its largest instance keeps: what splitFor needs,
  /// whatever the batch tile.
  struct SplitCounts {
    Dim dim = Dim::Yo;
    std::string refusal;
    std::vector<InstanceSplit> counts;
    std::vector<int64_t> kept;
  };
  std::vector<SplitCounts> splitCounts(int first, int last) const;
  /// GraphTurbo's SplitInfo and Eq. (1) in this cost model: per dim, the
  /// fewest instances that bring the largest instance's intermediates
  /// (`samples` of them) within half the node buffers; the dim with fewer,
  /// Yo on a tie. The counts from there up, or none if no split is possible
  /// (`why`).
  std::vector<InstanceSplit> splitFor(const std::vector<SplitCounts> &splits, int64_t samples,
                                      std::string &why) const;
  /// The segment with the whole batch at once (`batchTile` = the batch: the
  /// layers as solved alone) or in batch chunks of `batchTile` (each layer
  /// solved to walk the batch outermost in them); with `split`, run in its
  /// instances, each layer solved on its largest piece. When the intermediates do
  /// not fit beside the layers' tiles (E0819), the layers that leave too little
  /// room are re-solved with a reserve for them (KAPLA §IV-C: the intra-layer
  /// solver checks the constraints of the inter-layer scheme). Its energy is
  /// the analysis' (analyzeSegments), so the chain it goes into costs the
  /// same; `replaced` gets the layers whose schedules differ from the
  /// layer-wise ones, `reserved` whether a reserve was needed.
  /// `priced`: the whole batch with each layer solved as the segment prices
  /// it (segmentPricing) rather than its layer-wise schedule. `why`: where
  /// none is valid, the reason (a layer without a schedule, the room short).
  std::optional<double> temporalVariant(int first, int last, int64_t batchTile, InstanceSplit split,
                                        std::vector<LayerScheduleModel> &replaced, bool &reserved,
                                        InterLayerStats &stats, bool priced = false, std::string *why = nullptr);
  /// How temporal segment first..last prices layer l (OnChipPricing): its
  /// reads of the segment's intermediates, and its output if it stays.
  OnChipPricing segmentPricing(int first, int last, int l) const;
  /// A temporal segment's layers as it runs: re-solved ones replace the layer-wise.
  void useReserved(Schedule &s, int first, int last) const;
  /// The same for the segment split into instances; its split goes to `seg`.
  void useSplit(Schedule &s, Segment &seg, int first, int last) const;
  /// The chosen schedule's segments of two or more layers, priced every way
  /// (after solve; empty when the layer-wise schedule won).
  const std::vector<SegmentCosts> &chosenCosts() const { return bestCosts_; }

private:
  /// Per segment of 2.. layers: the exact alternative (temporal or one by
  /// one) and, where allowed, the spatial option's lower bound and schemes.
  struct SegmentOptions {
    std::optional<double> temporal;   // the temporal segment's exact cost, if it may be one
    std::optional<double> instances;  // the same split into instances (split)
    InstanceSplit split;
    double exact = 0;                 // min(temporal, instances, the layers one by one)
    /// The cheaper temporal way: split into instances or not (none: neither).
    std::optional<double> bestTemporal() const;
    bool splitWins() const { return instances && (!temporal || *instances < *temporal); }
    std::optional<double> spatialBound;
    bool wholeChannels = false;       // a surviving scheme forwards whole channels
    std::vector<SpatialSegment> schemes;
    std::string temporalWhy, spatialWhy, instancesWhy;   // why an option has no price
  };

  const Network &network() const;
  const Hardware &hardware() const;
  /// The MACs and their level-0 accesses: what every schedule pays (pJ).
  double computePj(int first, int last) const;
  /// The solve budget (InterLayerOptions::intra.budget) is spent: stop between steps.
  bool budgetSpent() const;

  // ---- segment costs
  /// Layer l's layer-wise schedule.
  const LayerScheduleModel &layerwise(int l) const;
  /// The layers' layer-wise energies.
  double singlesPj(int first, int last) const;
  SegmentOptions segmentOptions(int first, int last, bool spatialAllowed, InterLayerStats &stats);
  /// The costs of segment first..last (computed by solve).
  const SegmentOptions &options(int first, int last) const;
  std::optional<double> exactTemporal(int first, int last) const;

  // ---- the short list
  /// The spatial segment's layers' schedules with its best scheme (memoized; its real energy in realPj_), or none.
  const std::optional<std::vector<LayerScheduleModel>> &solvedSegment(int first, int last, InterLayerStats &stats);
  /// solveSpatialBest, with the last scheme short of buffer alone to
  /// `shortOut` (null: not kept, see solveScheme) and, if `failure`, the
  /// first scheme's layer failure (schemeFailure()).
  std::optional<std::pair<Schedule, ScheduleResult>> bestScheme(const std::vector<SpatialSegment> &schemes,
                                                                InterLayerStats &stats,
                                                                std::optional<Schedule> *shortOut,
                                                                std::optional<SolveFailure> *failure = nullptr);
  /// solveSpatial, a scheme short of buffer alone to `shortOut`, the failure
  /// of a layer without a schedule to `failure`. Without `shortOut` a scheme
  /// short of buffer for sure is refused as soon as its layers so far show
  /// it (ShortConsumerTest), the layers after them not solved.
  std::optional<std::pair<Schedule, ScheduleResult>> solveScheme(const SpatialSegment &s, InterLayerStats &stats,
                                                                 std::optional<Schedule> *shortOut,
                                                                 std::optional<SolveFailure> *failure = nullptr);
  /// Every segment's costs (segments_), the segments on threads; false if the
  /// budget was spent first.
  bool costSegments(bool spatialAllowed, InterLayerStats &stats);
  /// The spatial segments of `list`'s chains not yet solved, solved on
  /// threads (presolved_) for buildChain, which would solve them one by one.
  void solveSegmentsOf(const std::vector<Chain> &list, InterLayerStats &stats);
  /// Segment i..j's best scheme solved (none: no valid one): its layers' schedules and real energy kept.
  void keepSolved(int i, int j, const std::optional<std::pair<Schedule, ScheduleResult>> &s);
  /// A chain's schedule, the costs of its segments and its analysis.
  struct ChainTried {
    Schedule schedule;
    std::vector<SegmentCosts> costs;
    ScheduleResult result;
  };
  /// The chain's schedule and its segments' costs (its spatial segments solved).
  ChainTried buildChain(const Chain &chain, InterLayerStats &stats);
  /// Builds each chain's schedule (each chain once), analyzes them and keeps
  /// in order each valid one better than the best so far.
  void tryChains(const std::vector<Chain> &chains, InterLayerStats &stats);
  /// Segment `link` priced every way, as run as `chosen`.
  SegmentCosts costsOf(const Link &link, SegmentKind chosen) const;

  const Model &model_;
  const Schedule &base_;
  const ScheduleResult &baseResult_;
  InterLayerOptions options_;
  /// A memoized solve: made once by the first thread asking for it, the
  /// others waiting for it (so each key's solve is counted once).
  template <class T>
  struct Once {
    std::once_flag made;
    T value;
  };
  /// The memo slot of `key` (made empty if new), under mutex_.
  template <class T>
  Once<T> &slotOf(std::map<std::string, Once<T>> &memo, const std::string &key);
  std::mutex mutex_;   // over the maps below when threads solve segments
  /// Spatial-segment layer solves by shape and constraints (see solveSpatial).
  /// A layer's solve under a scheme: its schedule, or why there is none.
  struct SchemeLayer {
    std::optional<LayerScheduleModel> schedule;
    SolveFailure why;
  };
  std::map<std::string, Once<SchemeLayer>> memo_;
  std::optional<Schedule> shortOfBuffer_;         // see shortOfBuffer()
  std::optional<SolveFailure> schemeFailure_;     // see schemeFailure()
  /// Layer solves alone with a reserve or batch chunks, by shape, reserve and tile (see solveAlone).
  std::map<std::string, Once<std::optional<IntraLayerSolution>>> reserveMemo_;
  // One solve's state.
  std::map<std::pair<int, int>, std::vector<LayerScheduleModel>> temporalLayers_;   // temporal segments' re-solved layers
  /// Segments split into instances: the split priced and its layers (all).
  std::map<std::pair<int, int>, std::pair<InstanceSplit, std::vector<LayerScheduleModel>>> splitLayers_;
  std::map<std::pair<int, int>, SegmentOptions> segments_;
  std::map<std::pair<int, int>, std::optional<std::vector<LayerScheduleModel>>> solved_;   // spatial segments
  std::map<std::pair<int, int>, double> realPj_;   // solved spatial segments: their layers' energy
  /// Spatial segments solved on threads ahead of the chains that use them (solvedSegment).
  std::map<std::pair<int, int>, std::optional<std::pair<Schedule, ScheduleResult>>> presolved_;
  std::vector<Chain> seen_;                        // chains tried
  Schedule bestSchedule_;
  ScheduleResult bestResult_;
  std::vector<SegmentCosts> bestCosts_;
};

} // namespace dfl
