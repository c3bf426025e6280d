#include "lsp/FillIn.h"

#include "lsp/Compilation.h"
#include "lsp/Positions.h"

#include "model/ScheduleWriter.h"
#include "scheduler/Solver.h"

namespace dfl::lsp {
namespace {

struct SolveCancelled {};

/// The solver's directives for one schedule, as DFL: the declaration, and
/// per layer its `layer NAME { ... }` block (canonical 2-space indentation).
std::string scheduleText(const Model &model, const Schedule &schedule) {
  std::string text = writeSchedule(model, schedule, {}, "");
  text = text.substr(text.find("schedule for"));   // after the blank line that follows (no) imports
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

std::string layerBlockText(const Model &model, const Schedule &solved, int layer) {
  Schedule one;
  one.network = solved.network;
  one.hardware = solved.hardware;
  for (const LayerScheduleModel &ls : solved.layers)
    if (ls.layer == layer)
      one.layers.push_back(ls);
  std::string text = scheduleText(model, one);
  size_t begin = text.find("  layer "), end = text.rfind("\n}");
  if (begin == std::string::npos || end == std::string::npos || end <= begin)
    return "";
  return text.substr(begin + 2, end - begin - 2);   // without the first line's indentation
}

} // namespace

bool FillIn::configure(const std::optional<std::string> &solver, const std::optional<std::string> &objective,
                       std::string &error) {
  if (solver && !makeSolver(*solver)) {
    error = "unknown solver '" + *solver + "'" + didYouMean(*solver, solverNames()) + " (expected " +
            joinList(solverNames()) + ")";
    return false;
  }
  if (objective && *objective != "energy" && *objective != "latency" && *objective != "edp") {
    error = "unknown objective '" + *objective + "'" + didYouMean(*objective, {"energy", "latency", "edp"}) +
            " (expected energy, latency or edp)";
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  solver_ = solver.value_or(solver_);
  objective_ = objective.value_or(objective_);
  return true;
}

std::vector<CodeAction> FillIn::actions(std::vector<CodeAction> out, const std::shared_ptr<const Compilation> &c,
                                        const std::string &uri, Range range,
                                        const std::shared_ptr<std::atomic<bool>> &cancelled) {
  if (!c->analyzed || !c->rootAst)
    return out;
  std::string solverName, objective;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    solverName = solver_;
    objective = objective_;
  }
  std::string cacheKey = std::to_string(c->generation) + "/" + solverName + "/" + objective;
  std::vector<ScopedAction> all;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(uri);
    if (it != cache_.end() && it->second.first == cacheKey)
      all = it->second.second, cached = true;
  }
  for (const CheckedSchedule &cs : cached ? std::vector<CheckedSchedule>{} : c->checked) {
    const Schedule &s = c->model.schedules[cs.schedule];
    if (s.range.begin.file != c->root || !cs.result.valid || cs.result.complete)
      continue;
    const Network &net = c->model.networks[s.network];
    std::string how = " (solver " + solverName + ", objective " + objective + ")";
    CodeAction whole{"Fill in missing directives" + how, "refactor.rewrite", uri, {}, std::nullopt};
    SolverOptions so;
    so.objective = objective == "latency" ? Objective::Latency : objective == "edp" ? Objective::EDP
                                                                                   : Objective::Energy;
    so.progress = [&](size_t, size_t) {
      if (cancelled && *cancelled)
        throw SolveCancelled{};
    };
    SolveFailure failure;
    std::optional<Solution> solution;
    try {
      solution = makeSolver(solverName)->solve(c->model, s, so, failure);
    } catch (const SolveCancelled &) {
      return out;   // nothing cached: the next request solves again
    }
    if (!solution) {
      whole.disabledReason = "no valid schedule" +
                             (failure.layer >= 0 ? " for layer '" + net.layers.at(failure.layer).name + "'" : "") +
                             ": " + failure.why;
      all.push_back({toLspRange(c->sm, s.range), whole});
      continue;
    }
    whole.edits.push_back({toLspRange(c->sm, s.range), scheduleText(c->model, solution->schedule)});
    all.push_back({toLspRange(c->sm, s.range), whole});
    // Per layer: a written `layer NAME { ... }` block that is incomplete gets the
    // solver's block for that layer alone (the same solve: the layers are independent).
    forEachLayerBlock(*c, s, cs.result.layers.size(), [&](const ast::LayerSchedule &ls, int li) {
      std::string text = cs.result.layers[li].complete ? "" : layerBlockText(c->model, solution->schedule, li);
      if (text.empty())
        return;
      CodeAction one{"Fill in missing directives of layer " + ls.layer.name + how, "refactor.rewrite", uri,
                     {{toLspRange(c->sm, ls.range), text}}, std::nullopt};
      all.push_back({toLspRange(c->sm, ls.range), one});
    });
  }
  if (!cached) {
    std::lock_guard<std::mutex> lock(mutex_);
    cache_[uri] = {cacheKey, all};
  }
  for (const ScopedAction &a : all)
    if (!(range.end.line < a.scope.start.line || range.start.line > a.scope.end.line))
      out.push_back(a.action);
  return out;
}

} // namespace dfl::lsp
