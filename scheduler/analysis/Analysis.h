// Directive analysis, validation and the cost model (docs/directives.md).
//
// analyzeSchedule: before — a checked Model (frontend/Sema) and one of its
// schedules; after — per layer, per level, every number docs/directives.md
// defines (tiles, units, trip counts, occupancy, accesses), energy and latency,
// per segment the pipelining results, and every validity problem as an Issue
// (a value: the solver asks thousands of candidates; `dflc check` turns Issues
// into diagnostics). Parts of a partial schedule that are not given are
// marked unknown and listed as missing.
#pragma once

#include "support/Diagnostics.h"
#include "model/Model.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

/// A validity problem, as data: the diagnostic it becomes and its arguments.
struct Issue {
  struct Note {
    SourceRange range;
    diag::ID id;
    std::vector<std::string> args;
  };
  diag::ID id;
  SourceRange range;
  std::vector<std::string> args;
  std::vector<Note> notes;
};

/// One role's tile at one level of one layer.
struct TileResult {
  bool present = false;
  int64_t words = 0;           // |T_l(X)|
  int64_t shr = 1;
  int64_t distinctWords = 0;   // union of the P_l stacked tiles
  double rep = 1;              // copies of each word across the stacked units
  double loads = 0;            // tile loads per unit over the whole layer
  double wordsPerUnit = 0;     // words_l(X), sliding reuse included
};

/// Accesses of one level's buffers, summed over all its units, per role.
struct LevelAccesses {
  std::array<double, kNumRoles> reads{}, writes{}, sameLevel{};
  /// Of the reads and writes, those on this level's side of its outer
  /// boundary: words written in from the level outside (fills, partial sums
  /// brought back) and read out to it (write-backs). They cost the level's
  /// fill energy and travel on the outer level's bus (docs/directives.md §7).
  std::array<double, kNumRoles> fills{}, writeBacks{};
  double total() const;
  double boundaryWords() const;   // fills + writeBacks, all roles
};

struct LevelResult {
  int level = 0;
  bool known = false;           // directives given (the outermost level is always known)
  /// A block written (known or not, §11): `units` is then its written stacks'
  /// product, what any completion uses at least.
  bool written = false;
  DimVector extent{};           // E_l(d), including the derived Xi, Yi
  int64_t units = 1;            // P_l
  int64_t unitsInUse = 1;       // n_l = prod of P_m for m >= l
  std::vector<int64_t> trips;   // per update of this level, innermost first
  std::array<TileResult, kNumRoles> tiles{};
  int64_t occupancyBytes = 0;
  /// Per buffer of the level (Level::buffers): the bytes of the roles it
  /// holds; occupancyBytes is their sum (§5).
  BufferBytes bufferBytes{};
  LevelAccesses accesses;
  double energyPj = 0;          // this level's buffer accesses
  double neighborEnergyPj = 0;  // of energyPj, the transfers between this level's units
  double busEnergyPj = 0;       // this level's array bus to the units inside it
  /// Words this level's units read from other units' buffers (a segment's
  /// forwarded tensor, §9), and their energy (in energyPj).
  double remoteReads = 0, remoteEnergyPj = 0;
  /// Energy of this level's outer boundary (l/l+1): the accesses it adds at
  /// level l and l+1, plus the NoC on the top boundary. It depends only on the
  /// directives of levels >= l; with the MACs and their level-0 accesses these
  /// terms add up to the layer's energy (the exhaustive search's bound).
  double boundaryEnergyPj = 0;
  double trafficWords = 0;      // words exchanged with the inner level (fills, write-backs, psums)
  double trafficBytes = 0;      // those words at their widths (WordScale)
  /// Of trafficBytes, each buffer's (Level::buffers; at a level of one
  /// buffer, all of it is its): buffers side by side have their own ports (§8).
  std::array<double, kNumRoles> bufferTrafficBytes{};
  double cycles = 0;            // time to move them at this level's bandwidth
};

