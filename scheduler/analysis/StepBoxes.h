// A pipelined segment's steps as boxes (docs/simulator.md, "Steps" and
// "Buffers"): the dependences between its regions step by step and the
// buffer each forwarded tensor needs, derived without isl. One rule for
// `dflc check`, the solver and the language server (E0824); the simulator
// derives the same tables with isl (backend/polyhedral/Dependences.h), and
// tests/backend/PipelineTest.cpp compares the two on the stdlib's segments.
//
// A region runs its layer in *steps*, the iterations of its node-level
// (L−2) updates in lexicographic order (trips of 1 left out). A step covers
// a box of canonical coordinates; the nest's affine accesses map it to a box
// of each tensor (model/Geometry.h). An element is final at the last step
// writing it (its lastWriter, a lexmax taken update by update). Per
// producer → consumer edge:
//   needs[j]      the last producer step finalizing what consumer step j reads
//   rawWait[j]    the most of needs over steps ≤ j (the paper's L)
//   lastReader[i] the last consumer step reading what producer step i finalizes
//   warWait[i]    the most of lastReader over steps ≤ i
//   words[i]      the elements producer step i finalizes
// and the least deadlock-free buffer (bufferDepths, liveDepths), in producer
// steps and in words (mostWords over it), and the buffer the LCUs keep
// (bufferSlots, bufferSlack).
//
// Before: the segment's layers (network order), each with its directives and
// a complete, valid result. After: the tables; nothing changed.
#pragma once

#include "scheduler/analysis/Analysis.h"
#include "model/Geometry.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dfl {

/// One region: its layer's node-level steps and how they reach tensors.
struct StepRegion {
  static constexpr int64_t kFree = -1;   // an update left free in a partial step
  using Cover = std::array<Interval, kNumDims>;   // per canonical dim
  struct Update {
    Dim dim = Dim::N;   // the independent dim it moves (canonical)
    int64_t amount = 1, count = 1;
  };

  const Layer *layer = nullptr;
  bool folds = false;                  // its iteration dims fold into canonical dims
  std::vector<IterDimFold> fold;
  DimVector bounds{}, base{};          // per canonical dim: the layer's bound; a step's span less one
  std::vector<Update> updates;         // outermost first; trips of 1 left out
  int64_t steps = 1;
  double latency = 0;
  const Access *output = nullptr;
  /// One digit of an output index: (x / divisor) mod radix of canonical
  /// coordinate x of `dim`, times `stride`. The whole coordinate is one
  /// digit of divisor 1; a coordinate whose iteration dims the output
  /// indexes apart (a matmul with heads at a batch above 1: N is batch and
  /// heads, in two tensor dims) has a digit per iteration dim (its fold).
  struct Digit {
    Dim dim = Dim::N;
    int64_t divisor = 1, stride = 1, radix = 1;
  };
  /// Per dim of the output tensor, its index as digits, outermost first: one
  /// digit of stride 1, none (an index 0 of an extent 1), or several, a
  /// mixed-radix linearization (a matmul with heads: 8192·g + 2048·m + kx is
  /// N, Yo and K), each stride the product of the inner digits' radices, the
  /// outermost's spanning the extent. Empty if some output index is none of
  /// these.
  std::vector<std::vector<Digit>> outputDims;
  /// Per canonical dim, where its digits sit in outputDims (tensor dim,
  /// digit), the largest divisor first; none if the output is not indexed
  /// by it (a reduction).
  std::array<std::vector<std::array<size_t, 2>>, kNumDims> digitsOf;

