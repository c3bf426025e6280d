// The objective of the intra-layer searches: a plan, completed (levels above
// the one being decided at their smallest), turned into directives and scored
// by the analysis `dflc check` runs (score; memoized as a Score for the
// descent: scored). Every candidate of every search is scored here, so here
// the solve budget counts them and the incumbent — the best valid schedule
// scored — is kept for when the budget stops a search (stopping, finish).
#pragma once

#include "scheduler/kapla/TilingSpace.h"

#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dfl::intra {

/// What the descent reads of a scored plan: the objective, and per level the
/// accesses (reads + writes) of each role.
struct Score {
  double value = 0;
  std::vector<std::array<double, kNumRoles>> accesses;
};

/// What the searches read of a completed plan's analysis, whatever the
/// options that then accept or refuse it (the node-buffer reserve, the nodes
/// a segment leaves the layer).
struct Analysed {
  bool valid = false;   // no issue, every level known
  Score score;          // its objective and accesses
  BufferBytes topBytes{};   // the node level's buffers
  int64_t topUnits = 0;
};

/// Of an unpriced analysis, what pricing it as a temporal segment runs the
/// layer (pricedOnChip) and summarizing that (LayerObjective::summarize)
/// read: kept beside the entries of the solves a priced solve repeats (the
/// whole batch, all nodes, no caps), so that a priced solve meeting one of
/// their plans prices it rather than analysing it again (ResNet-50 at batch
/// 64: 78 % of the priced solves' plans). A few hundred bytes, not the
/// result's kilobytes.
struct UnpricedResult {
  struct Level {
    std::array<double, kNumRoles> reads{}, writes{}, bufferTrafficBytes{};
    double trafficBytes = 0;
    int64_t unitsInUse = 1;
  };
  std::vector<Level> levels;
  bool noIssues = false, complete = false;
  double energyPj = 0, energyStaticPj = 0, computeCycles = 0, latencyCycles = 0;
  std::array<double, kNumRoles> dramReadHops{}, dramWriteHops{};
  BufferBytes topBytes{};   // the node level's, as Analysed
  int64_t topUnits = 1;

  UnpricedResult(const LayerResult &r, bool noIssues, size_t top);
  /// A result holding these fields (the rest left as a new LayerResult has them).
  LayerResult result(size_t top) const;
};

/// The analyses of completed plans, shared by the solves of one network on
/// one template under one objective: the inter-layer solver solves the same
/// layer shapes again under other constraints (reserves, batch chunks, node
/// regions) and their descents meet the same completed plans again. A plan's
/// directives, and so its analysis, depend on the layer's shape, the batch,
/// the template and the node level's outermost dims alone: those make the
/// context a plan's key starts with. Keys live in large blocks and entries
/// in a deque, so that the memo's growth does not fragment the heap the
/// analyses allocate in, and are found by open addressing.
class AnalysisMemo {
public:
  /// A kept analysis: `ready` once the thread that made the entry has
  /// filled it (the solver's threads share the memo: docs/solver.md, "Speed").
  struct Entry {
    Analysed analysed;
    std::unique_ptr<const UnpricedResult> unpriced;   // where the solve keeps it (above)
    std::atomic<bool> ready{false};
  };
  /// What entry() found: New (the caller analyses the plan into it, then
  /// calls filled), Ready (read it), Busy (another thread is analysing it:
  /// the caller analyses the plan on its own).
  enum class Found { New, Ready, Busy };

  /// At most `maxEntries` entries (0: no bound). A network's solves meet
  /// hundreds of thousands of plans (ResNet-50 at batch 64: 253,000, about
  /// 270 B each); the bound keeps a larger network's memo within a few
  /// hundred MiB, and a solve past it keeps its new plans in its own memo.
  explicit AnalysisMemo(size_t maxEntries = 0) : maxEntries_(maxEntries) {}
  /// The id of a context (its key, as above).
  uint32_t context(const std::string &key);
  /// The entry of `key` and what it holds; null when `key` is new and the
  /// memo is full.
  std::pair<Entry *, Found> entry(std::string_view key) { return entry(key, hashOf(key)); }
  /// The same, `hash` being hashOf(key).
  std::pair<Entry *, Found> entry(std::string_view key, uint64_t hash);
  static uint64_t hashOf(std::string_view key) { return std::hash<std::string_view>{}(key); }
  /// Whether one more UnpricedResult may be kept: at most a quarter as many
  /// as entries (about 520 B each), so that they add at most half the
  /// memo's bound in memory; past it priced solves analyse their plans.
  bool mayKeepUnpriced() {
    return !maxEntries_ || unpriced_.fetch_add(1, std::memory_order_relaxed) < maxEntries_ / 4;
  }
  /// The entry of `key` if it is filled, else null; adds none.
  const Entry *find(std::string_view key, uint64_t hash);
  /// The caller of entry() that found it New has filled `e`.
  static void filled(Entry &e) { e.ready.store(true, std::memory_order_release); }

private:
  /// Open addressing over the entries (a power of two, at most half full):
  /// the key's hash beside each, so that a probe reads one slot.
  struct Slot {
    uint64_t hash = 0;
    std::string_view key;
    Entry *entry = nullptr;
  };
  /// The keys whose hash has the shard's top bits: each under its own lock,
  /// so that the solver's threads rarely wait for each other's lookups.
  struct Shard {
    std::mutex mutex;   // over the rest: lookups are short, analyses outside it
    std::vector<std::unique_ptr<char[]>> blocks;   // the keys
    size_t blockUsed = 0;
    std::deque<Entry> entries;
    std::vector<Slot> slots = std::vector<Slot>(64);
  };
  static constexpr int kShardBits = 4;
  /// The slot holding `key`, or the empty one where it would go (the shard's lock held).
  static size_t probe(const std::vector<Slot> &slots, std::string_view key, uint64_t hash);