struct LayerResult {
  int layer = -1;
  bool complete = false;        // every level known
  bool valid = true;            // no Issue in this layer
  std::vector<std::string> missing;
  std::vector<LevelResult> levels;
  double work = 0;              // MACs (or ops for layers without MACs), whole batch
  double hops = 0;
  /// NoC hops per DRAM word read (written) of each role, in `hops`: what a
  /// tensor forwarded on chip instead does not travel (§9).
  std::array<double, kNumRoles> dramReadHops{}, dramWriteHops{};
  double energyMacPj = 0, energyNocPj = 0, energyBusPj = 0, energyStaticPj = 0, energyPj = 0;
  double computeCycles = 0, latencyCycles = 0;
  int bindingLevel = -1;        // -1: compute-bound; else the level whose traffic binds
  double utilization = 0;       // PEs in use / all PEs
  /// The access counts equal those of executing the schedule word by word
  /// (docs/directives.md §4, "Partial tiles": when they are exact).
  bool exactCounts = false;
  /// A softmax's or norm's rows split in the outermost on-chip level's tiles
  /// (docs/directives.md §7, "Rows and the passes"): its statistics passes
  /// stream the input from DRAM again, each one.
  bool rowsSplit = false;
  /// The passes over the input before the normalizing one (the layer's own):
  /// 1 with whole rows; split, softmax's 2 (the maximum, then Σ exp), a
  /// norm's 1 (Σv and Σv² together). 0 for other layers.
  int statisticsPasses = 0;
  /// The vector unit the layer ran on (Hardware::vectors), or -1: the MAC
  /// array. On one, the levels inside the unit's level are empty: no word
  /// reaches them (docs/directives.md §7, "Vector units").
  int unit = -1;
};

struct SegmentResult {
  std::vector<int> layers;
  bool pipelined = false;
  bool userGiven = false;
  int chunks = 1;               // forwarding granularity (pipelined); batch chunks (temporal, §9)
  Dim splitDim = Dim::Yo;       // temporal: run in `instances` pieces along it (§9, "Instances")
  int64_t instances = 1;
  double latencyCycles = 0;
  /// The cycles the chip's DRAM channel needs for every word its layers move
  /// (§8): pipelined layers run at once but share the one channel, so the
  /// segment takes at least this long.
  double dramCycles = 0;
  double energyPj = 0;
};

struct ScheduleResult {
  std::vector<LayerResult> layers;     // one per network layer
  std::vector<SegmentResult> segments; // in execution order
  std::vector<Issue> issues;
  std::vector<Issue> warnings;         // reported, but the schedule stays valid (W0831)
  bool complete = false, valid = false;
  double energyPj = 0, latencyCycles = 0;
  double energyMacPj = 0, energyNocPj = 0, energyBusPj = 0, energyStaticPj = 0;
  std::vector<double> energyLevelPj;   // per hardware level
};

/// What a caller needs of the analysis. The solver asks only whether a
/// spatial scheme is valid: with `refuseEarly` a pipelined segment whose
/// consumer cannot hold even the least its forwarded tensors need is
/// refused (E0824) without deriving its step tables
/// (SegmentSteps::shortConsumer); that issue then gives the least as its
/// words, and the segment's latency is the sampled critical path
/// (pipelinedTiming). Whether a schedule is valid does not change.
struct AnalysisOptions {
  bool refuseEarly = false;
};

ScheduleResult analyzeSchedule(const Model &model, const Schedule &schedule, const AnalysisOptions &options = {});

/// The schedule-level half alone, on layer results already at hand: `layers`
/// holds, per network layer, what the per-layer analysis gives for the
/// schedule's directives of it; a layer in no multi-layer segment may be left
/// default (it adds nothing). The inter-layer solver costs a segment this way
/// with the same rules as analyzeSchedule, without analyzing its layers again.
ScheduleResult analyzeSegments(const Model &model, const Schedule &schedule, std::vector<LayerResult> layers);

/// What a temporal segment keeps in the nodes' buffers (docs/directives.md §9,
/// E0819), in bytes over all of them.
struct TemporalRoom {
  int64_t chunks = 1;          // batch chunks the segment runs in (1: the whole batch at once)
  int64_t intermediates = 0;   // outputs consumed inside the segment: one chunk of each
  int64_t held = 0;            // tiles the layers keep across the chunks (read once, chunks > 1)
  int64_t largest = 0;         // the largest layer's other tiles
  int64_t all = 0;             // the buffer's capacity over the level's units (0: unbounded)
  bool bounded = false;
  int buffer = 0;              // the level's buffer these are of (Level::buffers): the tightest
  int64_t need() const { return intermediates + held + largest; }
  bool fits() const { return !bounded || need() <= all; }
};

/// The room temporal segment `layers` (network order) needs, each layer with
/// its directives and result: its batch chunks are the top-level batch steps
/// if every layer walks the batch outermost there in the same steps. Split
/// into instances (`split`: its dim and count), the room of the instance
/// whose intermediates are largest. Per buffer of the node level (§5): the
/// intermediates count in the buffer holding ifm, where their consumers read
/// them, each tile in the buffer holding its role; the room returned is the
/// first buffer's that overflows, else the one with the least to spare.
struct InstanceSplit {
  Dim dim = Dim::Yo;
  int64_t instances = 1;
};
TemporalRoom temporalRoom(const Network &net, const Hardware &hw, const std::vector<int> &layers,
                          const std::vector<const LayerScheduleModel *> &schedules,
                          const std::vector<const LayerResult *> &results, InstanceSplit split = {});