  /// Whether its steps can be read as boxes (its reads and writes derived).
  bool boxed() const { return folds && output && !outputDims.empty(); }
  int64_t linear(const std::vector<int64_t> &u) const;
  std::vector<int64_t> point(int64_t step) const;
  /// The canonical coordinates a (partial) step covers, per independent dim,
  /// clipped to the layer: fixed updates at their values, free ones anywhere.
  Cover cover(const std::vector<int64_t> &u) const;
  /// What a (partial) step reads of `tensor`: the hull over its accesses,
  /// each clipped to the tensor and its guards (`clip`), or unclipped: the
  /// index ranges themselves, which only grow with the step. Empty if none.
  std::optional<IntervalBox> reads(const std::string &tensor, const std::vector<int64_t> &u, bool clip) const;
  /// What a step reads of `tensor` exactly where an index takes apart a
  /// coordinate folding several iteration dims (batch and heads, both N, in
  /// two tensor dims): a box per range of the step's coverage in which no
  /// such iteration dim wraps (`reads` is their hull). Appended to `out`.
  void readBoxes(const std::string &tensor, const std::vector<int64_t> &u, std::vector<IntervalBox> &out) const;
  /// What access `a` touches over a (partial) step, clipped to its tensor
  /// and guards; nullopt if nothing.
  std::optional<IntervalBox> image(const Access &a, const std::vector<int64_t> &u) const;
  /// Per tensor dim axes[j], in out[j], the hull along it of what accesses
  /// `accesses` (indices in the nest) touch over a (partial) step, each as
  /// image() clips it; empty if none touches anything. The step's ranges are
  /// derived once for all of them, into buffers kept across calls
  /// (axisWalks' every step).
  void axisHulls(const std::vector<size_t> &accesses, const std::vector<int64_t> &u, std::span<const size_t> axes,
                 std::span<Interval> out) const;
  /// The last of this (producer) region's steps that finalizes an element of
  /// `box` (a box of its output tensor): exact, a linearized index's range
  /// split into boxes of its digits.
  int64_t lastWriter(const IntervalBox &box) const;
  /// What this (producer) region's step finalizes of its output, per
  /// canonical dim of it (a box in the output's digits): nullopt if an update
  /// it reduces over is not at its last iteration.
  /// finalized()'s interval per dim by the step's components along it, kept
  /// by a caller walking one region's steps: consecutive steps share most of
  /// them (the innermost update moves one dim), so each is searched for once.
  struct FinalizedMemo {
    std::array<std::vector<int64_t>, kNumDims> mine;
    std::array<Interval, kNumDims> out{};
    std::array<bool, kNumDims> known{};
  };
  std::optional<Cover> finalized(const std::vector<int64_t> &u, FinalizedMemo *memo = nullptr) const;
  /// The elements a finalized box holds (those its output's guards keep).
  int64_t words(const Cover &box) const;
  static constexpr int64_t kMaxGuardRows = int64_t{1} << 16;
  /// The same box in the output tensor: one box, or where a linearized index
  /// spans several runs of its values, a box per run; nullopt if more than
  /// kMaxPieces (then the hull serves: more, never fewer, elements).
  std::optional<std::vector<IntervalBox>> pieces(const Cover &box) const;
  static constexpr size_t kMaxPieces = 256;
  /// The least box of the output tensor holding it.
  IntervalBox hull(const Cover &box) const;
  /// What this (producer) region's last step writes of its output tensor (a
  /// linearized index: the hull).
  IntervalBox lastStepBox() const;
  /// The first of this (consumer) region's steps that reads some element
  /// at or past the start of `box` of `tensor` in every dim.
  std::optional<int64_t> firstReader(const std::string &tensor, const IntervalBox &box) const;
  /// The last of this (consumer) region's steps whose reads of `tensor` meet `box`.
  std::optional<int64_t> lastReader(const std::string &tensor, const IntervalBox &box) const;

  /// If the terms of `e` over dims folding into `d` are the whole coordinate
  /// times a factor (Σ f·divisor_i·i over every dim of d), that factor; else 0.
  /// `units`: dims of extent 1 (always 0) count whatever their coefficient.
  int64_t wholeCoordinate(const AffineExpr &e, Dim d, bool units = false) const;

