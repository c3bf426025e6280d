#include "lsp/FillIn.h"

#include "lsp/Compilation.h"
#include "lsp/Positions.h"

#include "driver/DriverOptions.h"

#include "model/DflSyntax.h"
#include "model/ScheduleWriter.h"
#include "scheduler/kapla/Solver.h"
#include "support/Check.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace dfl::lsp {
namespace {


/// The edits of one action in the root document, by offset: text inserted or
/// replacing a range; insertions at one place are joined in the order made.
class Edits {
public:
  /// `lines` (whole lines, each ending in a line break) before the construct
  /// starting at `offset`, a block or a closing brace nested `depth` deep: at
  /// the start of its line if only white space precedes it there, else after a
  /// line break, the construct then indented anew.
  void insertBefore(const std::string &text, size_t offset, const std::string &lines, int depth) {
    size_t lineStart = offset;
    while (lineStart > 0 && (text[lineStart - 1] == ' ' || text[lineStart - 1] == '\t'))
      --lineStart;
    if (lineStart == 0 || text[lineStart - 1] == '\n' || text[lineStart - 1] == '\r')
      add(lineStart, lineStart, lines);
    else
      add(offset, offset, "\n" + lines + syntax::indentation(depth));
  }
  void replace(SourceRange r, const std::string &with) { add(r.begin.offset, r.end.offset, with); }

  std::vector<TextEdit> toLsp(const SourceManager &sm, uint32_t file) const {
    std::vector<TextEdit> out;
    for (const auto &[begin, e] : edits_) {
      SourceLoc b{file, static_cast<uint32_t>(begin)}, end{file, static_cast<uint32_t>(e.first)};
      out.push_back({{toLspPosition(sm, b), toLspPosition(sm, end)}, e.second});
    }
    return out;
  }

private:
  void add(size_t begin, size_t end, const std::string &text) {
    auto [it, inserted] = edits_.try_emplace(begin, end, "");
    it->second.first = std::max(it->second.first, end);
    it->second.second += text;
  }
  std::map<size_t, std::pair<size_t, std::string>> edits_;   // begin -> (end, new text)
};

/// The offset of the closing brace of a block whose range ends with it.
size_t closingBrace(SourceRange block) { return block.end.offset - 1; }

/// What turns a schedule as written (`given`, in the root document of `c`)
/// into the solver's complete one (`solved`), construct by construct, from the
/// model: the level blocks, layer blocks and segments the solver added are
/// printed by model/ScheduleWriter.h and inserted where they belong among the
/// written ones (before the next written one in the solver's order, else
/// before the enclosing block's closing brace); a level block written without
/// directives is replaced. What was written stays as written, comments too.
class ScheduleEdits {
public:
  ScheduleEdits(const Compilation &c, const Schedule &given, const Schedule &solved)
      : c_(c), text_(c.sm.text(c.root)), given_(given), solved_(solved), net_(c.model.networks[given.network]),
        hw_(c.model.hardware[given.hardware]) {}

  /// The edits of the whole schedule.
  std::vector<TextEdit> whole() const {
    Edits edits;
    addSegments(edits);
    for (size_t i = 0; i < solved_.layers.size(); ++i) {
      const LayerScheduleModel &ls = solved_.layers[i];
      if (const LayerScheduleModel *written = writtenLayer(ls.layer)) {
        addLevels(*written, ls, edits);
        continue;
      }
      size_t at = closingBrace(given_.range);
      int depth = syntax::kScheduleDepth;
      for (size_t j = i + 1; j < solved_.layers.size(); ++j)
        if (const LayerScheduleModel *next = writtenLayer(solved_.layers[j].layer)) {
          at = next->range.begin.offset;
          depth = syntax::kScheduleItemDepth;
          break;
        }
      edits.insertBefore(text_, at, printLayerBlock(net_, hw_, ls, syntax::kScheduleItemDepth), depth);
    }
    return edits.toLsp(c_.sm, c_.root);
  }

  /// The edits inside the written block of `layer` alone.
  std::vector<TextEdit> layer(int layer) const {
    Edits edits;
    const LayerScheduleModel *written = writtenLayer(layer);
    for (const LayerScheduleModel &ls : solved_.layers)
      if (written && ls.layer == layer)
        addLevels(*written, ls, edits);
    return edits.toLsp(c_.sm, c_.root);
  }

private:
  const LayerScheduleModel *writtenLayer(int layer) const {
    for (const LayerScheduleModel &ls : given_.layers)
      if (ls.layer == layer)
        return &ls;
    return nullptr;
  }