/// §9: words a segment keeps on chip instead of moving them across DRAM.
/// `reads[r]` of the layer's role-r DRAM reads come out of the node buffers
/// (remote reads there) and, where `outputWords` > 0, its output's final
/// write-back stays: its DRAM writes of the output, at most `outputWords`
/// (runOutputWords, segmentOutputWords; the partial sums written and read back stay). Their
/// DRAM energy, hops and traffic drop. The segment analysis forwards
/// its intermediates so, and the solver prices a segment's layers so; the
/// latency is the caller's to settle (settleLatency). Returns the words read
/// on chip, and in `word`s (WordScale).
struct OnChipWords {
  double words = 0, wide = 0;
};
OnChipWords keepOnChip(const Hardware &hw, const Layer &layer, LayerResult &lr,
                       const std::array<double, kNumRoles> &reads, double outputWords);
/// The words layer p writes as its output over the run: its tensor over the batch.
double runOutputWords(const Network &net, int p);
/// The same in a segment of `layers`: runOutputWords, or the sum of its
/// pieces' (halos twice) when the segment is split into `instances` along `splitDim`.
double segmentOutputWords(const Network &net, const std::vector<int> &layers, Dim splitDim, int64_t instances, int p);
/// The part of a layer's role-r fill that reads `tensor`: its accesses to it
/// over all of role r's (model/LoopNest.h), by the accessed tensors' words;
/// 1/n of an n-operand add, C_i/ΣC of a concatenation.
double operandShare(const Layer &l, const std::string &tensor, TensorRole r);

/// §9 with buffers (docs/directives.md §6 "Bypass"): a segment keeps each
/// intermediate tensor in the node level, in the buffers holding the role its
/// producer writes it as and each role a consumer in the segment reads it as.
/// The first such role the node level does not hold (it bypasses the level),
/// or nullopt: every intermediate can stay on chip.
struct UnkeptIntermediate {
  int producer = -1, layer = -1;   // the tensor's producer; the layer whose role the level lacks
  TensorRole role = TensorRole::Ofm;
};
std::optional<UnkeptIntermediate> unkeptIntermediate(const Network &net, const Hardware &hw,
                                                     const std::vector<int> &layers);
/// §9 "Vector units": a layer on a vector unit runs in a segment of its own
/// (its words stay in the unit's level, which a segment's node-level
/// accounting does not model). The first of `layers`, a segment of several,
/// that `schedule` places on a vector unit, or -1. The check refuses such a
/// segment (E0832); the inter-layer solver forms none.
int vectorLayerIn(const Schedule &schedule, const std::vector<int> &layers);
/// Its explanation: "level GBUF holds no ofm, the role 'conv1' writes 'conv1' as".
std::string unkeptText(const Network &net, const Hardware &hw, const UnkeptIntermediate &u);

/// The energy of level l's buffer accesses (docs/directives.md §7): reads and
/// writes at their energies, fills and write-backs at the fill energy,
/// same-level transfers at the neighbour energy (default: a read at one unit
/// and a write at its neighbour); each role's words at their widths `s`.
double levelAccessEnergyPj(const Hardware &hw, size_t level, const LevelAccesses &a, const WordScale &s);
/// Of that, the same-level transfers' (neighbor_energy per word).
double levelNeighborEnergyPj(const Hardware &hw, size_t level, const LevelAccesses &a, const WordScale &s);

/// The network and the hardware a schedule names. Callers pass only schedules
/// that name known ones (the front end reports the others): a DFLC_CHECK.
const Network &networkOf(const Model &model, const Schedule &schedule);
const Hardware &hardwareOf(const Model &model, const Schedule &schedule);

/// Turns Issues into diagnostics.
void reportIssues(const std::vector<Issue> &issues, DiagnosticsEngine &diags);

struct RegionRoom;   // scheduler/analysis/StepBoxes.h

/// A tensor a pipelined segment forwards to a consumer, as E0824 lists it:
/// the producer steps its least deadlock-free buffer holds, and their words.
struct ForwardedWords {
  std::string tensor;
  int64_t steps = 0, words = 0;
};

/// E0824 at `range` if what `consumer` is forwarded needs more words than
/// `room` has, else nullopt. The one message for both derivations: the
/// analysis' step boxes and the simulator's isl dependences.
std::optional<Issue> segmentBufferIssue(SourceRange range, const std::string &consumer,
                                        const std::vector<ForwardedWords> &forwarded, const RegionRoom &room);

} // namespace dfl
