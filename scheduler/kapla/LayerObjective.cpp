#include "scheduler/kapla/LayerObjective.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "model/ScheduleWriter.h"

#include <algorithm>

namespace dfl::intra {

LayerObjective::LayerObjective(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *given,
                               const IntraLayerOptions &options, IntraLayerStats &stats)
    : TilingSpace(net, layer, hw, given, options), stats_(stats), firstCandidate_(stats.candidates),
      budget_(options.budget), limited_(options.budget && options.budget->limited()) {}

std::optional<IntraLayerSolution> LayerObjective::finish(std::optional<IntraLayerSolution> sol, SolveFailure &why) {
  if (!stopped_)
    return sol;
  stats_.limited = true;
  if (!incumbent_) {
    why = failure(SolveFailure::Reason::NoneWithinLimit);
    why.limit = budget_->hit();
  }
  return std::move(incumbent_);
}

Plan LayerObjective::completed(const Plan &p) const {
  Plan q = p;
  for (size_t l = decided_ + 1; l < q.levels.size(); ++l) {
    if (q.levels[l].fixed)
      continue;
    for (size_t i = 0; i < kND; ++i) {
      q.levels[l].tile[i] = unitBelow(q, l, i);
      q.levels[l].repl[i] = initialRepl(l, i);
    }
    applyForced(q, l);
  }
  return q;
}

const Score *LayerObjective::scored(const Plan &p) {
  const Plan q = completed(p);
  std::string key;
  key.reserve(q.levels.size() * (2 * kND + 2) * sizeof(int64_t));
  auto put = [&](int64_t v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); };
  for (const auto &lp : q.levels) {
    for (size_t i = 0; i < kND; ++i)
      put(lp.tile[i]), put(lp.repl[i]);
    put(static_cast<int64_t>(lp.order)), put(lp.fixed);
  }
  auto it = memo_.find(key);
  if (it == memo_.end()) {
    std::optional<Score> s;
    if (auto sol = score(q)) {
      s.emplace();
      s->value = objectiveValue(options_.objective, sol->result.energyPj, sol->result.latencyCycles);
      for (const LevelResult &lr : sol->result.levels) {
        auto &a = s->accesses.emplace_back();
        for (size_t r = 0; r < kNumRoles; ++r)
          a[r] = lr.accesses.reads[r] + lr.accesses.writes[r];
      }
    }
    it = memo_.emplace(std::move(key), std::move(s)).first;
  }
  return it->second ? &*it->second : nullptr;
}

LayerScheduleModel LayerObjective::directivesOf(const Plan &p) const {
  LayerScheduleModel schedule;
  schedule.layer = layerIndex_;
  for (size_t l = 0; l < p.levels.size(); ++l)
    schedule.levels.push_back(directivesFor(p, l));
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
  return schedule;
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
  why = failure(SolveFailure::Reason::DoesNotFit);
  why.level = static_cast<int>(l);
  const size_t b = static_cast<size_t>(std::max(0, overflowing(p, l)));
  const Buffer &buf = hw_.levels[l].buffers[b];
  why.levelName = hw_.levels[l].name + (buf.implicit ? "" : " buffer " + buf.name);
  why.neededBytes = occupancy(p, l)[b];
  why.availableBytes = capacity(l, b).value_or(0);
  // What sets the smallest tiles: the level's own pins, or the given level below.
  if (const LevelDirectives *pinned = pinnedLevel(l))
    why.directive = pinned->range;
  else if (l > 0 && (fixedLevel(l - 1) || pinnedLevel(l - 1)))
    why.directive = fixedLevel(l - 1) ? givenLevel(l - 1)->range : pinnedLevel(l - 1)->range;
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
  ++stats_.candidates;
  if (budget_)
    budget_->scored();
  IntraLayerSolution s;
  s.schedule = directivesOf(p);
  std::vector<Issue> issues;
  s.result = analyzeLayer(net_, layerIndex_, hw_, &s.schedule, issues);
  // The reserve, on the analysis' own occupancy: also where a level is
  // given (by the hardware) rather than chosen.
  bool reserved = options_.reservedTopBytes > 0 && top_ < s.result.levels.size() &&
                  hw_.overflowingBuffer(top_, s.result.levels[top_].bufferBytes, layer_.output, reserve(top_)) >= 0;
  if (!issues.empty() || !s.result.complete || reserved || crowding(s.result)) {
    ++stats_.rejected;
    return std::nullopt;
  }
  if (limited_) {   // the incumbent, should the budget stop the search
    double v = objectiveValue(options_.objective, s.result.energyPj, s.result.latencyCycles);
    if (!incumbent_ || v < incumbentValue_)
      incumbentValue_ = v, incumbent_ = s;
  }
  return s;
}

int64_t LayerObjective::crowding(const LayerResult &r) const {
  if (options_.maxNodes <= 0 || top_ >= r.levels.size() || r.levels[top_].units <= options_.maxNodes)
    return 0;
  return r.levels[top_].units;
}

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