  /// Per access of the nest, per tensor dim, its index over a step's ranges
  /// (`Ranges`): the terms of a coordinate folded into several dims (a
  /// flattened index) that add up to the whole coordinate become one term of
  /// that coordinate, exact where the dims' ranges wrap. Derived once
  /// (stepRegion), since the solver asks for millions of steps' reads.
  std::vector<std::vector<AffineExpr>> images;
  /// Per tensor it reads, the accesses (indices) reading it, and the
  /// canonical dims an inner iteration dim of which some of them index apart:
  /// as the coordinate grows, that index wraps back (not monotone), so a
  /// range of it is read exactly only split where it wraps (subCovers).
  /// `unordered[t]`: the canonical dims (bits) along which tensor dim t's
  /// index does not only grow in some access (it wraps, or falls); along
  /// the others its least value grows with the coordinate, which lets
  /// lastReader bisect over a wrapping dim's updates.
  struct Readers {
    std::string tensor;
    std::vector<size_t> accesses;
    std::array<bool, kNumDims> wraps{};
    std::vector<unsigned> unordered;
  };
  std::vector<Readers> readers;
  void deriveImages();

private:
  /// A step's ranges as `images` index them: each iteration dim's (slot i,
  /// narrowed by an access's guards), then each canonical coordinate's
  /// (slot fold.size() + dim). Kept by the caller across probes so that
  /// reading a step allocates nothing.
  struct Ranges {
    std::vector<Interval> step, slots;   // the step's; one access's (narrowed by its guards)
    IntervalBox out;
    std::vector<int64_t> strides;
  };
  /// The components of the updates moving `d` in the last step writing
  /// canonical coordinate x along d (outermost first), compared
  /// lexicographically with `mine`: −1, 0 or 1.
  int compareWriter(Dim d, int64_t x, std::span<const int64_t> mine) const;
  /// A box of the output's digits: per tensor dim, per digit, its values.
  using DigitBox = std::vector<std::vector<Interval>>;
  /// Canonical `box` as boxes of the output's digits: a coordinate whose
  /// digits sit apart splits into runs of them (at most 2·|digits| − 1);
  /// false if more than `limit` boxes.
  bool digitBoxes(const Cover &box, size_t limit, std::vector<DigitBox> &out) const;
  /// `r.step` for a step's coverage `box`.
  void setCover(const Cover &box, Ranges &r) const;
  /// What access `a` (its index in the nest) reads over the step `r.step`
  /// holds: per tensor dim, in `r.out`, the values lo + k·r.strides[t] up to
  /// hi, clipped to the tensor and its guards (`clip`) or not; false if nothing.
  bool accessReads(size_t a, bool clip, Ranges &r) const;
  /// The accesses reading `tensor`, its output's left out.
  const Readers &readersOf(const std::string &tensor) const;
  /// `box` split along the dims `wraps` marks into ranges in which none of
  /// their iteration dims wraps (each range exact per iteration dim, at most
  /// 2·|dims| − 1 a dim), replacing `out`.
  void subCovers(const Cover &box, const std::array<bool, kNumDims> &wraps, std::vector<Cover> &out) const;
  /// What accesses `readers` read over the step `r.step` holds: their hull,
  /// clipped (`clip`) or not; false if nothing.
  bool readHull(const std::vector<size_t> &readers, bool clip, Ranges &r, IntervalBox &out) const;
};

/// Per axis 0 to n - 1 of `tensor` (n at most 2): the ranges a region's
/// steps write (its output, `write`) or read along it, in the order its
/// steps first reach each, the updates that do not move that axis held at
/// their first iteration; the forwarding granularity rule (E0814,
/// docs/directives.md §9) compares a producer's and a consumer's along the
/// tensor's N and C. One pass over the steps where both axes walk the same
/// accesses over the same updates. Nullopt for an axis where the steps
/// cannot be read as boxes (an intrinsic's nest) or those updates make more
/// than kMaxWalk combinations.
constexpr int64_t kMaxWalk = int64_t{1} << 16;
std::array<std::optional<std::vector<Interval>>, 2> axisWalks(const StepRegion &r, const std::string &tensor, bool write,
                                                              size_t n);

/// Layer `l`'s region: its node-level steps under its directives.
StepRegion stepRegion(const Network &net, const Hardware &hw, int l, const LayerScheduleModel *schedule,
                      const LayerResult &result);

/// The buffer a forwarded tensor's LCUs keep, in producer steps (docs/
/// directives.md §8): the least deadlock-free `depth`, double buffered at
/// the granularity of what the producer forwards (`unitSteps`: it computes
/// its next forwarding unit while the consumer still holds its window), and
/// `slack` more where the consumer's room holds it (bufferSlack). The one
/// rule for the analysis' latency, the LCUs and the simulator.
constexpr int64_t bufferSlots(int64_t depth, int64_t unitSteps, int64_t slack) { return depth + unitSteps + slack; }

