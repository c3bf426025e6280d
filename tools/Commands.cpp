#include "tools/Commands.h"

#include "backend/PipelineGantt.h"
#include "backend/PipelineSim.h"
#include "backend/SimReport.h"
#include "backend/cm/CmSim.h"
#include "backend/polyhedral/Isl.h"
#include "backend/Simulator.h"
#include "driver/Compilation.h"
#include "frontend/Printer.h"
#include "lsp/LSPServer.h"
#include "model/ModelSummary.h"
#include "scheduler/embedding/EmbeddingTransform.h"
#include "scheduler/analysis/LoopNestView.h"
#include "scheduler/analysis/Report.h"
#include "scheduler/analysis/ScheduleDiff.h"
#include "scheduler/kapla/SolverReport.h"
#include "support/Check.h"
#include "support/ChromeTrace.h"
#include "support/DiagnosticRenderer.h"
#include "support/Format.h"
#include "sweep/Sweep.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dfl::tools {
namespace {

using driver::Compilation;

void printDiagnostics(const CommandLine &o, const SourceManager &sm, const DiagnosticsEngine &diags) {
  const auto &all = diags.diagnostics();
  if (o.format == "json") {
    std::cerr << renderJson(sm, all);
  } else if (o.format == "sarif") {
    std::cerr << renderSarif(sm, all);
  } else {
    bool color = o.color.value_or(isatty(STDERR_FILENO) && !std::getenv("NO_COLOR"));
    renderText(std::cerr, sm, all, color);
    if (std::string s = summaryLine(all); !s.empty())
      std::cerr << s << "\n";
    if (diags.droppedErrors())   // clang says so too: the list above is not all
      std::cerr << "dflc: stopped at --error-limit " << o.driver.errorLimit
                << "; --error-limit 0 shows every error\n";
  }
}

void printDiagnostics(const CommandLine &o, const Compilation &c) {
  printDiagnostics(o, c.sources(), c.diagnostics());
}

/// An output that could not be written (E1401) or an OUT another run holds
/// (E1402), as its diagnostic alone.
void printOutputError(const CommandLine &o, const SourceManager &sm, const driver::OutputError &error) {
  DiagnosticsEngine diags(sm);
  driver::reportOutputError(diags, error);
  printDiagnostics(o, sm, diags);
}

void printOutputError(const CommandLine &o, const Compilation &c) { printOutputError(o, c.sources(), c.outputError()); }

/// A run whose outputs could not be written: its diagnostics, then why not.
int outputsNotWritten(const CommandLine &o, const Compilation &c) {
  printDiagnostics(o, c);
  printOutputError(o, c);
  return kExitInvalid;
}

/// Runs `body` on `c`; an internal error first prints the diagnostics so far
/// (what led to it), then goes on to main().
template <class F> int guarded(const CommandLine &o, const Compilation &c, F body) {
  try {
    return body();
  } catch (const InternalError &) {
    printDiagnostics(o, c);
    throw;
  }
}

int runShow(const CommandLine &o, Compilation &c) {
  if (c.load() && c.analyze() && (!o.loops || c.checkSchedules()) && !o.loops)
    c.adviseOnHardware();
  printDiagnostics(o, c);
  if (c.hasErrors())
    return kExitInvalid;
  const Model &model = c.model();
  if (o.loops) {
    // Partial schedules too: a level not given ends its layer's nest.
    const std::vector<CheckedSchedule> &results = c.checked();
    for (size_t i = 0; i < results.size(); ++i)
      std::cout << (i ? "\n" : "")
                << scheduleLoopsText(model, model.schedules[results[i].schedule], results[i].result);
  } else if (o.json) {
    std::cout << modelSummaryJson(model, &c.sources());
  } else {
    bool first = true;
    for (const Network &n : model.networks)
      std::cout << (first ? "" : "\n") << networkSummaryText(n), first = false;
    for (const Hardware &h : model.hardware)
      std::cout << (first ? "" : "\n") << hardwareSummaryText(h), first = false;
    for (const DsaHardware &h : model.dsaHardware)
      std::cout << (first ? "" : "\n") << dsaHardwareSummaryText(h), first = false;
  }
  return kExitOk;
}

int runDiff(const CommandLine &o, Compilation &c) {
  c.load() && c.analyze() && c.checkSchedules() && c.selectPair();
  printDiagnostics(o, c);
  if (c.hasErrors())
    return kExitInvalid;
  const std::vector<CheckedSchedule> &checked = c.checked();
  const Model &model = c.model();
  if (checked.empty()) {   // two DSA schedules (selectPair)
    const DsaSchedule &a = model.dsaSchedules[0], &b = model.dsaSchedules[1];
    std::cout << graph::dsaDiffText(model.networks[static_cast<size_t>(a.network)],
                                    model.dsaHardware[static_cast<size_t>(a.hardware)], c.checkedDsa()[0].second,
                                    c.sources().path(a.range.begin.file), c.checkedDsa()[1].second,
                                    c.sources().path(b.range.begin.file));
    return kExitOk;
  }
  const Schedule &a = model.schedules[checked[0].schedule], &b = model.schedules[checked[1].schedule];
  std::cout << scheduleDiffText(model, a, checked[0].result, c.sources().path(a.range.begin.file), b,
                                checked[1].result, c.sources().path(b.range.begin.file));
  return kExitOk;
}

int runCheck(const CommandLine &o, Compilation &c) {
  c.load() && c.analyze() && c.check();
  const std::vector<CheckedSchedule> &results = c.checked();
  bool failed = c.hasErrors();
  for (const CheckedSchedule &r : results)
    failed |= !r.result.complete && !o.allowPartial;
  const Model &model = c.model();
  if (o.format == "text") {
    printDiagnostics(o, c);
    if (!c.hasErrors()) {
      for (size_t i = 0; i < results.size(); ++i)
        std::cout << (i ? "\n" : "")
                  << scheduleReportText(model, model.schedules[results[i].schedule], results[i].result);
      for (size_t i = 0; i < c.checkedDsa().size(); ++i) {
        const auto &[k, cmp] = c.checkedDsa()[i];
        const DsaSchedule &s = model.dsaSchedules[k];
        std::cout << (i || !results.empty() ? "\n" : "")
                  << graph::dsaReportText(model.networks[static_cast<size_t>(s.network)],
                                          model.dsaHardware[static_cast<size_t>(s.hardware)], cmp);
      }
      if (c.placedOnCm())
        std::cout << cmPlacementText(model.networks[0], model.cmHardware[0], c.cmMapping());
    }
  } else if (o.format == "sarif") {
    std::cout << renderSarif(c.sources(), c.diagnostics().diagnostics());
  } else {
    nlohmann::ordered_json out = nlohmann::ordered_json::parse(renderJson(c.sources(), c.diagnostics().diagnostics()));
    out["schedules"] = nlohmann::ordered_json::array();
    for (const CheckedSchedule &r : results)
      out["schedules"].push_back(
          nlohmann::ordered_json::parse(scheduleReportJson(model, model.schedules[r.schedule], r.result)));
    if (!model.dsaSchedules.empty()) {   // only then: other reports stay as they were
      out["dsa_schedules"] = nlohmann::ordered_json::array();
      for (const auto &[k, cmp] : c.checkedDsa()) {
        const DsaSchedule &s = model.dsaSchedules[k];
        out["dsa_schedules"].push_back(nlohmann::ordered_json::parse(
            graph::dsaReportJson(model.networks[static_cast<size_t>(s.network)],
                                 model.dsaHardware[static_cast<size_t>(s.hardware)], cmp)));
      }
    }
    std::cout << out.dump(2) << "\n";
  }
  return failed ? kExitInvalid : kExitOk;
}

void printSolverStats(const std::string &solver, const SolverStats &s) {
  std::cout << "solver " << solver << ": " << s.candidates << " candidates evaluated (" << s.rejected
            << " invalid) in " << s.seconds << " s (layers " << s.layerSeconds << " s, segment estimate "
            << s.interLayer.estimateSeconds << " s, short list " << s.interLayer.shortListSeconds << " s); "
            << s.interLayer.candidates << " spatial segment candidates, " << s.interLayer.prunedInvalid
            << " pruned as invalid, " << s.interLayer.prunedPareto << " as not Pareto-optimal, "
            << s.interLayer.prunedBound << " by the lower bound; " << s.interLayer.skippedByEstimate
            << " schemes skipped by their estimate; " << s.interLayer.temporalReserved
            << " temporal segments fit by reserving node buffer (" << s.interLayer.reserveSolves
            << " layer re-solves); " << s.interLayer.splitsTried << " instance splits costed ("
            << s.interLayer.pieceSolves << " piece solves); " << s.interLayer.prunedBuffer
            << " spatial schemes solved short of buffer for their dependences (E0824)\n";
}

/// --pareto's table: pareto.json's front, by latency ascending.
void printFront(const Model &model, const Solution &s) {
  const Hardware &hw = hardwareOf(model, s.schedule);
  const Network &net = networkOf(model, s.schedule);
  std::vector<Alternative> front = energyLatencyFront(s.alternatives);
  std::vector<std::string> solved;
  for (Objective obj : s.stats.objectivesSolved)
    solved.push_back(objectiveName(obj));
  std::cout << "energy-latency front: " << front.size() << " of " << s.stats.alternativesEvaluated
            << " schedules evaluated (objectives " << joinList(solved, ", ", " and ") << ")\n"
            << "     " << padLeft("energy", 12) << "  " << padLeft("latency", 14) << "  " << padLeft("latency", 10)
            << "  " << padLeft("segments", 8) << "  found by\n"
            << "     " << padLeft("[uJ]", 12) << "  " << padLeft("[cycles]", 14) << "  " << padLeft("[ms]", 10) << "\n";
  for (const Alternative &a : front) {
    bool chosen = a.energyPj == s.result.energyPj && a.latencyCycles == s.result.latencyCycles;
    std::cout << (chosen ? "  *  " : "     ") << padLeft(formatFixed(a.energyPj / 1e6, 3), 12) << "  "
              << padLeft(formatFixed(a.latencyCycles, 0), 14) << "  "
              << padLeft(formatFixed(a.latencyCycles / hw.frequencyHz * 1e3, 3), 10) << "  "
              << padLeft(std::to_string(segmentsOf(a.schedule, net.layers.size()).size()), 8) << "  "
              << objectiveName(a.foundBy) << "\n";
  }
  std::cout << "(* the schedule written)\n";
}

/// Runs the schedule to run (dflc sim, dflc compile --sim) in the driver's
/// simulate stage, with progress on a terminal; false after its errors.
bool simulate(const CommandLine &o, Compilation &c) {
  sim::SimOptions so;
  so.seed = o.seed.value_or(1);
  so.layers = o.simLayers;
  so.pipelinesOnly = o.pipelinesOnly;
  so.compileThreads = o.jobs ? static_cast<int>(*o.jobs) : -1;
  if (o.workLimit)
    so.workLimit = *o.workLimit;
  // Progress: on a terminal, one line rewritten per layer; elsewhere, on a
  // long run (docs/simulator.md, "Limits of the kernels"), a line per tenth
  // of its work, which depends on the counts only.
  const bool tty = isatty(STDERR_FILENO);
  auto tenthsShown = std::make_shared<int>(0);
  so.progress = [tty, tenthsShown](const sim::SimProgress &p) {
    if (tty) {
      std::cerr << "\r\033[Kdflc: simulating: " << p.done << "/" << p.todo << " layers"
                << (p.layer.empty() ? "" : " (" + p.layer + ")") << std::flush;
      if (p.done == p.todo)
        std::cerr << "\r\033[K";
      return;
    }
    const int tenths = static_cast<int>(10 * p.work / std::max(p.totalWork, 1.0));
    if (p.totalWork < sim::kProgressWork || tenths <= *tenthsShown)
      return;
    *tenthsShown = tenths;
    std::cerr << "dflc: simulating: " << 10 * tenths << " % of the work, " << p.done << " of " << p.todo << " layers"
              << (p.layer.empty() ? "" : ", next '" + p.layer + "'") << "\n";
  };
  return c.simulate(so);
}

/// The simulation's tables: the kernels', then the pipelines'.
void printSimulation(const driver::Simulation &run) {
  if (run.kernels)
    std::cout << sim::simTable(*run.kernels);
  if (run.pipelines && !run.pipelines->segments.empty())
    std::cout << (run.kernels ? "\n" : "") << sim::pipelineTable(*run.pipelines);
  else if (!run.kernels)
    std::cout << "no pipelined segment to run" << (run.options.layers.empty() ? "" : " holds the --layers") << "\n";
}

/// "wrote A, B and C": the outputs, a simulation's kernels as one item.
std::string wroteLine(const Compilation &c) {
  std::vector<std::string> items;
  size_t kernels = 0, lcus = 0, plots = 0;
  std::string dir, lcuDir, plotDir;
  for (const std::string &p : c.outputPaths()) {
    std::filesystem::path path(p);
    if (path.parent_path().filename() == "kernels" && path.extension() == ".ll")
      ++kernels, dir = path.parent_path().string();
    else if (path.parent_path().filename() == "lcu" && path.extension() == ".c")
      ++lcus, lcuDir = path.parent_path().string();
    else if (path.parent_path().filename() == "plots" && path.extension() == ".svg")
      ++plots, plotDir = path.parent_path().string();
    else
      items.push_back(p);
  }
  if (kernels)
    items.push_back(std::to_string(kernels) + (kernels == 1 ? " kernel in " : " kernels in ") + dir);
  if (lcus)
    items.push_back(std::to_string(lcus) + (lcus == 1 ? " LCU in " : " LCUs in ") + lcuDir);
  // The plots last, apart: "wrote A and B" stays a prefix of the line.
  return "wrote " + joinList(items, ", ", " and ") +
         (plots ? " (" + std::to_string(plots) + " plots in " + plotDir + ")" : "") + "\n";
}

int runCompileCm(const CommandLine &o, Compilation &c, bool simulate);

/// Opens and locks OUT for the whole run (docs/cli.md, "How outputs are
/// written"); false after saying why not.
bool lockOutputs(const CommandLine &o, Compilation &c) {
  if (!c.openOutputs()) {
    printOutputError(o, c);
    return false;
  }
  if (o.debugWaitAfterLock) {   // tests/lit/compile/outputs-lock.test: a run that holds OUT until told
    std::cerr << "dflc: holding " << o.driver.outDir << std::endl;
    std::string ignored;
    while (std::getline(std::cin, ignored)) {
    }
  }
  return true;
}

int runSim(const CommandLine &o, Compilation &c) {
  if (!lockOutputs(o, c))
    return kExitInvalid;
  if (c.load() && c.analyze() && c.targetsCm())
    return runCompileCm(o, c, true);
  bool ran = !c.hasErrors() && c.checkSchedules() && simulate(o, c);
  if (ran && !c.writeFiles(c.simulation().files)) {
    return outputsNotWritten(o, c);
  }
  printDiagnostics(o, c);
  if (!ran)
    return kExitInvalid;
  printSimulation(c.simulation());
  if (!c.outputPaths().empty())
    std::cout << wroteLine(c);
  return c.simulation().ok() ? kExitOk : kExitInvalid;
}

/// `dflc compile` for a computational-memory chip: placement.json and .svg,
/// the LCUs; `dflc sim` (`simulate`) also runs the chip: sim.json.
int runCompileCm(const CommandLine &o, Compilation &c, bool simulate) {
  CmPlacementOptions po;   // bounded by work; a wall-clock limit only if --time-limit is given
  if (o.timeLimitGiven && o.driver.timeLimitSeconds)
    po.timeLimit = std::chrono::milliseconds(static_cast<int64_t>(*o.driver.timeLimitSeconds * 1000));
  if (!c.placeOnCm(po) || !c.controlCm(simulate, o.seed.value_or(1))) {
    printDiagnostics(o, c);
    return kExitInvalid;
  }
  const driver::Simulation &run = c.simulation();
  if (!c.writeFiles(run.files)) {
    return outputsNotWritten(o, c);
  }
  printDiagnostics(o, c);
  const Network &net = c.model().networks[0];
  const CmHardware &hw = c.model().cmHardware[0];
  std::cout << cmPlacementText(net, hw, c.cmMapping());
  if (!run.cmControlSkipped.empty())
    std::cout << "no LCUs: " << run.cmControlSkipped << "\n";
  if (run.cm)
    std::cout << cm::cmSimText(net, hw, *run.cm);
  std::cout << wroteLine(c);
  return run.ok() ? kExitOk : kExitInvalid;
}

/// `dflc compile` for a cluster/core DSA: GraphTurbo and its baselines, report.json.
int runCompileDsa(const CommandLine &o, Compilation &c) {
  if (!c.scheduleOnDsa()) {
    printDiagnostics(o, c);
    return kExitInvalid;
  }
  const Network &net = c.model().networks[0];
  const DsaHardware &hw = c.model().dsaHardware[0];
  const graph::DsaComparison &s = c.dsaSchedules();
  ChromeTrace trace;
  graph::planTrace(net, hw, s, trace);
  if (!c.writeFiles({{"report.json", graph::dsaReportJson(net, hw, s, "schedule.dfl")},
                     {"schedule.dfl", c.dsaScheduleText()},
                     {"trace.json", trace.json()}})) {
    return outputsNotWritten(o, c);
  }
  printDiagnostics(o, c);
  std::cout << graph::dsaReportText(net, hw, s);
  std::cout << wroteLine(c);
  return kExitOk;
}

int runCompile(const CommandLine &o, Compilation &c) {
  if (!lockOutputs(o, c))
    return kExitInvalid;
  if (c.load() && c.analyze() && c.targetsCm())
    return runCompileCm(o, c, false);
  if (c.analyzed() && !c.hasErrors() && c.targetsDsa())
    return runCompileDsa(o, c);
  if (c.hasErrors() || !c.selectSchedule()) {
    printDiagnostics(o, c);
    return kExitInvalid;
  }
  std::function<void(size_t, size_t)> progress;
  if (isatty(STDERR_FILENO)) {
    std::string net = c.model().networks[c.selected().network].name;
    progress = [net](size_t done, size_t all) {
      std::cerr << "\rdflc: solving " << net << ": " << done << "/" << all << " layers" << std::flush;
      if (done == all)
        std::cerr << "\r\033[K";
    };
  }
  if (!c.solve(progress)) {
    printDiagnostics(o, c);
    return kExitInvalid;
  }
  if (o.sim && !simulate(o, c)) {
    printDiagnostics(o, c);
    return kExitInvalid;
  }
  if (o.sim)   // before the report, as the run comes before the write
    printSimulation(c.simulation());
  if (!c.writeOutputs(o.sim ? c.simulation().files : std::vector<driver::OutputFile>{})) {
    return outputsNotWritten(o, c);
  }
  printDiagnostics(o, c);
  const Solution &s = c.solution();
  if (s.stats.limit == SolveLimit::Time)
    std::cerr << "dflc: note: time limit hit; writing the best schedule found\n";
  std::cout << scheduleReportText(c.model(), s.schedule, s.result);
  printSolverStats(o.driver.solver, s.stats);
  if (o.verbose) {
    const Network &net = networkOf(c.model(), s.schedule);
    const Hardware &hw = hardwareOf(c.model(), s.schedule);
    std::cout << floorsText(net, hw, s.result)
              << solverChoicesText(net, hw, s, driver::objectiveOf(o.driver.objective), kChainsShown);
  }
  if (o.driver.pareto)
    printFront(c.model(), s);
  std::cout << wroteLine(c);
  return !o.sim || c.simulation().ok() ? kExitOk : kExitInvalid;
}

/// `dflc import MODEL.onnx [-o NET.dfl]`: the imported network, canonical
/// DFL, checked by sema before anything is written (docs/onnx.md).
int runImport(const CommandLine &o, Compilation &c) {
  const std::string &model = o.driver.files.at(0);
  c.load() && c.analyze();
  printDiagnostics(o, c);
  if (c.hasErrors())
    return kExitInvalid;
  const std::string &text = c.sources().text(c.roots().at(0));
  const std::string &out = o.driver.outDir;
  if (out.empty()) {
    std::cout << text;
    return kExitOk;
  }
  std::error_code ec;
  if (std::filesystem::equivalent(out, model, ec)) {
    printOutputError(o, c.sources(), {out, "it is the input '" + model + "'; choose another -o"});
    return kExitInvalid;
  }
  if (auto error = driver::writeFile(out, text)) {
    printOutputError(o, c.sources(), *error);
    return kExitInvalid;
  }
  return kExitOk;
}

/// Writes `files` into OUT, all or nothing, and says so; nullopt: refused
/// (the diagnostics say why), nothing written.
int writeOrRefuse(const CommandLine &o, Compilation &c, const std::optional<std::vector<driver::OutputFile>> &files) {
  if (files && !c.writeFiles(*files))
    return outputsNotWritten(o, c);
  printDiagnostics(o, c);
  if (!files)
    return kExitInvalid;
  std::cout << wroteLine(c);
  return kExitOk;
}

/// `dflc import --timeloop FILE.yaml... OUT`: OUT/network.dfl, hardware.dfl
/// and schedule.dfl, checked before, all or nothing (driver/TimeloopImport.h).
int runImportTimeloop(const CommandLine &o, Compilation &c) {
  if (!lockOutputs(o, c))
    return kExitInvalid;
  return writeOrRefuse(o, c, c.importTimeloop());
}

/// `dflc export --timeloop LAYER OUT`: OUT/timeloop/LAYER.yaml, all or
/// nothing (driver/TimeloopExport.h).
int runExport(const CommandLine &o, Compilation &c) {
  if (!lockOutputs(o, c))
    return kExitInvalid;
  std::optional<std::vector<driver::OutputFile>> files;
  if (c.load() && c.analyze() && c.checkSchedules())
    if (auto yaml = c.exportTimeloop(o.timeloop))
      files = std::vector<driver::OutputFile>{{"timeloop/" + o.timeloop + ".yaml", *yaml}};
  return writeOrRefuse(o, c, files);
}

int runFmt(const CommandLine &o, driver::PassTimer &timer) {
  int status = kExitOk;
  for (const std::string &path : o.driver.files) {
    driver::DriverOptions one = o.driver;
    one.files = {path};
    Compilation c(one);
    bool parsed = c.parse();
    timer.merge(c.timer());
    if (!parsed) {
      printDiagnostics(o, c);
      status = kExitInvalid;
      continue;
    }
    uint32_t id = c.roots().at(0);
    std::string text = printFile(c.files().files.at(0), c.sources());
    if (o.check) {
      if (text != c.sources().text(id)) {
        std::cerr << path << ": not in canonical form (run 'dflc fmt -i " << path << "')\n";
        status = kExitInvalid;
      }
    } else if (o.inPlace) {
      if (text == c.sources().text(id))
        continue;
      driver::PassTimer::Scope time(timer, "write");
      // Through a symbolic link to the file it names: the link stays a link.
      std::error_code ec;
      std::string real = std::filesystem::canonical(path, ec).string();
      if (auto error = driver::writeFile(ec ? path : real, text)) {
        printOutputError(o, c.sources(), {path, error->reason});
        status = kExitInvalid;
      }
    } else {
      std::cout << text;
    }
  }
  return status;
}

/// Escapes Markdown emphasis and table syntax outside `code spans` (E0808's `*`).
std::string markdownText(const std::string &text) {
  std::string out;
  bool code = false;
  for (char c : text) {
    code ^= c == '`';
    if (!code && (c == '*' || c == '_' || c == '|' || c == '<'))
      out += '\\';
    out += c;
  }
  return out;
}

int listDiagnostics(bool markdown) {
  if (markdown) {
    std::cout << "# Diagnostics\n\n"
                 "Generated from `support/Diagnostics.def` by `dflc --list-diagnostics=markdown`;\n"
                 "do not edit by hand. `%N` stands for the N-th argument.\n\n"
                 "| code | severity | name | message |\n| --- | --- | --- | --- |\n";
  }
  for (diag::ID id : allDiagnostics()) {
    const DiagInfo &info = diagInfo(id);
    if (info.severity == Severity::Note)
      continue;
    if (markdown)
      std::cout << "| <a id=\"" << info.code << "\"></a>" << info.code << " | " << severityName(info.severity)
                << " | `" << info.name << "` | " << markdownText(info.format) << " |\n";
    else
      std::cout << info.code << "\t" << severityName(info.severity) << "\t" << info.name << "\t" << info.format
                << "\n";
  }
  if (markdown) {
    std::cout << "\n## Notes\n\nNotes have no code; they point at source related to a diagnostic.\n\n"
                 "| name | message |\n| --- | --- |\n";
    for (diag::ID id : allDiagnostics())
      if (diagInfo(id).severity == Severity::Note)
        std::cout << "| `" << diagInfo(id).name << "` | " << markdownText(diagInfo(id).format) << " |\n";
  }
  return kExitOk;
}

/// dflc embed: every intrinsic into every multiply-accumulate layer.
int runEmbed(const CommandLine &o, Compilation &c) {
  EmbeddingOptions options;
  if (o.timeLimitGiven && o.driver.timeLimitSeconds)   // the user's; the work limits hold either way
    options.timeLimit = std::chrono::milliseconds(static_cast<int64_t>(*o.driver.timeLimitSeconds * 1000));
  c.load() && c.analyze() && c.embed(options);
  printDiagnostics(o, c);
  if (!c.analyzed())
    return kExitInvalid;
  const Model &model = c.model();
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  std::string text;
  for (const Compilation::LayerEmbedding &le : c.embeddings()) {
    const Layer &layer = model.networks[le.network].layers[le.layer];
    const Intrinsic &in = model.intrinsics[le.intrinsic];
    const EmbeddingResult &r = le.result;
    nlohmann::ordered_json j;
    j["network"] = model.networks[le.network].name;
    j["layer"] = layer.name;
    j["intrinsic"] = in.name;
    const char *status = r.status == EmbeddingResult::Status::Found        ? "found"
                         : r.status == EmbeddingResult::Status::Limit      ? "limit"
                         : r.status == EmbeddingResult::Status::Infeasible ? "infeasible"
                                                                           : "unsupported";
    j["status"] = status;
    j["stats"] = {{"solutions", r.stats.solutions}, {"nodes", r.stats.nodes}, {"failures", r.stats.failures},
                  {"milliseconds", r.stats.milliseconds}, {"hit_limit", r.hitLimit},
                  {"model_size", r.modelSize}, {"node_limit", r.nodeLimit},
                  {"solution_limit_hit", r.solutionLimitHit}};
    text += "layer " + layer.name + " <- " + in.name + ": ";
    const std::string stats = "  solve: " + std::to_string(r.stats.solutions) + " embeddings, " +
                              std::to_string(r.stats.nodes) + " nodes, " + std::to_string(r.stats.failures) +
                              " failures, " + formatFixed(r.stats.milliseconds, 1) + " ms" +
                              (r.hitLimit ? " (stopped at the limit)" : "") +
                              (r.solutionLimitHit ? " (the first embeddings only)" : "") + "\n";
    if (r.candidates.empty()) {
      j["reason"] = r.reason;
      text += std::string(status) + ": " + r.reason + "\n" + stats;
      json.push_back(j);
      continue;
    }
    const Embedding &e = r.candidates[0];
    EmbeddingTransform t = transformFor(layer.nest, in.nest, e);
    j["model"] = embeddingModelName(e.model);
    j["operands_swapped"] = e.operandsSwapped;
    j["utilization"] = e.utilization();
    j["macs"] = e.macs;
    j["macs_min"] = e.macsMin;
    j["data"] = e.data;
    j["data_min"] = e.dataMin;
    j["overhead"] = e.overhead;
    j["mapping"] = t.dimMapping;
    j["loops"] = t.loops;
    j["layouts"] = t.layouts;
    j["loop_nest"] = t.loopNest;
    nlohmann::ordered_json unit;
    for (size_t d = 0; d < kNumDims; ++d)
      unit[dimName(static_cast<Dim>(d))] = t.unit[d];
    j["unit"] = unit;
    json.push_back(j);
    text += std::string(embeddingModelName(e.model)) + ", lhs on " + (e.operandsSwapped ? "wgt" : "ifm") + "\n";
    text += "  utilization " + formatFixed(100 * e.utilization(), 1) + " % (" + formatNumber(static_cast<double>(e.macsMin)) + " of " +
            formatNumber(static_cast<double>(e.macs)) + " MACs), data " + formatNumber(static_cast<double>(e.data)) + " elements (" + formatNumber(static_cast<double>(e.dataMin)) +
            " before), overhead " + formatFixed(e.overhead, 0) + "\n";
    auto lines = [&](const char *what, const std::vector<std::string> &items) {
      std::string all;
      for (const std::string &i : items)
        all += (all.empty() ? "" : "; ") + i;
      text += std::string("  ") + what + ": " + (all.empty() ? "none" : all) + "\n";
    };
    lines("map", t.dimMapping);
    lines("loops", t.loops);
    lines("layout", t.layouts);
    std::string unitText;
    for (size_t d = 0; d < kNumDims; ++d)
      unitText += std::string(unitText.empty() ? "" : ", ") + dimName(static_cast<Dim>(d)) + "=" +
                  std::to_string(t.unit[d]);
    text += "  unit: [" + unitText + "]\n" + stats + "  nest:\n";
    for (size_t at = 0; at < t.loopNest.size();) {
      size_t nl = t.loopNest.find('\n', at);
      text += "    " + t.loopNest.substr(at, nl - at) + "\n";
      at = nl + 1;
    }
  }
  if (o.json)
    std::cout << json.dump(2) << "\n";
  else
    std::cout << text;
  return c.hasErrors() ? kExitInvalid : kExitOk;
}

/// The path of the dflc running, for the commands a sweep hands to Slurm or GNU parallel.
std::string selfPath() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "dflc" : p.string();
}

