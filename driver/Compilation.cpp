#include "driver/Compilation.h"

#include "driver/HtmlReport.h"
#include "driver/Plots.h"

#include "support/FiniteJson.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "model/HardwareAdvice.h"
#include "model/ScheduleWriter.h"
#include "scheduler/analysis/Evaluation.h"
#include "scheduler/analysis/Report.h"
#include "scheduler/embedding/IntrinsicUnits.h"
#include "scheduler/kapla/SolverReport.h"
#include "scheduler/graph/WrittenSchedule.h"
#include "support/Check.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace dfl::driver {
namespace {

/// The path of `target` as an import written in a file in `dir`.
std::string importPath(const std::string &target, const std::string &dir) {
  std::error_code ec;
  fs::path rel = fs::relative(fs::absolute(target), fs::absolute(dir), ec);
  return ec || rel.empty() ? fs::absolute(target).string() : rel.string();
}

/// The input `output` is (the same file, following symbolic links, compared by
/// device and inode), or "".
std::string inputAt(const std::string &output, const SourceManager &sm) {
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0)
    return "";
  for (uint32_t id = 1; id <= sm.bufferCount(); ++id) {
    struct stat in {};
    if (::stat(sm.path(id).c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      return sm.path(id);
  }
  return "";
}

/// A --max-latency bound in cycles at the hardware's clock.
double constraintCycles(const LatencyBound &b, const Hardware &hw) { return b.value * (b.seconds ? hw.frequencyHz : 1); }

/// pareto.json: the energy-latency front of the whole schedules the solves evaluated.
std::string paretoJson(const Model &model, const Solution &solution, const DriverOptions &o) {
  const Schedule &chosen = solution.schedule;
  const Network &net = networkOf(model, chosen);
  const Hardware &hw = hardwareOf(model, chosen);
  nlohmann::ordered_json solved = nlohmann::ordered_json::array();
  for (Objective obj : solution.stats.objectivesSolved)
    solved.push_back(objectiveName(obj));
  nlohmann::ordered_json front = nlohmann::ordered_json::array();
  for (const Alternative &a : energyLatencyFront(solution.alternatives)) {
    nlohmann::ordered_json segments = nlohmann::ordered_json::array();
    for (const Segment &seg : segmentsOf(a.schedule, net.layers.size())) {
      nlohmann::ordered_json layers = nlohmann::ordered_json::array();
      for (int l : seg.layers)
        layers.push_back(net.layers[static_cast<size_t>(l)].name);
      segments.push_back({{"layers", layers}, {"pipelined", seg.pipelined}});
    }
    front.push_back({{"energy_pj", a.energyPj},
                     {"latency_cycles", a.latencyCycles},
                     {"latency_seconds", a.latencyCycles / hw.frequencyHz},
                     {"found_by", objectiveName(a.foundBy)},
                     {"chosen", a.energyPj == solution.result.energyPj &&
                                    a.latencyCycles == solution.result.latencyCycles},
                     {"segments", segments}});
  }
  nlohmann::ordered_json out = {{"network", net.name},
                                {"hardware", hw.name},
                                {"batch", net.batch},
                                {"objective", o.objective},
                                {"pipelining", o.pipelining},
                                {"objectives_solved", solved},
                                {"alternatives_evaluated", solution.stats.alternativesEvaluated},
                                {"units", {{"energy", "pJ"}, {"latency", "cycles"}}},
                                {"front", front}};
  return dumpReport(out);
}

/// report.json: `dflc check --format json`'s report (`checked`) plus the
/// solver's statistics and the plots written beside it.
std::string reportJson(const std::string &checked, const Solution &solution, const DriverOptions &o,
                       const std::vector<OutputFile> &plots, const Model &model) {
  nlohmann::ordered_json report = nlohmann::ordered_json::parse(checked);
  const SolverStats &s = solution.stats;
  report["solver"] = {{"name", o.solver},
                      {"objective", o.objective},
                      {"candidates", s.candidates},
                      {"rejected", s.rejected},
                      {"top_k", o.topK},
                      {"segments",
                       {{"candidates", s.interLayer.candidates},
                        {"pruned_invalid", s.interLayer.prunedInvalid},
                        {"pruned_buffer", s.interLayer.prunedBuffer},
                        {"pruned_pareto", s.interLayer.prunedPareto},
                        {"pruned_bound", s.interLayer.prunedBound},
                        {"skipped_by_estimate", s.interLayer.skippedByEstimate},
                        {"chains_solved", s.interLayer.chains},
                        {"spatial_segments_solved", s.interLayer.segmentsSolved},
                        {"temporal_reserved", s.interLayer.temporalReserved},
                        {"reserve_solves", s.interLayer.reserveSolves},
                        {"chunk_solves", s.interLayer.chunkSolves}}}};
  // Only when asked for, like the limit: other reports stay as they were.
  if (!o.pipelining)
    report["solver"]["pipelining"] = false;
  if (o.maxLatency)
    report["solver"]["max_latency_cycles"] = constraintCycles(*o.maxLatency, hardwareOf(model, solution.schedule));
  if (o.maxEnergyPj)
    report["solver"]["max_energy_pj"] = *o.maxEnergyPj;
  if (o.gapPercent > 0)
    report["solver"]["gap_tolerance"] = o.gapPercent / 100;
  if (s.objectivesSolved.size() > 1) {
    for (Objective obj : s.objectivesSolved)
      report["solver"]["objectives_solved"].push_back(objectiveName(obj));
    report["solver"]["alternatives_evaluated"] = s.alternativesEvaluated;
  }
  const Network &net = networkOf(model, solution.schedule);
  report["solver"]["segment_choices"] = segmentChoicesJson(net, solution.segmentCosts);
  report["solver"]["chains"] = chainsJson(net, solution, objectiveOf(o.objective), kChainsShown);
  // The exact search's verdict per layer alone: proved, or the gap to its best lower bound.
  for (const ExactLayer &e : s.exactLayers)
    report["solver"]["exact"].push_back({{"layer", net.layers[static_cast<size_t>(e.layer)].name},
                                         {"proved", e.proved},
                                         {"energy_pj", e.energyPj},
                                         {"lower_bound_pj", e.lowerBoundPj},
                                         {"gap", e.energyPj / e.lowerBoundPj - 1}});
  if (s.limit != SolveLimit::None) {   // only then: unlimited reports stay as they were
    report["solver"]["status"] = "limit";
    report["solver"]["limit"] = solveLimitName(s.limit);
    report["solver"]["limited_layers"] = s.limitedLayers;
  }
  report["plots"] = nlohmann::ordered_json::array();
  for (const OutputFile &p : plots)
    report["plots"].push_back(p.path);
  return dumpReport(report);
}

/// The constraints as given: "--max-latency 2ms (1000000 cycles) and --max-energy 1mJ".
std::string constraintsText(const DriverOptions &o, const Hardware &hw) {
  std::vector<std::string> parts;
  if (o.maxLatency)
    parts.push_back("--max-latency " + o.maxLatency->text +
                    (o.maxLatency->seconds ? " (" + formatFixed(constraintCycles(*o.maxLatency, hw), 0) +
                                                 " cycles at " + formatTrimmed(hw.frequencyHz / 1e6, 3) + " MHz)"
                                           : ""));
  if (o.maxEnergyPj)
    parts.push_back("--max-energy " + formatEnergy(*o.maxEnergyPj));
  return joinList(parts, ", ", " and ");
}

} // namespace

Compilation::Compilation(DriverOptions options) : options_(std::move(options)) {
  diags_.setErrorLimit(options_.errorLimit);
}

const char *Compilation::stageName(Stage s) {
  static const char *const names[] = {"none", "load", "analyze", "check", "select", "solve", "write"};
  return names[static_cast<int>(s)];
}

void Compilation::enter(Stage needed, const char *stage) {
  DFLC_CHECK(stage_ == needed) << "the driver's " << stage << " stage needs the " << stageName(needed)
                               << " stage just before it, but the last stage run was " << stageName(stage_);
}

bool Compilation::load() {
  enter(Stage::Created, "load");
  PassTimer::Scope time(timer_, "load");
  LoadOptions lo{options_.includes, options_.openBuffers};
  if (options_.stdlibRoot)   // a sandbox (the fuzzer): nothing else
    lo.searchRoots.push_back(*options_.stdlibRoot);
  else   // -I dirs first (in LoadOptions), then DFLC_PATH, then the stdlib next to the binary
    appendDefaultSearchRoots(lo.searchRoots);
  files_ = loadFiles(options_.files, lo, sm_, diags_);
  stage_ = Stage::Loaded;
  return !diags_.hasErrors();
}

bool Compilation::parse() {
  enter(Stage::Created, "parse");
  PassTimer::Scope time(timer_, "parse");
  for (const std::string &path : options_.files) {
    std::string error;
    auto id = sm_.loadFile(path, error);
    files_.roots.push_back(id.value_or(0));
    if (!id) {
      diags_.report({}, diag::err_file_unreadable) << path << error;
      continue;
    }
    if (auto file = parseFile(*id, sm_, diags_))
      files_.files.push_back(std::move(*file));
  }
  stage_ = Stage::Loaded;
  return !diags_.hasErrors();
}

bool Compilation::analyze() {
  enter(Stage::Loaded, "analyze");
  if (options_.debugSkipAnalysis)
    return true;   // the stage is not entered: the next one's check fails (DriverOptions.h)
  {
    PassTimer::Scope time(timer_, "analyze");
    model_ = dfl::analyze(files_.files, diags_, AnalyzeOptions{options_.train, options_.batch});
  }
  stage_ = Stage::Analyzed;
  if (diags_.hasErrors())
    return false;
  embedUnits();
  return true;
}

void Compilation::embedUnits() {
  // The intrinsic-embedding stage: its table is what the check, the solver
  // and the report read, bounded by work so that it is the same on any load.
  PassTimer::Scope time(timer_, "embed-units");
  embedIntrinsicUnits(model_);
}

bool Compilation::inFiles(const SourceRange &range) const {
  return std::find(files_.roots.begin(), files_.roots.end(), range.begin.file) != files_.roots.end();
}

void Compilation::adviseOnHardware(bool hardwareOnly) {
  enter(Stage::Analyzed, "advise");
  auto declared = [&](const auto &d) { return inFiles(d.range); };
  auto any = [&](const auto &decls) { return std::any_of(decls.begin(), decls.end(), declared); };
  // Beside a network or a schedule the template is context, not the subject.
  if (hardwareOnly && (any(model_.networks) || any(model_.schedules) || any(model_.dsaSchedules)))
    return;
  for (const Hardware &hw : model_.hardware)
    if (!hardwareOnly || declared(hw))
      dfl::adviseOnHardware(hw, diags_);
}

bool Compilation::checkSchedules() {
  enter(Stage::Analyzed, "check");
  PassTimer::Scope time(timer_, "check");
  // E0820 only if no FILE declares a schedule (an imported one is context).
  const std::vector<uint32_t> &roots = files_.roots;
  auto declared = [&](const auto &s) { return inFiles(s.range); };
  bool any = std::any_of(model_.schedules.begin(), model_.schedules.end(), declared) ||
             std::any_of(model_.dsaSchedules.begin(), model_.dsaSchedules.end(), declared);
  if (!any && options_.requireSchedule)
    diags_.report({}, diag::err_no_schedule) << joinList(options_.files, ", ", " and ");
  checked_ = dfl::checkSchedules(model_, roots, diags_);
  if (!diags_.hasErrors())   // sema's errors leave a DSA schedule incomplete
    for (size_t i = 0; i < model_.dsaSchedules.size(); ++i)
      if (declared(model_.dsaSchedules[i]))
        if (auto c = checkDsaSchedule(model_.dsaSchedules[i]))
          checkedDsa_.emplace_back(i, std::move(*c));
  stage_ = Stage::Checked;
  return !diags_.hasErrors();
}

bool Compilation::check(const CmPlacementOptions &options) {
  if (stage_ == Stage::Analyzed)
    adviseOnHardware(true);
  if (stage_ == Stage::Analyzed && targetsCm() && model_.networks.size() == 1)
    return placeOnCm(options) && controlCm(false, 1);
  return checkSchedules();
}

bool Compilation::selectPair() {
  enter(Stage::Checked, "select");
  if (checked_.empty() && model_.dsaSchedules.size() == 2) {   // two DSA schedules (each checked valid)
    const DsaSchedule &a = model_.dsaSchedules[0], &b = model_.dsaSchedules[1];
    if (a.network == b.network && a.hardware == b.hardware)
      return checkedDsa_.size() == 2;
    auto what = [&](const DsaSchedule &s) {
      return model_.networks[static_cast<size_t>(s.network)].name + " on " +
             model_.dsaHardware[static_cast<size_t>(s.hardware)].name;
    };
    diags_.report(b.range, diag::err_diff_pair) << what(a) << what(b);
    return false;
  }
  if (checked_.size() != 2) {
    diags_.report({}, diag::err_run_schedule_count) << checked_.size() + model_.dsaSchedules.size() << "diff"
                                                    << "compares two, one in each FILE";
    return false;
  }
  const Schedule &a = model_.schedules[static_cast<size_t>(checked_[0].schedule)];
  const Schedule &b = model_.schedules[static_cast<size_t>(checked_[1].schedule)];
  if (a.network != b.network || a.hardware != b.hardware) {
    auto what = [&](const Schedule &s) { return networkOf(model_, s).name + " on " + hardwareOf(model_, s).name; };
    diags_.report(b.range, diag::err_diff_pair) << what(a) << what(b);
    return false;
  }
  return true;
}

bool Compilation::embed(const EmbeddingOptions &options) {
  enter(Stage::Analyzed, "embed");
  PassTimer::Scope time(timer_, "embed");
  if (model_.intrinsics.empty())
    diags_.report({}, diag::err_no_intrinsic) << joinList(options_.files, ", ", " and ");
  for (size_t n = 0; n < model_.networks.size(); ++n)
    for (size_t l = 0; l < model_.networks[n].layers.size(); ++l) {
      const Layer &layer = model_.networks[n].layers[l];
      if (layer.nest.statement != Statement::Mac)
        continue;   // pools, sums: nothing to embed (listed by the report)
      for (size_t i = 0; i < model_.intrinsics.size(); ++i) {
        const Intrinsic &in = model_.intrinsics[i];
        LayerEmbedding e{n, l, i, embedIntrinsic(layer.nest, in.nest, options)};
        using Status = EmbeddingResult::Status;
        if (e.result.status == Status::Infeasible || e.result.status == Status::Unsupported)
          diags_.report(layer.range, diag::err_intrinsic_not_embeddable)
              .note(in.range, diag::note_intrinsic_declared, in.name)
              << in.name << layer.name << e.result.reason;
        if (e.result.hitLimit)
          diags_.report(layer.range, diag::warn_embedding_limit)
                  .note(in.range, diag::note_intrinsic_declared, in.name)
              << in.name << layer.name
              << (e.result.timeLimitHit ? "the time limit (" + std::to_string(options.timeLimit->count()) + " ms)"
                                        : "its work limit (" + std::to_string(e.result.nodeLimit) + " nodes or " +
                                              std::to_string(options.failureLimit) + " failures per model)")
              << e.result.stats.nodes
              << (e.result.candidates.empty() ? "no embedding found" : "the best of those found is kept");
        embeddings_.push_back(std::move(e));
      }
    }
  return !diags_.hasErrors();
}

bool Compilation::selectSchedule() {
  enter(Stage::Analyzed, "select");
  PassTimer::Scope time(timer_, "select");
  stage_ = Stage::Selected;
  // The schedule in the inputs, or a new one for their only network and hardware.
  if (model_.schedules.size() > 1) {
    diags_.report(model_.schedules[1].range, diag::err_compile_ambiguous)
        << "the inputs hold " + std::to_string(model_.schedules.size()) + " schedules; give one";
    return false;
  }
  if (model_.schedules.empty() && (model_.networks.size() != 1 || model_.hardware.size() != 1)) {
    diags_.report({}, diag::err_compile_ambiguous)
        << "the inputs declare " + std::to_string(model_.networks.size()) + " networks and " +
               std::to_string(model_.hardware.size()) +
               " hardware templates; give one of each (or a schedule naming them)";
    return false;
  }
  Schedule s;
  s.network = 0;
  s.hardware = 0;
  selected_ = model_.schedules.empty() ? s : model_.schedules[0];
  // Sema resolves a schedule's names or reports an error, which stops before here.
  DFLC_CHECK(selected_->network >= 0 && selected_->hardware >= 0)
      << "a schedule without a network or hardware passed analysis without errors";
  if (!model_.schedules.empty()) {
    // A FILE that declares networks (or hardware) of which the schedule names
    // none is not compiled: an error, not a silent substitution (docs/cli.md).
    auto unused = [&](const auto &decls, int selected, const char *kind) {
      for (size_t f = 0; f < files_.roots.size(); ++f) {
        auto in = [&](const auto &d) { return d.range.begin.file == files_.roots[f] && files_.roots[f] != 0; };
        auto first = std::find_if(decls.begin(), decls.end(), in);
        if (first == decls.end() || in(decls[static_cast<size_t>(selected)]))
          continue;
        diags_.report(first->nameRange, diag::err_input_not_compiled)
                .note(selected_->range, diag::note_schedule_here)
            << kind << first->name << sm_.path(files_.roots[f]) << decls[static_cast<size_t>(selected)].name;
      }
    };
    unused(model_.networks, selected_->network, "network");
    unused(model_.hardware, selected_->hardware, "hardware");
    if (diags_.hasErrors())
      return false;
  }
  // The directives the user wrote must be valid on their own.
  const ScheduleResult checked = analyzeSchedule(model_, *selected_);
  reportIssues(checked.issues, diags_);
  reportIssues(checked.warnings, diags_);
  return !diags_.hasErrors();
}

const Schedule &Compilation::selected() const {
  DFLC_CHECK(selected_) << "no schedule was selected";
  return *selected_;
}

const Solution &Compilation::solution() const {
  DFLC_CHECK(solution_) << "no solution: solve() did not succeed";
  return *solution_;
}

bool Compilation::solve(const std::function<void(size_t, size_t)> &progress) {
  enter(Stage::Selected, "solve");
  DFLC_CHECK(selected_ && !diags_.hasErrors()) << "solve() after a failed selectSchedule()";
  PassTimer::Scope time(timer_, "solve");
  stage_ = Stage::Solved;
  auto solver = makeSolver(options_.solver);
  DFLC_CHECK(solver) << "solver '" << options_.solver << "' was not validated";
  SolverOptions so;
  so.objective = objectiveOf(options_.objective);
  so.topK = options_.topK;
  so.gap = options_.gapPercent / 100;
  so.progress = progress;
  so.pipelining = options_.pipelining;
  so.maxEnergyPj = options_.maxEnergyPj;
  const Hardware &hw = model_.hardware[selected_->hardware];
  if (options_.maxLatency)
    so.maxLatencyCycles = constraintCycles(*options_.maxLatency, hw);
  so.keepAlternatives = options_.pareto;
  so.threads = options_.solveThreads;
  if (options_.timeLimitSeconds)
    so.budget.deadline = SolveBudget::Clock::now() + std::chrono::duration_cast<SolveBudget::Clock::duration>(
                                                         std::chrono::duration<double>(*options_.timeLimitSeconds));
  SolveFailure failure;
  solution_ = solver->solve(model_, *selected_, so, failure);
  const Network &net = model_.networks[selected_->network];
  if (!solution_) {
    DFLC_CHECK(failure.layer >= 0 && static_cast<size_t>(failure.layer) < net.layers.size())
        << "the solver failed without naming a layer of " << net.name << " (" << failure.describe() << ")";
    const Layer &l = net.layers[failure.layer];
    // At the directive that rules the completions out, where there is one.
    if (failure.directive.valid())
      (diags_.report(failure.directive, diag::err_no_valid_schedule) << l.name << failure.describe())
          .noteArgs(l.nameRange, diag::note_defined_here, {l.name});
    else
      diags_.report(l.nameRange, diag::err_no_valid_schedule) << l.name << failure.describe();
    return false;
  }
  reportIssues(solution_->result.issues, diags_);
  reportIssues(solution_->result.warnings, diags_);
  if (solution_->stats.status == SolveStatus::Unmet) {
    const ScheduleResult &r = solution_->result;
    diags_.report({}, diag::err_constraint_unmet)
        << constraintsText(options_, hw) << std::to_string(solution_->stats.alternativesEvaluated) << formatEnergy(r.energyPj)
        << formatFixed(r.latencyCycles, 0) + " cycles (" + formatTrimmed(r.latencyCycles / hw.frequencyHz * 1e3, 3) +
               " ms)";
    return false;
  }
  if (solution_->result.valid && solution_->result.complete)
    return true;
  // A segment the user wrote can be impossible to satisfy (too little buffer
  // for its intermediates, say): the diagnostics point at it. Without user
  // segments an invalid result is our bug.
  if (!selected_->segments.empty())
    return false;
  solution_.reset();
  throw InternalError("the solver returned an invalid schedule (solver " + options_.solver + ", " + net.name +
                      " on " + model_.hardware[selected_->hardware].name + ")");
}

bool Compilation::targetsCm() const {
  return model_.cmHardware.size() == 1 && model_.hardware.empty() && model_.schedules.empty();
}

const CmMapping &Compilation::cmMapping() const {
  DFLC_CHECK(cmMapping_) << "no CM mapping: placeOnCm() did not succeed";
  return *cmMapping_;
}

bool Compilation::placeOnCm(const CmPlacementOptions &options) {
  enter(Stage::Analyzed, "place");
  PassTimer::Scope time(timer_, "place");
  stage_ = Stage::Checked;   // what writeFiles() follows
  const CmHardware &hw = model_.cmHardware[0];
  if (model_.networks.size() != 1) {
    diags_.report({}, diag::err_compile_ambiguous)
        << "the inputs declare " + std::to_string(model_.networks.size()) + " networks; give one";
    return false;
  }
  const Network &net = model_.networks[0];
  auto p = partitionForCm(net, hw, diags_);
  if (!p)
    return false;
  if (p->tiles.size() > static_cast<size_t>(hw.cores)) {
    std::vector<std::string> tiled;   // the partitions that take more than one core
    for (const CmPartition &part : p->partitions)
      if (part.tiles() > 1)
        tiled.push_back("'" + net.layers[static_cast<size_t>(part.crossbarLayer)].name + "' " +
                        std::to_string(part.rows) + " x " + std::to_string(part.cols) + " on " +
                        std::to_string(part.rowTiles) + " x " + std::to_string(part.colTiles));
    diags_.report(net.nameRange, diag::err_cm_cores_needed).note(hw.coresRange, diag::note_cm_cores_here)
        << net.name << p->tiles.size() << hw.name << hw.cores
        << std::to_string(p->partitions.size()) + " partitions" +
               (tiled.empty() ? "" : ", of which " + joinList(tiled, ", ", " and ")) + " (crossbar " +
               std::to_string(hw.xbarRows) + " x " + std::to_string(hw.xbarCols) + ")";
    return false;
  }
  CmMapping m{std::move(*p), {}, options.objective};
  m.placement = placeOnCores(m.partitioning, hw, options);
  using Status = CmPlacement::Status;
  if (m.placement.status == Status::Infeasible || m.placement.status == Status::NoneWithinLimit) {
    std::string why;
    auto name = [&](int t) {
      if (t < 0)
        return std::string(t == CmEdge::kGcuInput ? "the GCU input (core " + std::to_string(hw.inputCore) + ")"
                                                  : "the GCU output (core " + std::to_string(hw.outputCore) + ")");
      const CmTile &tile = m.partitioning.tiles[static_cast<size_t>(t)];
      const CmPartition &part = m.partitioning.partitions[static_cast<size_t>(tile.partition)];
      return "'" + net.layers[static_cast<size_t>(part.layers.front())].name + "'" +
             (part.tiles() > 1 ? " tile " + std::to_string(tile.rowBlock) + "," + std::to_string(tile.colBlock) : "");
    };
    if (m.placement.status == Status::NoneWithinLimit && m.placement.greedy)
      why = "the greedy placement (the exact model's " + std::to_string(m.placement.modelEntries) +
            " table entries are above its bound of " + std::to_string(options.exactModelEntries) +
            ") leaves an edge without a route";
    else if (m.placement.status == Status::NoneWithinLimit)
      why = "the search stopped at " +
            (m.placement.timeLimitHit ? std::string("the time limit")
                                      : "its work limit (" + std::to_string(m.placement.nodeLimit) + " nodes or " +
                                            std::to_string(options.failureLimit) + " failures)") +
            " after " + std::to_string(m.placement.nodes) + " nodes, before finding a placement";
    else if (m.placement.blockingEdge >= 0) {
      const CmEdge &e = m.partitioning.edges[static_cast<size_t>(m.placement.blockingEdge)];
      why = "the edge from " + name(e.from) + " to " + name(e.to) + " (" + std::to_string(e.words) +
            " words per image) has no route once the " + std::to_string(m.placement.blockingEdge) +
            " edges before it are placed";
    } else
      why = "no assignment of " + std::to_string(m.partitioning.tiles.size()) + " tiles to " + std::to_string(hw.cores) +
            " cores routes them all";
    diags_.report(net.nameRange, diag::err_cm_no_route).note(hw.nameRange, diag::note_cm_hardware_here, hw.name)
        << net.name << hw.name << why;
    return false;
  }
  cmMapping_ = std::move(m);
  return true;
}

bool Compilation::targetsDsa() const {
  return model_.dsaHardware.size() == 1 && model_.hardware.empty() && model_.cmHardware.empty() &&
         model_.schedules.empty();
}

std::string Compilation::dsaNetworkError(const Network &net) {
  if (net.layers.empty())
    return "it has no layers";
  for (const Layer &l : net.layers)
    if (!l.forwardOf.empty())
      return "layer '" + l.name + "' is a backward layer; GraphTurbo schedules inference graphs (drop --train)";
  return "";
}

std::optional<graph::DsaComparison> Compilation::checkDsaSchedule(const DsaSchedule &s) {
  const Network &net = model_.networks[static_cast<size_t>(s.network)];
  const DsaHardware &hw = model_.dsaHardware[static_cast<size_t>(s.hardware)];
  if (std::string why = dsaNetworkError(net); !why.empty()) {
    diags_.report(net.nameRange, diag::err_dsa_network).note(hw.nameRange, diag::note_cm_hardware_here, hw.name)
        << net.name << hw.name << why;
    return std::nullopt;
  }
  std::vector<Issue> issues;
  auto c = graph::checkOnDsa(net, hw, s, issues);
  reportIssues(issues, diags_);
  return c;
}

std::string Compilation::dsaScheduleText() const {
  const graph::DsaComparison &c = dsaSchedules();
  const Network &net = model_.networks[0];
  const DsaHardware &hw = model_.dsaHardware[0];
  std::vector<std::string> imports;
  for (const std::string &f : options_.files)
    imports.push_back(importPath(f, options_.outDir));
  return writeDsaSchedule(net, hw, graph::scheduleOf(c.graphTurbo), imports,
                          "The GraphTurbo schedule of " + net.name + " on " + hw.name + " at batch " +
                              std::to_string(net.batch) + ", written by dflc " + kVersion + ".\n" +
                              "`dflc check --batch " + std::to_string(net.batch) +
                              " schedule.dfl` rebuilds the plan from it with the same numbers.");
}

const graph::DsaComparison &Compilation::dsaSchedules() const {
  DFLC_CHECK(dsaSchedules_) << "no DSA schedules: scheduleOnDsa() did not succeed";
  return *dsaSchedules_;
}

bool Compilation::scheduleOnDsa() {
  enter(Stage::Analyzed, "schedule");
  PassTimer::Scope time(timer_, "schedule");
  stage_ = Stage::Checked;   // what writeFiles() follows
  const DsaHardware &hw = model_.dsaHardware[0];
  if (model_.networks.size() != 1) {
    diags_.report({}, diag::err_compile_ambiguous)
        << "the inputs declare " + std::to_string(model_.networks.size()) + " networks; give one";
    return false;
  }
  if (model_.dsaSchedules.size() > 1) {
    diags_.report(model_.dsaSchedules[1].range, diag::err_compile_ambiguous)
        << "the inputs hold " + std::to_string(model_.dsaSchedules.size()) + " schedules; give one";
    return false;
  }
  if (!model_.dsaSchedules.empty()) {   // the written schedule, completed by GraphTurbo's rules
    dsaSchedules_ = checkDsaSchedule(model_.dsaSchedules[0]);
    return dsaSchedules_.has_value() && !diags_.hasErrors();
  }
  const Network &net = model_.networks[0];
  if (std::string why = dsaNetworkError(net); !why.empty()) {
    diags_.report(net.nameRange, diag::err_dsa_network).note(hw.nameRange, diag::note_cm_hardware_here, hw.name)
        << net.name << hw.name << why;
    return false;
  }
  dsaSchedules_ = graph::scheduleOnDsa(net, hw);
  return true;
}

bool Compilation::writeOutputs(const std::vector<OutputFile> &extra) {
  enter(Stage::Solved, "write");
  std::vector<OutputFile> files = outputs();
  files.insert(files.end(), extra.begin(), extra.end());
  stage_ = Stage::Written;
  return write(files);
}

const std::vector<OutputFile> &Compilation::outputs() {
  DFLC_CHECK(solution_) << "outputs() without a solution";
  if (outputs_)
    return *outputs_;
  const DriverOptions &o = options_;
  std::vector<std::string> imports;
  for (const std::string &f : o.files)
    imports.push_back(importPath(f, o.outDir));
  const Schedule &s = solution_->schedule;
  std::string header = "The complete schedule of " + model_.networks[s.network].name + " on " +
                       model_.hardware[s.hardware].name + ", written by dflc " + kVersion + " (solver " + o.solver +
                       ", objective " + o.objective + (o.pipelining ? "" : ", layer by layer") +
                       (o.maxLatency || o.maxEnergyPj ? ", within " + constraintsText(o, model_.hardware[s.hardware]) : "") +
                       (o.train ? ", training: forward and backward layers" : "") +
                       ").\nCheck it with: dflc check " + (o.train ? "--train " : "") +
                       (o.batch ? "--batch " + std::to_string(*o.batch) + " " : "") + "schedule.dfl";
  std::string checked = scheduleReportJson(model_, s, solution_->result);
  std::vector<OutputFile> plots = o.plots ? reportPlots(evaluationOf(model_, s, solution_->result)) : std::vector<OutputFile>{};
  if (o.plots) {   // the whole schedules the solver evaluated (with --pareto, under every objective)
    std::vector<TradeoffPoint> all, front;
    for (const Alternative &a : solution_->alternatives)
      all.push_back({a.energyPj, a.latencyCycles});
    for (const Alternative &a : energyLatencyFront(solution_->alternatives))
      front.push_back({a.energyPj, a.latencyCycles});
    plots.push_back(tradeoffPlot(all, front, {solution_->result.energyPj, solution_->result.latencyCycles},
                                 model_.networks[s.network].name + " on " + model_.hardware[s.hardware].name));
  }
  std::vector<OutputFile> outputs = {{"schedule.dfl", writeSchedule(model_, s, imports, header)},
                                     {"report.json", reportJson(checked, *solution_, o, plots, model_)},
                                     {"report.html", reportHtml(htmlReportOf(model_, *solution_, o, imports, plots))}};
  if (o.pareto)
    outputs.push_back({"pareto.json", paretoJson(model_, *solution_, o)});
  outputs.insert(outputs.end(), plots.begin(), plots.end());
  return *(outputs_ = std::move(outputs));
}

bool Compilation::writeFiles(const std::vector<OutputFile> &files) {
  enter(Stage::Checked, "write");
  stage_ = Stage::Written;
  return write(files);
}

bool Compilation::openOutputs() {
  if (!out_)
    out_ = OutputDir::open(options_.outDir, OutputDir::Lock::Exclusive, outputError_);
  return out_.has_value();
}

bool Compilation::write(const std::vector<OutputFile> &files) {
  PassTimer::Scope time(timer_, "write");
  // Before anything is written: an output over an input would make the next
  // run read what this one wrote (a schedule importing itself).
  for (const OutputFile &f : files) {
    std::string path = (fs::path(options_.outDir) / f.path).string();
    if (std::string input = inputAt(path, sm_); !input.empty()) {
      outputError_ = {path, "it is the input '" + input + "'; choose another -o"};
      return false;
    }
  }
  if (!openOutputs())
    return false;
  if (auto error = out_->write(files)) {
    outputError_ = *error;
    return false;
  }
  for (const OutputFile &f : files)
    outputPaths_.push_back(out_->shown(f.path));
  return true;
}

} // namespace dfl::driver