  static const LevelDirectives *writtenLevel(const LayerScheduleModel &written, int level) {
    for (const LevelDirectives &d : written.levels)
      if (d.level == level)
        return &d;
    return nullptr;
  }

  /// The segments the solver chose (it keeps those written), before the first
  /// written item of the schedule, else before its closing brace.
  void addSegments(Edits &edits) const {
    std::set<std::string> written;
    for (const Segment &seg : given_.segments)
      written.insert(printSegment(net_, seg));
    std::string lines;
    for (const Segment &seg : solved_.segments)
      if (std::string line = printSegment(net_, seg); !written.count(line))
        lines += syntax::line(syntax::kScheduleItemDepth, line);
    if (lines.empty())
      return;
    size_t at = closingBrace(given_.range);
    int depth = syntax::kScheduleDepth;
    for (const Segment &seg : given_.segments)
      if (seg.range.valid() && seg.range.begin.offset < at)
        at = seg.range.begin.offset, depth = syntax::kScheduleItemDepth;
    for (const LayerScheduleModel &ls : given_.layers)
      if (ls.range.valid() && ls.range.begin.offset < at)
        at = ls.range.begin.offset, depth = syntax::kScheduleItemDepth;
    edits.insertBefore(text_, at, lines, depth);
  }

  /// The level blocks of `solved` that the written layer block lacks.
  void addLevels(const LayerScheduleModel &written, const LayerScheduleModel &solved, Edits &edits) const {
    const int depth = syntax::kLevelBlockDepth;
    for (size_t i = 0; i < solved.levels.size(); ++i) {
      const LevelDirectives &d = solved.levels[i];
      std::string block = printLevelBlock(hw_, d, depth);
      if (const LevelDirectives *w = writtenLevel(written, d.level)) {
        // Written without directives, the solver filled it in: the block printed
        // replaces it from the level's name to its brace.
        if (printLevelBlock(hw_, *w, depth) != block) {
          size_t indent = syntax::indentation(depth).size();
          edits.replace(w->range, block.substr(indent, block.size() - indent - 1));
        }
        continue;
      }
      size_t at = closingBrace(written.range);
      int before = syntax::kScheduleItemDepth;
      for (size_t j = i + 1; j < solved.levels.size(); ++j)
        if (const LevelDirectives *next = writtenLevel(written, solved.levels[j].level)) {
          at = next->range.begin.offset;
          before = depth;
          break;
        }
      edits.insertBefore(text_, at, block, before);
    }
  }

  const Compilation &c_;
  const std::string &text_;
  const Schedule &given_, &solved_;
  const Network &net_;
  const Hardware &hw_;
};

} // namespace

FillIn::FillIn(SolverFactory makeSolver) : makeSolver_(std::move(makeSolver)) {}

std::vector<CodeAction> FillIn::actions(std::vector<CodeAction> out, const std::shared_ptr<const Compilation> &c,
                                        const std::string &uri, Range range,
                                        const std::shared_ptr<std::atomic<bool>> &cancelled,
                                        const std::string &solverName, const std::string &objective,
                                        double timeLimitSeconds) {
  if (!c->analyzed || !c->rootAst)
    return out;
  std::string cacheKey = std::to_string(c->generation) + "/" + solverName + "/" + objective;
  auto isCancelled = [&] { return stopped_ || (cancelled && *cancelled); };
  std::vector<ScopedAction> all;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (isCancelled())
      return out;
    if (auto it = cache_.find(uri); it != cache_.end() && it->second.first == cacheKey) {
      all = it->second.second;
      break;
    }
    auto it = flights_.find(uri);
    if (it == flights_.end()) {
      // This request solves; identical ones arriving meanwhile wait for it.
      auto flight = std::make_shared<Flight>();
      flight->key = cacheKey;
      flight->generation = c->generation;
      flights_[uri] = flight;
      ++solvesStarted_;
      lock.unlock();
      bool stopped = false;
      try {
        all = solve(*c, uri, *flight, cancelled, solverName, objective, timeLimitSeconds, stopped);
      } catch (...) {
        // Our bug, not a cancellation: the flight ends, then every request waiting for it rethrows.
        lock.lock();
        flight->error = std::current_exception();
        flights_.erase(uri);
        flightEnded_.notify_all();
        throw;
      }
      lock.lock();
      flights_.erase(uri);
      if (!stopped)
        cache_[uri] = {cacheKey, all};
      flightEnded_.notify_all();
      if (stopped)
        return out;   // nothing cached: the next request solves again
      break;
    }
    // One solve per document: wait for the running one, stopping it if it is
    // stale (this request's text or configuration is newer).
    std::shared_ptr<Flight> flight = it->second;
    bool same = flight->key == cacheKey;
    if (flight->generation > c->generation)
      return out;   // this request's text is the stale one
    if (!same)
      flight->stop = true;
    else
      ++flight->waiters;
    flightEnded_.wait_for(lock, std::chrono::milliseconds(20), [&] {
      return isCancelled() || !flights_.count(uri) || flights_.at(uri) != flight;
    });
    if (same)
      --flight->waiters;
    if (same && flight->error)
      std::rethrow_exception(flight->error);
  }
  lock.unlock();
  for (const ScopedAction &a : all)
    if (!(range.end.line < a.scope.start.line || range.start.line > a.scope.end.line))
      out.push_back(a.action);
  return out;
}