/// A program the sweep ran: its exit status (-1 if a signal ended it), or why
/// it could not run.
struct ProgramRun {
  int status = -1;
  std::string error;   // not empty: it did not run (argv[0] not found, `dir` not entered, no fork)
};

/// Runs `argv` and waits; its stdout in `out` if given (else inherited), with
/// `env` added to the environment, in `dir` if given. A failed chdir or exec
/// comes back through a close-on-exec pipe, so the caller reports it.
ProgramRun runProgram(const std::vector<std::string> &argv, std::string *out = nullptr,
                      const std::vector<std::pair<std::string, std::string>> &env = {}, const std::string &dir = "") {
  int fds[2], errs[2];
  if (out && pipe(fds) != 0)
    return {-1, std::strerror(errno)};
  if (pipe2(errs, O_CLOEXEC) != 0) {
    std::string why = std::strerror(errno);
    if (out)
      close(fds[0]), close(fds[1]);
    return {-1, why};
  }
  pid_t pid = fork();
  if (pid == 0) {
    if (out)
      dup2(fds[1], STDOUT_FILENO), close(fds[0]), close(fds[1]);
    close(errs[0]);
    auto fail = [&](const std::string &why) {
      ssize_t ignored = write(errs[1], why.data(), why.size());
      (void)ignored;
      _exit(127);
    };
    for (const auto &[name, value] : env)
      setenv(name.c_str(), value.c_str(), 1);
    if (!dir.empty() && chdir(dir.c_str()) != 0)
      fail("cannot enter '" + dir + "': " + std::strerror(errno));
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    fail(std::strerror(errno));
  }
  close(errs[1]);
  if (out) {
    close(fds[1]);
    char buf[4096];
    for (ssize_t n; pid > 0 && (n = read(fds[0], buf, sizeof buf)) > 0;)
      out->append(buf, static_cast<size_t>(n));
    close(fds[0]);
  }
  ProgramRun run;
  if (pid < 0)
    run.error = std::strerror(errno);
  char buf[512];
  for (ssize_t n; pid > 0 && (n = read(errs[0], buf, sizeof buf)) > 0;)
    run.error.append(buf, static_cast<size_t>(n));
  close(errs[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return run.error.empty() ? ProgramRun{-1, std::strerror(errno)} : run;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

/// OUT opened and locked for a sweep's writes (docs/cli.md, "How outputs are written").
std::optional<driver::OutputDir> openSweepOutput(const CommandLine &o, const std::string &path,
                                                 driver::OutputDir::Lock lock) {
  driver::OutputError error;
  auto out = driver::OutputDir::open(path, lock, error);
  if (!out)
    printOutputError(o, SourceManager(), error);
  return out;
}

/// The job id `sbatch --parsable` printed ("ID" or "ID;CLUSTER"), or "" if it printed none.
std::string sbatchJobId(const std::string &printed) {
  std::string id = printed.substr(0, printed.find_first_of(";\n"));
  return !id.empty() && id.find_first_not_of("0123456789") == std::string::npos ? id : "";
}

int mergeAndReport(const CommandLine &o, const driver::OutputDir &out) {
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  sweep::MergeSummary m;
  bool merged = sweep::mergeSweep(out, m, sm, diags);
  printDiagnostics(o, sm, diags);
  if (!merged)
    return kExitInvalid;
  std::cout << "sweep: " << m.finished << " of " << m.points << " points finished";
  if (m.failed)
    std::cout << " (" << m.failed << " without a valid schedule: see their message)";
  std::cout << "\nwrote " << joinList(m.written, ", ", " and ") << "\n";
  if (m.finished < m.points)
    std::cerr << "dflc: note: " << m.points - m.finished << " points have no result yet; run the sweep again to "
              << "solve them\n";
  return kExitOk;
}

/// dflc sweep --slurm: OUT/sweep.sbatch, OUT/merge.sbatch and the command
/// they run, OUT/sweep.argv, written through `output`, which is then released
/// (the tasks share OUT); with --submit, both jobs submitted from OUT.
int runSlurm(const CommandLine &o, std::optional<driver::OutputDir> &output, size_t points, size_t tasks) {
  std::filesystem::path out(o.driver.outDir);
  std::string script = (out / "sweep.sbatch").string();
  std::string argv = sweep::argvFile(sweep::sliceArgv(selfPath(), o.driver.files[0], o.driver.outDir, o.driver.includes));
  auto e = output->makeDirectory("slurm");   // sbatch opens the tasks' logs there
  if (!e)
    e = output->write({{"sweep.argv", argv},
                       {"sweep.sbatch", sweep::slurmScript(tasks, o.sbatchOptions)},
                       {"merge.sbatch", sweep::slurmMergeScript(o.sbatchOptions)}});
  if (e) {
    printOutputError(o, SourceManager(), *e);
    return kExitInvalid;
  }
  output.reset();
  std::cout << "wrote " << script << ": " << points << " points in a job array of " << tasks << " tasks\n";
  if (!o.submit) {
    std::cout << "submit it with 'sbatch sweep.sbatch' from " << o.driver.outDir << ", then run 'dflc sweep --merge "
              << o.driver.outDir << "'\n";
    return kExitOk;
  }
  // From OUT: the jobs run there and find sweep.argv; no path is an argument.
  std::string outAbs = std::filesystem::absolute(out).string();
  std::string jobs[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<std::string> argv = {"sbatch", "--parsable", "sweep.sbatch"};
    if (k == 1)
      argv = {"sbatch", "--parsable", "--dependency=afterany:" + jobs[0], "merge.sbatch"};
    std::string printed;
    ProgramRun run = runProgram(argv, &printed, {}, outAbs);
    jobs[k] = sbatchJobId(printed);
    if (run.error.empty() && run.status == 0 && !jobs[k].empty())
      continue;
    SourceManager sm;
    DiagnosticsEngine diags(sm);
    if (!run.error.empty())
      diags.report({}, diag::err_sweep_run) << "sbatch" << run.error;
    else
      diags.report({}, diag::err_sweep_sbatch)
          << (k == 0 ? script : "the merge job after job " + jobs[0])
          << (run.status != 0 ? (run.status < 0 ? std::string("a signal ended it")
                                                : "it exited with status " + std::to_string(run.status))
                              : std::string("it printed no job id"));
    printDiagnostics(o, sm, diags);
    return kExitInvalid;
  }
  std::cout << "submitted job array " << jobs[0] << " and merge job " << jobs[1] << " (after it)\n";
  return kExitOk;
}

/// dflc sweep: a design-space sweep, here, in slices, on Slurm or through GNU parallel.
int runSweep(const CommandLine &o) {
  using Lock = driver::OutputDir::Lock;
  if (!o.mergeDir.empty()) {
    auto out = openSweepOutput(o, o.mergeDir, Lock::Exclusive);
    return out ? mergeAndReport(o, *out) : kExitInvalid;
  }
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  // An option that would break out of its #SBATCH line, before anything is written.
  for (const std::string &option : o.sbatchOptions)
    if (!sweep::sbatchOptionFits(option)) {
      std::string shown;
      for (char c : option)
        shown += c == '\n' ? "\\n" : c == '\r' ? "\\r" : std::string(1, c);
      diags.report({}, diag::err_sweep_sbatch_option) << shown;
    }
  auto spec = diags.hasErrors() ? std::nullopt : sweep::readSweepSpec(o.driver.files[0], o.driver.includes, sm, diags);
  if (!spec) {
    printDiagnostics(o, sm, diags);
    return kExitInvalid;
  }
  std::vector<sweep::SweepPoint> points = sweep::sweepPoints(*spec);
  size_t tasks = std::min(o.tasks.value_or(100), points.size());
  // Locked while this process writes; released before the slices it starts run.
  std::optional<driver::OutputDir> output = openSweepOutput(o, o.driver.outDir, o.slices > 1 ? Lock::Shared : Lock::Exclusive);
  if (!output)
    return kExitInvalid;
  if (o.slurm || !o.sshLogins.empty()) {
    // The record first, so that the slices find OUT theirs (and a wrong OUT
    // is refused here, not in every task).
    if (!sweep::writeSpecRecord(*spec, points, *output, sm, diags)) {
      printDiagnostics(o, sm, diags);
      return kExitInvalid;
    }
  }
  if (o.slurm)
    return runSlurm(o, output, points.size(), tasks);
  if (!o.sshLogins.empty()) {
    output.reset();
    sweep::ParallelRun run = sweep::parallelCommand(selfPath(), o.driver.files[0], o.driver.outDir, o.driver.includes,
                                                    tasks, o.sshLogins);
    ProgramRun ran = runProgram(run.argv, nullptr, run.env);
    if (!ran.error.empty() || ran.status != 0) {
      if (!ran.error.empty())
        diags.report({}, diag::err_sweep_run) << run.argv[0] << ran.error;
      else
        diags.report({}, diag::err_sweep_parallel)
            << (ran.status < 0 ? std::string("a signal ended it") : "exit " + std::to_string(ran.status))
            << o.driver.outDir;
      printDiagnostics(o, sm, diags);
      return kExitInvalid;
    }
    output = openSweepOutput(o, o.driver.outDir, Lock::Exclusive);
    return output ? mergeAndReport(o, *output) : kExitInvalid;
  }
  sweep::RunOptions ro{o.driver.outDir, o.driver.includes, 1, o.slice, o.slices, {}, &*output};
  cpu_set_t cpus;
  ro.jobs = o.jobs.value_or(sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1);
  bool tty = isatty(STDERR_FILENO);
  auto start = std::chrono::steady_clock::now();
  if (tty || o.progress)
    ro.progress = [&](size_t done, size_t all, size_t resumed) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double rate = done / std::max(s, 1e-9);
      auto eta = static_cast<long>(std::lround((all - done) / std::max(rate, 1e-9)));
      char etaText[32];
      std::snprintf(etaText, sizeof etaText, "%ld:%02ld", eta / 60, eta % 60);
      std::cerr << (tty ? "\r\033[K" : "") << "dflc sweep: " << done + resumed << "/" << all + resumed << " points"
                << (resumed ? " (" + std::to_string(resumed) + " resumed)" : "") << ", "
                << formatFixed(rate, 2) << " points/s, ETA " << etaText << (tty ? "" : "\n") << std::flush;
      if (tty && done == all)
        std::cerr << "\r\033[K";
    };
  sweep::RunSummary s;
  bool ran = sweep::runPoints(*spec, points, ro, s, sm, diags);
  printDiagnostics(o, sm, diags);
  if (!ran)
    return kExitInvalid;
  if (o.slices > 1) {
    std::cout << "slice " << o.slice << "/" << o.slices << ": " << s.points << " points, " << s.resumed
              << " already finished, " << s.solved << " solved now\n";
    return s.solved + s.resumed == s.points ? kExitOk : kExitInvalid;
  }
  return mergeAndReport(o, *output);
}

/// dflc lsp: the language server on stdio, with the driver's options.
int runLsp(const CommandLine &o) {
  lsp::LspOptions lo;
  lo.version = driver::kVersion;
  lo.driver = o.driver;
  lo.litTest = o.litTest;
  std::ofstream log;
  if (!o.logFile.empty()) {
    log.open(o.logFile, std::ios::app);
    if (!log) {
      SourceManager sm;
      printOutputError(o, sm, {o.logFile, std::strerror(errno)});
      return kExitInvalid;
    }
    lo.log = &log;
  }
  std::ios::sync_with_stdio(false);
  int code = lsp::runLanguageServer(std::cin, std::cout, lo);
  // A solve abandoned at `exit` may still be running on a detached thread
  // (docs/lsp.md): end the process now, not after static destructors run under it.
  std::cout.flush();
  log.flush();
  std::_Exit(code);
}

} // namespace

int runCommand(const CommandLine &cl) {
  if (cl.command == "list-diagnostics")
    return listDiagnostics(cl.markdown);
  if (cl.command == "lsp")
    return runLsp(cl);
  if (cl.command == "sweep")
    return runSweep(cl);
  driver::PassTimer timer;
  int status;
  if (cl.command == "fmt") {
    status = runFmt(cl, timer);
  } else {
    Compilation c(cl.driver);
    status = guarded(cl, c, [&] {
      if (cl.command == "show")
        return runShow(cl, c);
      if (cl.command == "check")
        return runCheck(cl, c);
      if (cl.command == "diff")
        return runDiff(cl, c);
      if (cl.command == "sim")
        return runSim(cl, c);
      if (cl.command == "embed")
        return runEmbed(cl, c);
      if (cl.command == "import")
        return cl.timeloop.empty() ? runImport(cl, c) : runImportTimeloop(cl, c);
      if (cl.command == "export")
        return runExport(cl, c);
      DFLC_CHECK(cl.command == "compile") << "no command '" << cl.command << "'";
      return runCompile(cl, c);
    });
    timer = c.timer();
  }
  if (cl.driver.timePasses)
    std::cerr << timer.report();
  return status;
}

} // namespace dfl::tools
