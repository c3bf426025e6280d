#include "scheduler/kapla/LayerObjective.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "scheduler/kapla/InterLayerSolver.h"
#include "model/ScheduleWriter.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

namespace dfl::intra {
namespace {

/// Doubles an open-addressed table (a slot is empty where `used` says so)
/// and returns the free slot of `hash` in it.
template <class Slot, class Used>
size_t growTable(std::vector<Slot> &slots, uint64_t hash, Used used) {
  std::vector<Slot> old = std::exchange(slots, std::vector<Slot>(2 * slots.size()));
  const size_t mask = slots.size() - 1;
  auto freeSlot = [&](uint64_t h) {
    size_t j = h & mask;
    while (used(slots[j]))
      j = (j + 1) & mask;
    return j;
  };
  for (const Slot &s : old)
    if (used(s))
      slots[freeSlot(s.hash)] = s;
  return freeSlot(hash);
}

} // namespace

uint32_t AnalysisMemo::context(const std::string &key) {
  std::lock_guard lock(contextMutex_);
  return contexts_.emplace(key, static_cast<uint32_t>(contexts_.size())).first->second;
}

size_t AnalysisMemo::probe(const std::vector<Slot> &slots, std::string_view key, uint64_t hash) {
  const size_t mask = slots.size() - 1;
  size_t i = hash & mask;
  for (; slots[i].entry; i = (i + 1) & mask)
    if (slots[i].hash == hash && slots[i].key == key)
      break;
  return i;
}

std::pair<AnalysisMemo::Entry *, AnalysisMemo::Found> AnalysisMemo::entry(std::string_view key, uint64_t hash) {
  Shard &sh = shards_[hash >> (64 - kShardBits)];
  std::lock_guard lock(sh.mutex);
  std::vector<Slot> &slots = sh.slots;
  size_t i = probe(slots, key, hash);
  if (Entry *e = slots[i].entry)
    return {e, e->ready.load(std::memory_order_acquire) ? Found::Ready : Found::Busy};
  // Full: past the bound by at most one entry a thread (the shards count
  // apart); what is kept never changes a result, only what is analysed again.
  if (maxEntries_ && size_.load(std::memory_order_relaxed) >= maxEntries_)
    return {nullptr, Found::New};
  if (2 * (sh.entries.size() + 1) > slots.size())   // grow, then find the free slot again
    i = growTable(slots, hash, [](const Slot &s) { return s.entry != nullptr; });
  constexpr size_t kBlock = size_t{1} << 16;
  if (sh.blocks.empty() || sh.blockUsed + key.size() > kBlock) {
    sh.blocks.emplace_back(new char[std::max(kBlock, key.size())]);
    sh.blockUsed = 0;
  }
  char *kept = sh.blocks.back().get() + sh.blockUsed;
  std::memcpy(kept, key.data(), key.size());
  sh.blockUsed += key.size();
  Entry *e = &sh.entries.emplace_back();
  size_.fetch_add(1, std::memory_order_relaxed);
  slots[i] = {hash, std::string_view(kept, key.size()), e};
  return {e, Found::New};
}

UnpricedResult::UnpricedResult(const LayerResult &r, bool noIssues, size_t top)
    : noIssues(noIssues), complete(r.complete), energyPj(r.energyPj), energyStaticPj(r.energyStaticPj),
      computeCycles(r.computeCycles), latencyCycles(r.latencyCycles), dramReadHops(r.dramReadHops),
      dramWriteHops(r.dramWriteHops) {
  levels.reserve(r.levels.size());
  for (const LevelResult &lr : r.levels)
    levels.push_back({lr.accesses.reads, lr.accesses.writes, lr.bufferTrafficBytes, lr.trafficBytes, lr.unitsInUse});
  if (top < r.levels.size())
    topBytes = r.levels[top].bufferBytes, topUnits = r.levels[top].units;
}

LayerResult UnpricedResult::result(size_t top) const {
  LayerResult r;
  r.complete = complete;
  r.energyPj = energyPj, r.energyStaticPj = energyStaticPj;
  r.computeCycles = computeCycles, r.latencyCycles = latencyCycles;
  r.dramReadHops = dramReadHops, r.dramWriteHops = dramWriteHops;
  r.levels.resize(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    LevelResult &lr = r.levels[l];
    lr.level = static_cast<int>(l);
    lr.accesses.reads = levels[l].reads, lr.accesses.writes = levels[l].writes;
    lr.bufferTrafficBytes = levels[l].bufferTrafficBytes;
    lr.trafficBytes = levels[l].trafficBytes;
    lr.unitsInUse = levels[l].unitsInUse;
  }
  if (top < r.levels.size())
    r.levels[top].bufferBytes = topBytes, r.levels[top].units = topUnits;
  return r;
}

const AnalysisMemo::Entry *AnalysisMemo::find(std::string_view key, uint64_t hash) {
  Shard &sh = shards_[hash >> (64 - kShardBits)];
  std::lock_guard lock(sh.mutex);
  const Entry *e = sh.slots[probe(sh.slots, key, hash)].entry;
  return e && e->ready.load(std::memory_order_acquire) ? e : nullptr;
}

LayerObjective::LayerObjective(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *given,
                               const IntraLayerOptions &options, IntraLayerStats &stats)
    : TilingSpace(net, layer, hw, given, options), stats_(stats), firstCandidate_(stats.candidates),
      budget_(options.budget), limited_(options.budget && options.budget->limited()),
      own_(given || !options.analyses ? std::make_unique<AnalysisMemo>() : nullptr),
      memo_(own_ ? own_.get() : options.analyses) {
  const uint32_t id = memo_->context(sharedContext());
  prefix_.assign(reinterpret_cast<const char *>(&id), sizeof id);
  // Priced solves run on the whole batch and all nodes, uncapped: the
  // unpriced solves of that kind keep what pricing reads, in the memo the
  // solves share (a solve's own memo is met by no other solve).
  const bool wholeLayer = !own_ && !options_.topBatchOutermost && options_.maxNodes == 0 &&
                          std::all_of(options_.maxTile.begin(), options_.maxTile.end(), [](int64_t t) { return t == 0; });
  if (wholeLayer && options_.onChip.any()) {
    const uint32_t unpriced = memo_->context(sharedContext(false));
    unpricedPrefix_.assign(reinterpret_cast<const char *>(&unpriced), sizeof unpriced);
  }
  keepsUnpriced_ = wholeLayer && !options_.onChip.any() && options_.keepUnpriced;
}

std::string LayerObjective::sharedContext(bool priced) const {
  // The template by identity: the solves of one network share it (a vector
  // unit's truncated template is another).
  std::string k = std::to_string(reinterpret_cast<uintptr_t>(&hw_)) + "/" + std::to_string(net_.batch) + "/" +
                  objectiveName(options_.objective) + "/" + std::to_string(options_.topBatchOutermost);
  for (Dim d : options_.topOutermost)
    k += dimName(d);
  if (priced && options_.onChip.any())
    k += options_.onChip.key();
  return k + "/" + shapeKey(layer_);
}

std::optional<IntraLayerSolution> LayerObjective::finish(std::optional<IntraLayerSolution> sol, SolveFailure &why) {
  if (!stopped_)
    return sol;
  stats_.limited = true;
  if (!incumbent_) {
    why = failure(SolveFailure::Reason::NoneWithinLimit);
    why.limit = budget_->hit();
    return std::nullopt;
  }
  Analysed ignored;
  return analyse(*incumbent_, ignored);
}

Plan LayerObjective::completed(const Plan &p) const {
  Plan q = p;
  complete(q);
  return q;
}

void LayerObjective::complete(Plan &q) const {
  for (size_t l = decided_ + 1; l < q.levels.size(); ++l) {
    if (q.levels[l].fixed)
      continue;
    for (size_t i = 0; i < kND; ++i) {
      q.levels[l].tile[i] = unitBelow(q, l, i);
      q.levels[l].repl[i] = initialRepl(l, i);
    }
    applyForced(q, l);
  }
}

const Score *LayerObjective::scored(const Plan &p) {
  // Completed in storage kept from the last plan; as it is where every
  // level is decided (the polish, the final score).
  const bool whole = decided_ + 1 >= p.levels.size();
  if (!whole) {
    completed_ = p;
    complete(completed_);
  }
  const Plan &q = whole ? p : completed_;
  // The context, then the plan (varints: most values are small).
  key_ = prefix_;
  auto put = [&](int64_t v) {
    auto u = static_cast<uint64_t>(v);
    for (; u >= 0x80; u >>= 7)
      key_.push_back(static_cast<char>(u | 0x80));
    key_.push_back(static_cast<char>(u));
  };
  for (const auto &lp : q.levels) {
    for (size_t i = 0; i < kND; ++i)
      put(lp.tile[i]), put(lp.repl[i]);
    put(static_cast<int64_t>(lp.order)), put(lp.fixed);
  }
  // Counted and accepted once per solve, as score() does: analysed in
  // another solve or not, the same candidates and verdicts.
  const uint64_t hash = AnalysisMemo::hashOf(key_);
  const size_t slot = seenSlot(key_, hash);
  if (seen_[slot].used)
    return seen_[slot].accepted ? &seen_[slot].accepted->score : nullptr;
  auto [e, found] = memo_->entry(key_, hash);
  if (!e) {   // the shared memo is full: this solve's new plans in its own
    if (!own_)
      own_ = std::make_unique<AnalysisMemo>();
    std::tie(e, found) = own_->entry(key_, hash);
  }
  const Analysed *a = &e->analysed;
  if (found == AnalysisMemo::Found::New) {
    if (!pricedFromUnpriced(e->analysed))
      analyseKept(q, e->analysed, keepsUnpriced_ && memo_->mayKeepUnpriced() ? &e->unpriced : nullptr);
    AnalysisMemo::filled(*e);
  } else if (found == AnalysisMemo::Found::Busy) {   // the same analysis, made here
    a = &ownAnalyses_.emplace_back();
    analyseKept(q, ownAnalyses_.back());
  }
  const Analysed *accepted = accept(q, *a) ? a : nullptr;
  markSeen(slot, key_, hash, accepted);
  return accepted ? &accepted->score : nullptr;
}

size_t LayerObjective::seenSlot(std::string_view key, uint64_t hash) const {
  const size_t mask = seen_.size() - 1;
  size_t i = hash & mask;
  for (; seen_[i].used; i = (i + 1) & mask)
    if (seen_[i].hash == hash && std::string_view(seenKeys_).substr(seen_[i].offset, seen_[i].size) == key)
      break;
  return i;
}

void LayerObjective::markSeen(size_t slot, std::string_view key, uint64_t hash, const Analysed *accepted) {
  if (2 * (seenCount_ + 1) > seen_.size())   // grow, then find the free slot again
    slot = growTable(seen_, hash, [](const Seen &s) { return s.used; });
  seen_[slot] = {hash, seenKeys_.size(), key.size(), accepted, true};
  seenKeys_ += key;
  ++seenCount_;
}

LayerScheduleModel LayerObjective::directivesOf(const Plan &p) const {
  LayerScheduleModel schedule;
  schedule.levels.reserve(p.levels.size() + 1);
  scheduleInto(p, schedule);
  return schedule;
}

void LayerObjective::scheduleInto(const Plan &p, LayerScheduleModel &schedule) const {
  schedule.layer = layerIndex_;
  schedule.levels.resize(p.levels.size());
  for (size_t l = 0; l < p.levels.size(); ++l)
    directivesInto(p, l, schedule.levels[l]);
  // The outermost level's layouts, as given: they place the tensors there,
  // nothing is chosen.
  if (given_)
    for (const LevelDirectives &d : given_->levels)
      if (d.level + 1 == static_cast<int>(hw_.levels.size()) && !d.layouts.empty()) {
        LevelDirectives top;
        top.level = d.level;
        top.layouts = d.layouts;
        schedule.levels.push_back(std::move(top));
      }
}

void LayerObjective::explain(const Plan &p, SolveFailure &why) const {
  LayerScheduleModel schedule = directivesOf(completed(p));
  std::vector<Issue> issues;
  const LayerResult result = analyzeLayer(net_, layerIndex_, hw_, &schedule, issues);
  if (issues.empty()) {
    // Valid alone, but not on the nodes a segment leaves the layer (score()):
    // E0815, the segment's other layers on the rest.
    if (int64_t units = crowding(result)) {
      const Level &nodes = hw_.levels[top_];
      const int64_t others = nodes.units() - options_.maxNodes;
      const DiagInfo &info = diagInfo(diag::err_segment_nodes);
      why.constraint = formatDiagnostic(info.format, {std::to_string(units + others), nodes.name,
                                                      std::to_string(nodes.units()),
                                                      std::to_string(units) + " for '" + layer_.name + "' + " +
                                                          std::to_string(others) + " for the segment's other layers"}) +
                       " [" + info.code + "]";
    }
    return;
  }
  // A directive written in the source (the user's, the hardware's) is where
  // the user can act; the solver's own have no range.
  auto it = std::find_if(issues.begin(), issues.end(), [](const Issue &i) { return i.range.valid(); });
  const Issue &issue = it != issues.end() ? *it : issues.front();
  const DiagInfo &info = diagInfo(issue.id);
  why.constraint = formatDiagnostic(info.format, issue.args) + " [" + info.code + "]";
  // A rule broken at the solver's own directives follows from those given
  // (the completion steps inside them): point at what pins the completion —
  // a level given in part (the hardware's fixed dataflow, named), else the
  // layer's given schedule.
  if (issue.range.valid())
    why.directive = issue.range;
  else if (const LevelDirectives *pinned = firstPinned())
    why.directive = pinned->range, why.forcedBy = pinnedText(*pinned);
  else if (given_)
    why.directive = given_->range;
}

LayerObjective::LevelStart LayerObjective::startLevel(Plan &p, size_t l, SolveFailure &why) {
  if (l > 0)
    for (size_t i = 0; i < kND; ++i)
      p.levels[l].tile[i] = unitBelow(p, l, i);
  if (fixedLevel(l)) {
    absorbFixed(p, l);
    return LevelStart::Given;
  }
  applyForced(p, l);
  if (fits(p, l))
    return LevelStart::Free;
  // What fails: level l's smallest tiles, or their stacked tile as the next
  // level's least (fits); by a buffer, or past a smaller piece's extent.
  const bool own = !fitsPartial(p, l);
  const Plan stacked = own ? p : stackedAbove(p, l);
  const size_t at = own ? l : l + 1;
  if (!withinMaxTile(stacked, at)) {
    why = failure(SolveFailure::Reason::NoneFound);
    why.constraint = "the smallest tiles at level " + hw_.levels[at].name + " pass the smallest piece's extent";
    return LevelStart::DoesNotFit;
  }
  why = failure(SolveFailure::Reason::DoesNotFit);
  why.level = static_cast<int>(at);
  const size_t b = static_cast<size_t>(std::max(0, overflowing(stacked, at)));
  const Buffer &buf = hw_.levels[at].buffers[b];
  why.levelName = hw_.levels[at].name + (buf.implicit ? "" : " buffer " + buf.name);
  why.neededBytes = occupancy(stacked, at)[b];
  why.availableBytes = capacity(at, b).value_or(0);
  // What sets the smallest tiles: the level's own pins, or the given level below.
  if (const LevelDirectives *pinned = pinnedLevel(at))
    why.directive = pinned->range;
  else if (at > 0 && (fixedLevel(at - 1) || pinnedLevel(at - 1)))
    why.directive = fixedLevel(at - 1) ? givenLevel(at - 1)->range : pinnedLevel(at - 1)->range;
  return LevelStart::DoesNotFit;
}

std::optional<Plan> LayerObjective::smallestCompletion(SolveFailure &why) {
  Plan p = initialPlan();
  for (size_t l = 0; l < p.levels.size(); ++l)
    if (startLevel(p, l, why) == LevelStart::DoesNotFit)
      return std::nullopt;
  return p;
}

const LevelDirectives *LayerObjective::firstPinned() const {
  for (size_t l = 0; l + 1 < hw_.levels.size(); ++l)
    if (const LevelDirectives *d = pinnedLevel(l))
      return d;
  return nullptr;
}

std::string LayerObjective::pinnedText(const LevelDirectives &d) const {
  const Level &lv = hw_.levels[static_cast<size_t>(d.level >= 0 ? d.level : 0)];
  const std::string whose = &d == &lv.fixed ? "hardware '" + hw_.name + "'" : "the schedule of layer '" + layer_.name + "'";
  return "level " + lv.name + " of " + whose + " fixes: " + joinList(printDirectives(d), " ", " ");
}

std::optional<IntraLayerSolution> LayerObjective::score(const Plan &p) {
  Analysed a;
  IntraLayerSolution s = analyse(p, a);
  if (!accept(p, a))
    return std::nullopt;
  return s;
}

IntraLayerSolution LayerObjective::analyse(const Plan &p, Analysed &a) const {
  IntraLayerSolution s;
  s.schedule = directivesOf(p);
  std::vector<Issue> issues;
  s.result = analyzeLayer(net_, layerIndex_, hw_, &s.schedule, issues);
  summarize(s.result, issues.empty(), a);   // the result stays as alone: the segment analysis forwards
  return s;
}

void LayerObjective::analyseKept(const Plan &p, Analysed &a, std::unique_ptr<const UnpricedResult> *unpriced) {
  scheduleInto(p, kept_);
  keptIssues_.clear();
  const LayerResult r = analyzeLayer(net_, layerIndex_, hw_, &kept_, keptIssues_);
  summarize(r, keptIssues_.empty(), a);   // after the analysis: it fills keptIssues_
  if (unpriced)
    *unpriced = std::make_unique<const UnpricedResult>(r, keptIssues_.empty(), top_);
}

bool LayerObjective::pricedFromUnpriced(Analysed &a) {
  if (unpricedPrefix_.empty())
    return false;
  std::string &key = unpricedKey_;
  key.assign(unpricedPrefix_).append(key_, prefix_.size());
  const AnalysisMemo::Entry *e = memo_->find(key, AnalysisMemo::hashOf(key));
  if (!e || !e->unpriced)
    return false;
  summarize(e->unpriced->result(top_), e->unpriced->noIssues, a);   // priced there, as after an analysis
  ++stats_.repriced;
  return true;
}

void LayerObjective::summarize(const LayerResult &alone, bool noIssues, Analysed &a) const {
  std::optional<LayerResult> inSegment;
  if (options_.onChip.any() && alone.complete && alone.levels.size() == hw_.levels.size())
    inSegment = pricedOnChip(net_, layerIndex_, hw_, alone, options_.onChip);
  const LayerResult &r = inSegment ? *inSegment : alone;
  a.valid = noIssues && r.complete;
  a.score.value = objectiveValue(options_.objective, r.energyPj, r.latencyCycles);
  a.score.accesses.clear();
  for (const LevelResult &lr : r.levels) {
    auto &acc = a.score.accesses.emplace_back();
    for (size_t i = 0; i < kNumRoles; ++i)
      acc[i] = lr.accesses.reads[i] + lr.accesses.writes[i];
  }
  if (top_ < r.levels.size())
    a.topBytes = r.levels[top_].bufferBytes, a.topUnits = r.levels[top_].units;
}

bool LayerObjective::accept(const Plan &p, const Analysed &a) {
  ++stats_.candidates;
  if (budget_)
    budget_->scored();
  // The reserve, on the analysis' own occupancy: also where a level is
  // given (by the hardware) rather than chosen.
  const bool hasTop = top_ < a.score.accesses.size();
  bool reserved = options_.reservedTopBytes > 0 && hasTop &&
                  hw_.overflowingBuffer(top_, a.topBytes, layer_.output, reserve(top_)) >= 0;
  if (!a.valid || reserved || (hasTop && crowds(a.topUnits))) {
    ++stats_.rejected;
    return false;
  }
  if (limited_ && (!incumbent_ || a.score.value < incumbentValue_))   // should the budget stop the search
    incumbentValue_ = a.score.value, incumbent_ = p;
  return true;
}

int64_t LayerObjective::crowding(const LayerResult &r) const {
  return top_ < r.levels.size() && crowds(r.levels[top_].units) ? r.levels[top_].units : 0;
}

bool LayerObjective::crowds(int64_t units) const { return options_.maxNodes > 0 && units > options_.maxNodes; }

SolveFailure LayerObjective::failure(SolveFailure::Reason reason) const {
  SolveFailure f;
  f.reason = reason;
  f.layer = layerIndex_;
  f.layerName = layer_.name;
  return f;
}

bool LayerObjective::stopping() {
  if (limited_ && !stopped_)
    stopped_ = budget_->stop(incumbent_.has_value());
  return stopped_;
}

} // namespace dfl::intra