/// The most producer steps from one that finalizes data to the next (from
/// the start to the first; `words` per step): 1 where every step does;
/// more where inner steps only add partial sums.
int64_t forwardingUnitSteps(const std::vector<int64_t> &words);

/// One forwarded tensor's dependences, step by step (steps by number, -1: none).
struct EdgeSteps {
  int producer = -1, consumer = -1;   // positions in the segment's layers
  std::string tensor;
  std::vector<int64_t> needs, rawWait;     // per consumer step
  std::vector<int64_t> lastReader, warWait, words;   // per producer step
  int64_t depth = 1;         // the least buffer, in producer steps, that cannot deadlock
  int64_t neededWords = 0;   // the most words leastSlots() consecutive producer steps finalize
  int64_t unitSteps = 1;     // forwardingUnitSteps(words)
  int64_t slack = 0;         // bufferSlack
  int64_t slots() const { return bufferSlots(depth, unitSteps, slack); }
  int64_t leastSlots() const { return bufferSlots(depth, unitSteps, 0); }   // what E0824 checks
};

struct SegmentSteps {
  /// False if some layer's steps cannot be read as boxes (a producer whose
  /// output is not indexed by its canonical coordinates or a dense
  /// linearization of them, e.g. a data gradient), or have more than
  /// kMaxSteps steps: then no tables, and `dflc check` warns (W0831).
  bool derived = false;
  std::string why;              // if not derived: which layer, and why
  std::vector<int64_t> steps;   // per layer of the segment
  std::vector<EdgeSteps> edges;
  /// Asked to refuse early (segmentSteps' `refuseShort`): the first consumer
  /// (position) whose room cannot hold even the least its forwarded tensors
  /// need, whatever the tables say (E0824 for sure), and that least
  /// (`shortOf`: each tensor's forwarding unit and one step more). The edges
  /// are then not tabulated and `derived` is false.
  std::optional<size_t> shortConsumer;
  std::vector<ForwardedWords> shortOf;
};

/// The steps a region may have for its tables to be derived (docs/limits.md).
constexpr int64_t kMaxSteps = int64_t{1} << 20;

/// The tables of pipelined segment `layers` (network order). With
/// `refuseShort`, none where a consumer is short of buffer for sure
/// (SegmentSteps::shortConsumer): the solver only asks whether it is valid.
SegmentSteps segmentSteps(const Network &net, const Hardware &hw, const std::vector<int> &layers,
                          const std::vector<const LayerScheduleModel *> &schedules,
                          const std::vector<const LayerResult *> &results, bool refuseShort = false);

/// An edge's waits, for bufferDepths.
struct EdgeWaits {
  int producer = -1, consumer = -1;   // region indices, topological
  std::span<const int64_t> rawWait, warWait;
};

/// Per edge the least buffer, in producer steps, that cannot deadlock: what
/// the consumer needs of every ancestor by its step j, along every path (RAW
/// composed), keeps the producer's WAR wait behind it. `steps` per region.
std::vector<int64_t> bufferDepths(const std::vector<int64_t> &steps, const std::vector<EdgeWaits> &edges);

/// A greedy run of the regions' steps (`steps` per region, topological)
/// against their waits, buffers of `slots` producer steps per edge: a
/// region's step j starts when its step j − 1, the producer steps RAW(j) of
/// its incoming edges and the consumer steps WAR(j − slots) of its outgoing
/// ones have ended, and takes `stepCycles` of its region — the waits the
/// LCUs run. A Kahn network with blocking reads and writes: where it stops
/// (`done`, per region the steps run) does not depend on timing.
struct StepRun {
  std::vector<int64_t> done;
  double cycles = 0;   // the last step's end
};
StepRun runSteps(const std::vector<int64_t> &steps, const std::vector<EdgeWaits> &edges,
                 const std::vector<int64_t> &slots, const std::vector<double> &stepCycles);