void FillIn::stopAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
  for (auto &[uri, flight] : flights_)
    flight->stop = true;
  flightEnded_.notify_all();
}

std::vector<FillIn::ScopedAction> FillIn::solve(const Compilation &c, const std::string &uri, Flight &flight,
                                                const std::shared_ptr<std::atomic<bool>> &cancelled,
                                                const std::string &solverName, const std::string &objective,
                                                double timeLimitSeconds, bool &stopped) {
  std::vector<ScopedAction> all;
  for (const CheckedSchedule &cs : c.checked) {
    const Schedule &s = c.model.schedules[cs.schedule];
    if (s.range.begin.file != c.root || !cs.result.valid || cs.result.complete)
      continue;
    const Network &net = c.model.networks[s.network];
    std::string how = " (solver " + solverName + ", objective " + objective + ")";
    CodeAction whole{"Fill in missing directives" + how, "refactor.rewrite", uri, {}, std::nullopt};
    SolverOptions so;
    so.objective = driver::objectiveOf(objective);
    so.budget.deadline = SolveBudget::Clock::now() + std::chrono::duration_cast<SolveBudget::Clock::duration>(
                                                         std::chrono::duration<double>(timeLimitSeconds));
    // Checked where candidates are scored: stops within a layer. The request
    // that started the solve may be cancelled while others wait for it.
    so.budget.cancel = &flight.stop;
    so.budget.onCandidate = [&](int64_t) {
      if (stopped_ || (cancelled && *cancelled && flight.waiters == 0))
        flight.stop = true;
    };
    SolveFailure failure;
    std::unique_ptr<Solver> solver = makeSolver_ ? makeSolver_(solverName) : makeSolver(solverName);
    DFLC_CHECK(solver) << "no solver '" << solverName << "'";
    std::optional<Solution> solution = solver->solve(c.model, s, so, failure);
    if ((solution ? solution->stats.limit : failure.limit) == SolveLimit::Cancelled) {
      stopped = true;
      return {};
    }
    if (!solution) {
      whole.disabledReason = "no valid schedule" +
                             (failure.layer >= 0 ? " for layer '" + net.layers.at(failure.layer).name + "'" : "") +
                             ": " + failure.describe();
      all.push_back({toLspRange(c.sm, s.range), whole});
      continue;
    }
    if (solution->stats.limit == SolveLimit::Time)
      whole.title += ", the best found within the time limit";
    // From the model: what the solver added, inserted among what was written.
    ScheduleEdits edits(c, s, solution->schedule);
    whole.edits = edits.whole();
    all.push_back({toLspRange(c.sm, s.range), whole});
    // Per layer: a written `layer NAME { ... }` block that is incomplete gets the
    // solver's levels for that layer alone (the same solve: the layers are independent).
    for (const LayerScheduleModel &ls : s.layers) {
      if (ls.layer < 0 || static_cast<size_t>(ls.layer) >= cs.result.layers.size() ||
          cs.result.layers[ls.layer].complete)
        continue;
      std::vector<TextEdit> layerEdits = edits.layer(ls.layer);
      if (layerEdits.empty())
        continue;
      CodeAction one{"Fill in missing directives of layer " + net.layers[ls.layer].name + how, "refactor.rewrite",
                     uri, layerEdits, std::nullopt};
      all.push_back({toLspRange(c.sm, ls.range), one});
    }
  }
  return all;
}

} // namespace dfl::lsp