  size_t maxEntries_;
  std::atomic<size_t> size_{0};   // entries over all shards
  std::atomic<size_t> unpriced_{0};   // UnpricedResults kept (or asked for past the bound)
  std::mutex contextMutex_;
  std::map<std::string, uint32_t> contexts_;
  std::array<Shard, size_t{1} << kShardBits> shards_;
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
  /// The same in place.
  void complete(Plan &p) const;

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
  /// The same into `schedule`, its vectors reused.
  void scheduleInto(const Plan &p, LayerScheduleModel &schedule) const;

  /// The node-level units of `r` where they exceed the nodes the solve may
  /// use (IntraLayerOptions::maxNodes: a segment's region); 0 if within.
  int64_t crowding(const LayerResult &r) const;
  /// Whether `units` node-level units exceed them.
  bool crowds(int64_t units) const;

  /// The innermost level given in part (pinnedLevel), if any.
  const LevelDirectives *firstPinned() const;
  /// What it fixes, as written: "level REGF of hardware 'ws' fixes: ...".
  std::string pinnedText(const LevelDirectives &d) const;

  /// A failure of this layer, the reason's numbers to be filled in.
  SolveFailure failure(SolveFailure::Reason reason) const;

  /// The plan analysed: its directives and result, and its summary.
  IntraLayerSolution analyse(const Plan &p, Analysed &a) const;
  /// The summary alone, the directives built in storage kept across plans.
  void analyseKept(const Plan &p, Analysed &a, std::unique_ptr<const UnpricedResult> *unpriced = nullptr);
  /// A priced solve: `a` from the unpriced analysis of the plan scored last
  /// (key_), priced, if an unpriced solve of this shape kept it; else false.
  bool pricedFromUnpriced(Analysed &a);
  void summarize(const LayerResult &r, bool noIssues, Analysed &a) const;
  /// The key of this solve's plans in AnalysisMemo.
  std::string sharedContext(bool priced = true) const;
  /// Counts a scored candidate and says whether this solve's options accept
  /// it (valid, within the reserve and the nodes); keeps the incumbent.
  bool accept(const Plan &p, const Analysed &a);

  /// Whether the search should stop where it is (the solve budget: a limit
  /// reached and a valid schedule scored, or cancelled). Once true, true.
  bool stopping();

  IntraLayerStats &stats_;
  const int64_t firstCandidate_;   // the cap is per layer; stats may add up several (a segment's layers)
  size_t decided_ = 0;
  /// The plans this solve scored, by their key (the memo's, found once per
  /// plan: half the descents' plans are met again in the same solve), by
  /// open addressing (a power of two, at most half full): the analysis to
  /// read if accepted, else null.
  struct Seen {
    uint64_t hash = 0;
    size_t offset = 0, size = 0;   // the key in seenKeys_
    const Analysed *accepted = nullptr;
    bool used = false;
  };
  std::vector<Seen> seen_ = std::vector<Seen>(256);
  size_t seenCount_ = 0;
  std::string seenKeys_;
  /// The slot of `key` in seen_: its own, or the free one where it goes.
  size_t seenSlot(std::string_view key, uint64_t hash) const;
  void markSeen(size_t slot, std::string_view key, uint64_t hash, const Analysed *accepted);
  /// Plans another thread was analysing when this solve met them, analysed here.
  std::deque<Analysed> ownAnalyses_;
  std::string key_;             // scored()'s key, its buffer kept
  std::string unpricedKey_;     // pricedFromUnpriced()'s, likewise
  Plan completed_;              // scored()'s completed plan, likewise
  LayerScheduleModel kept_;     // analyseKept's directives and issues, their storage kept
  std::vector<Issue> keptIssues_;
  BudgetMeter *budget_;         // the solve's (null: none)
  const bool limited_;          // it has a limit: the incumbent is kept, stopping() asks it
  bool stopped_ = false;        // a search stopped at the budget
  std::unique_ptr<AnalysisMemo> own_;   // where the options give none, or a block is written
  AnalysisMemo *memo_;          // the options' (across solves) or own_
  std::string prefix_;          // this solve's context id in it
  /// A priced solve: the context id of the same solve unpriced; empty else.
  std::string unpricedPrefix_;
  /// This solve keeps UnpricedResults beside its entries (a priced solve may repeat it).
  bool keepsUnpriced_ = false;
  std::optional<Plan> incumbent_;   // the best valid plan scored (limited_ only); finish() analyses it
  double incumbentValue_ = 0;
};

} // namespace dfl::intra