/// `depths` widened until the regions' LCUs cannot deadlock with buffers of
/// bufferSlots(depth, unitSteps, 0) steps (runSteps); each producer stopped
/// by a full buffer gets the least one that lets it step. A network stuck on RAW alone is left as
/// it is (no buffer helps; the simulation reports it).
std::vector<int64_t> liveDepths(const std::vector<int64_t> &steps, const std::vector<EdgeWaits> &edges,
                                std::vector<int64_t> depths, const std::vector<int64_t> &unitSteps);

/// An edge's buffer as bufferSlack sees it.
struct EdgeBuffer {
  int consumer = -1;
  int64_t depth = 1, unitSteps = 1;
  std::span<const int64_t> words;   // per producer step
};

/// Per edge the slack (docs/directives.md §8): `depth` more steps (double
/// buffering the deadlock-free buffer, so the producer runs ahead of the
/// consumer's reads instead of waiting on them) for every edge into a
/// consumer whose room (`roomWords` per region; nullopt: unbounded) holds
/// all its incoming edges' buffers so widened; else 0 for each of them.
std::vector<int64_t> bufferSlack(const std::vector<EdgeBuffer> &edges, const std::vector<std::optional<int64_t>> &roomWords);

/// The most words `n` consecutive steps finalize (`words` per step): a
/// buffer of n producer steps, in words.
int64_t mostWords(std::span<const int64_t> words, int64_t n);

/// The room a region's node-level buffers leave for what it reads from its
/// segment (docs/simulator.md, "Buffers"), in words of the forwarded
/// (finished) data: all its nodes' buffers, less its wgt and ofm tiles.
struct RegionRoom {
  std::string level;
  int64_t nodes = 0;
  bool bounded = false;   // the level has a capacity (else no room is short)
  int64_t capacityWords = 0;
  int64_t otherTileWords = 0;
  int64_t words() const { return capacityWords - otherTileWords; }
};
RegionRoom regionRoom(const Layer &layer, const Hardware &hw, const LayerResult &result);
/// The most room `nodes` nodes leave, whatever a layer's tiles: their
/// buffers (otherTileWords 0).
RegionRoom regionCapacity(const Hardware &hw, int64_t nodes);

/// The room bufferSlack gives: nullopt where unbounded.
inline std::optional<int64_t> slackRoom(const RegionRoom &r) {
  return r.bounded ? std::optional<int64_t>(r.words()) : std::nullopt;
}

/// segmentSteps' early refusal (`refuseShort`), made layer by layer as the
/// solver builds a pipelined scheme in network order: a scheme with a
/// consumer short of buffer for sure is refused before the layers after it
/// are solved, and before the consumer itself where its producers need more
/// than its nodes hold (docs/solver.md, "Speed"). The same rule
/// (leastShort's), consumer by consumer; undecided from the first layer
/// whose steps segmentSteps would not tabulate (then the analysis decides).
class ShortConsumerTest {
public:
  ShortConsumerTest(const Network &net, const Hardware &hw) : net_(net), hw_(hw) {}
  /// Whether layer `x`, next in the segment, is short for sure on at most
  /// `nodes` nodes whatever its schedule.
  bool shortOnAny(int x, int64_t nodes);
  /// Adds `x`, next in the segment, as scheduled; whether it is short for sure.
  bool add(int x, const LayerScheduleModel *schedule, const LayerResult &result);
  /// What the last short consumer needs at least (segmentBufferIssue's `forwarded`).
  const std::vector<ForwardedWords> &shortOf() const { return least_; }

private:
  /// Whether `consumer`, at position c after its producers, needs more than
  /// `room` (nullopt: unbounded) at least; undecided from here where an edge
  /// into it cannot be read as boxes.
  bool needsMore(size_t c, const Layer &consumer, bool folds, std::optional<int64_t> room);
  const std::vector<std::vector<int64_t>> &wordsFor(const std::vector<std::array<size_t, 2>> &edges);

  const Network &net_;
  const Hardware &hw_;
  std::vector<StepRegion> regions_;
  std::vector<std::vector<int64_t>> words_;   // per region: what each step finalizes (once asked)
  std::vector<ForwardedWords> least_;
  bool undecided_ = false;
};

} // namespace dfl
