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
#include <filesystem>
#include <fstream>
#include <iostream>
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
  c.load() && c.analyze() && (!o.loops || c.checkSchedules());
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
    std::cout << modelSummaryJson(model);
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
  c.load() && c.analyze() && c.checkSchedules();
  printDiagnostics(o, c);
  if (c.hasErrors())
    return kExitInvalid;
  const std::vector<CheckedSchedule> &checked = c.checked();
  const Model &model = c.model();
  if (checked.size() != 2) {
    std::cerr << "dflc: error: the inputs hold " << checked.size()
              << " schedules; 'dflc diff' compares two, one in each FILE\n";
    return kExitInvalid;
  }
  const Schedule &a = model.schedules[checked[0].schedule], &b = model.schedules[checked[1].schedule];
  if (a.network != b.network || a.hardware != b.hardware) {
    auto what = [&](const Schedule &s) { return networkOf(model, s).name + " on " + hardwareOf(model, s).name; };
    std::cerr << "dflc: error: A schedules " << what(a) << " and B " << what(b)
              << "; 'dflc diff' compares two schedules of one network on one hardware template\n";
    return kExitInvalid;
  }
  std::cout << scheduleDiffText(model, a, checked[0].result, c.sources().path(a.range.begin.file), b,
                                checked[1].result, c.sources().path(b.range.begin.file));
  return kExitOk;
}

int runCheck(const CommandLine &o, Compilation &c) {
  c.load() && c.analyze() && c.checkSchedules();
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
            << s.interLayer.pieceSolves << " piece solves)\n";
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

/// Simulates `s` (dflc sim, dflc compile --sim): prints the table and sets
/// `files` to OUT's sim.json and kernels; false after an error is printed.
bool simulateSchedule(const CommandLine &o, const SourceManager &sm, const Model &model, const Schedule &s,
                      std::vector<driver::OutputFile> &files, bool &ok) {
  const Network &net = networkOf(model, s);
  sim::SimOptions so;
  so.seed = o.seed.value_or(1);
  so.layers = o.simLayers;
  for (const std::string &name : so.layers)
    if (net.findLayer(name) < 0) {
      std::vector<std::string> names;
      for (const Layer &l : net.layers)
        names.push_back(l.name);
      std::cerr << "dflc: error: --layers: network '" << net.name << "' has no layer '" << name << "'"
                << didYouMean(name, names) << "\n";
      return false;
    }
  // Pipelined segments run region against region through their LCUs; first,
  // as it is quick and can refuse the schedule before the kernels run.
  std::optional<sim::PipelineResult> pipe;
  if (std::any_of(s.segments.begin(), s.segments.end(), [](const Segment &g) { return g.pipelined; })) {
    pipe = sim::simulatePipelines(model, s);
    // A segment the user wrote must leave each consumer room for what its
    // dependences hold (docs/simulator.md, "Buffers"); the solver's report
    // their numbers in pipeline.json.
    DiagnosticsEngine diags(sm);
    for (const sim::SegmentRun &g : pipe->segments)
      for (const sim::RegionRun &r : g.regions) {
        std::vector<std::string> what;
        int64_t need = 0;
        for (const sim::BufferRun &b : g.buffers)
          if (b.consumer == r.layer) {
            need += b.neededWords;
            what.push_back("'" + b.tensor + "' (" + std::to_string(b.minSteps) + " of its steps: " +
                           std::to_string(b.neededWords) + " words)");
          }
        if (g.userGiven && need > r.roomWords())
          diags.report(g.range, diag::err_segment_buffer) << joinList(what, ", ", " and ") << r.layer << need
                                                          << r.level << r.nodes << r.roomWords() << r.capacityWords
                                                          << r.otherTileWords;
      }
    if (diags.hasErrors()) {
      printDiagnostics(o, sm, diags);
      return false;
    }
  }
  if (isatty(STDERR_FILENO))
    so.progress = [&](size_t done, size_t all, const std::string &layer) {
      std::cerr << "\r\033[Kdflc: simulating " << net.name << ": " << done << "/" << all << " layers"
                << (layer.empty() ? "" : " (" + layer + ")") << std::flush;
      if (done == all)
        std::cerr << "\r\033[K";
    };
  sim::SimResult result;
  try {
    result = sim::simulate(model, s, so);
  } catch (const sim::MemoryError &e) {
    std::cerr << "dflc: error: simulating layer '" << e.layer << "' needs " << e.bytes << " bytes, more than the "
              << so.memoryLimitBytes << " a simulation may take; simulate a smaller batch (--batch) or other layers "
              << "(--layers)\n";
    return false;
  }
  files.push_back({"sim.json", sim::simJson(net, hardwareOf(model, s), so, result)});
  for (auto &[name, ir] : sim::kernelFiles(result))
    files.push_back({"kernels/" + name, ir});
  std::cout << sim::simTable(result);
  ok = result.ok();
  if (pipe) {
    files.push_back({"pipeline.json", sim::pipelineJson(*pipe)});
    files.push_back({"pipeline.svg", sim::pipelineSvg(*pipe)});
    for (const sim::SegmentRun &g : pipe->segments)
      for (const sim::RegionRun &r : g.regions)
        files.push_back({"lcu/" + r.layer + ".c", r.lcuC});
    std::cout << "\n" << sim::pipelineTable(*pipe);
    ok = ok && pipe->ok();
  }
  return true;
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

int runSim(const CommandLine &o, Compilation &c) {
  if (c.load() && c.analyze() && c.targetsCm())
    return runCompileCm(o, c, true);
  c.hasErrors() || c.checkSchedules();
  printDiagnostics(o, c);
  if (c.hasErrors())
    return kExitInvalid;
  const std::vector<CheckedSchedule> &checked = c.checked();
  if (checked.size() != 1) {
    std::cerr << "dflc: error: the inputs hold " << checked.size() << " schedules; 'dflc sim' runs one\n";
    return kExitInvalid;
  }
  if (!checked[0].result.complete) {
    std::cerr << "dflc: error: the schedule is incomplete; 'dflc sim' runs complete schedules ('dflc NET HW SCHED "
                 "-o OUT --sim' fills it in first)\n";
    return kExitInvalid;
  }
  std::vector<driver::OutputFile> files;
  bool ok = false;
  if (!simulateSchedule(o, c.sources(), c.model(), c.model().schedules[static_cast<size_t>(checked[0].schedule)], files,
                        ok))
    return kExitInvalid;
  if (!c.writeFiles(files)) {
    std::cerr << "dflc: error: " << c.outputError() << "\n";
    return kExitInvalid;
  }
  std::cout << wroteLine(c);
  return ok ? kExitOk : kExitInvalid;
}

/// Whether every core's buffers fit its SRAM (docs/cm.md, "Buffers"); E1108 for each that does not.
bool checkSram(const Network &net, const CmHardware &hw, const CmMapping &m, const cm::CmControl &ctl,
               DiagnosticsEngine &diags) {
  bool ok = true;
  const sim::PipelineDependences &deps = ctl.dependences();
  for (const cm::CmCoreMemory &mem : ctl.memory()) {
    const cm::CmRegion &r = ctl.regions()[static_cast<size_t>(mem.region)];
    if (r.core < 0 || mem.bytes <= hw.sramBytes)
      continue;
    std::vector<std::string> what;
    for (const cm::CmBuffer &b : mem.buffers) {
      const sim::EdgeDependences &e = deps.edges()[static_cast<size_t>(b.edge)];
      what.push_back("'" + e.tensor + "' from " + ctl.regions()[static_cast<size_t>(e.producer)].name + " (" +
                     std::to_string(b.steps) + " of its steps: " + std::to_string(b.words) + " words, " +
                     std::to_string(b.bytes) + " bytes)");
    }
    const CmTile &t = m.partitioning.tiles[static_cast<size_t>(r.tile)];
    const Layer &l = net.layers[static_cast<size_t>(m.partitioning.partitions[static_cast<size_t>(t.partition)].crossbarLayer)];
    diags.report(l.nameRange, diag::err_cm_sram).note(hw.sramRange, diag::note_cm_sram_here)
        << r.core << hw.name << "'" + r.name + "'" << mem.bytes << std::to_string(hw.sramBytes) + " bytes"
        << joinList(what, ", ", " and ");
    ok = false;
  }
  return ok;
}

/// `dflc compile` for a computational-memory chip: placement.json and .svg,
/// the LCUs; `dflc sim` (`simulate`) also runs the chip: sim.json.
int runCompileCm(const CommandLine &o, Compilation &c, bool simulate) {
  CmPlacementOptions po;   // bounded by work; a wall-clock limit only if --time-limit is given
  if (o.timeLimitGiven && o.driver.timeLimitSeconds)
    po.timeLimit = std::chrono::milliseconds(static_cast<int64_t>(*o.driver.timeLimitSeconds * 1000));
  if (!c.placeOnCm(po)) {
    printDiagnostics(o, c);
    return kExitInvalid;
  }
  const Network &net = c.model().networks[0];
  const CmHardware &hw = c.model().cmHardware[0];
  const CmMapping &m = c.cmMapping();
  std::vector<driver::OutputFile> files{{"placement.json", cmPlacementJson(net, hw, m)},
                                        {"placement.svg", cmPlacementSvg(net, hw, m)}};
  // The control: dependences, buffers and LCUs (docs/cm.md, "Control").
  std::string why;
  std::unique_ptr<cm::CmControl> ctl;
  try {
    ctl = cm::CmControl::build(net, hw, m, why, 2'000'000'000);
  } catch (const isl::OperationLimit &e) {
    why = std::string(e.what()) + ": the dependences are too large to derive";
  }
  std::optional<cm::CmSimResult> result;
  cm::CmSimOptions so;
  so.seed = o.seed.value_or(1);
  if (ctl) {
    DiagnosticsEngine diags(c.sources());
    if (!checkSram(net, hw, m, *ctl, diags)) {
      printDiagnostics(o, c);
      printDiagnostics(o, c.sources(), diags);
      return kExitInvalid;
    }
    if (simulate) {
      result = cm::simulateCm(net, hw, m, *ctl, so);
      files.push_back({"sim.json", cm::cmSimJson(net, hw, so, *result)});
      for (const cm::CmCoreRun &r : result->cores)
        files.push_back({"lcu/" + r.region + ".c", r.lcuC});
    } else
      for (size_t r = 0; r < ctl->regions().size(); ++r)
        files.push_back({"lcu/" + ctl->regions()[r].name + ".c", ctl->lcuC(static_cast<int>(r))});
  } else if (simulate) {
    printDiagnostics(o, c);
    std::cerr << "dflc: error: cannot simulate " << net.name << " on " << hw.name << ": " << why << "\n";
    return kExitInvalid;
  }
  if (!c.writeFiles(files)) {
    printDiagnostics(o, c);
    std::cerr << "dflc: error: " << c.outputError() << "\n";
    return kExitInvalid;
  }
  printDiagnostics(o, c);
  std::cout << cmPlacementText(net, hw, m);
  if (!ctl)
    std::cout << "no LCUs: " << why << "\n";
  if (result)
    std::cout << cm::cmSimText(net, hw, *result);
  std::cout << wroteLine(c);
  return !result || result->ok() ? kExitOk : kExitInvalid;
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
  if (!c.writeFiles({{"report.json", graph::dsaReportJson(net, hw, s, "schedule.dfl")},
                     {"schedule.dfl", c.dsaScheduleText()}})) {
    printDiagnostics(o, c);
    std::cerr << "dflc: error: " << c.outputError() << "\n";
    return kExitInvalid;
  }
  printDiagnostics(o, c);
  std::cout << graph::dsaReportText(net, hw, s);
  std::cout << wroteLine(c);
  return kExitOk;
}

int runCompile(const CommandLine &o, Compilation &c) {
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
  std::vector<driver::OutputFile> simFiles;
  bool simOk = true;
  if (o.sim && !simulateSchedule(o, c.sources(), c.model(), c.solution().schedule, simFiles, simOk)) {
    printDiagnostics(o, c);
    return kExitInvalid;
  }
  if (!c.writeOutputs(simFiles)) {
    printDiagnostics(o, c);
    std::cerr << "dflc: error: " << c.outputError() << "\n";
    return kExitInvalid;
  }
  printDiagnostics(o, c);
  const Solution &s = c.solution();
  if (s.stats.limit == SolveLimit::Time)
    std::cerr << "dflc: note: time limit hit; writing the best schedule found\n";
  std::cout << scheduleReportText(c.model(), s.schedule, s.result);
  printSolverStats(o.driver.solver, s.stats);
  if (o.verbose)
    std::cout << solverChoicesText(networkOf(c.model(), s.schedule), hardwareOf(c.model(), s.schedule), s,
                                   driver::objectiveOf(o.driver.objective), kChainsShown);
  if (o.driver.pareto)
    printFront(c.model(), s);
  std::cout << wroteLine(c);
  return simOk ? kExitOk : kExitInvalid;
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
    std::cerr << "dflc: error: cannot write '" << out << "': it is the input '" << model << "'; choose another -o\n";
    return kExitInvalid;
  }
  if (auto error = driver::writeOutputs({{out, text}})) {
    std::cerr << "dflc: error: cannot write '" << error->path << "': " << error->reason << "\n";
    return kExitInvalid;
  }
  return kExitOk;
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
      if (auto error = driver::writeOutputs({{ec ? path : real, text}})) {
        std::cerr << "dflc: error: cannot write '" << path << "': " << error->reason << "\n";
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

/// Runs `argv` and waits; its stdout in `out` if given (else inherited).
/// The exit status, or -1 if it could not run.
int runProgram(const std::vector<std::string> &argv, std::string *out = nullptr) {
  int fds[2];
  if (out && pipe(fds) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    if (out)
      dup2(fds[1], STDOUT_FILENO), close(fds[0]), close(fds[1]);
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::cerr << "dflc: error: cannot run '" << argv[0] << "': " << std::strerror(errno) << "\n";
    _exit(127);
  }
  if (out) {
    close(fds[1]);
    char buf[4096];
    for (ssize_t n; pid > 0 && (n = read(fds[0], buf, sizeof buf)) > 0;)
      out->append(buf, static_cast<size_t>(n));
    close(fds[0]);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int mergeAndReport(const std::string &outDir) {
  sweep::MergeSummary m;
  if (!sweep::mergeSweep(outDir, m)) {
    std::cerr << "dflc: error: " << m.error << "\n";
    return kExitInvalid;
  }
  std::cout << "sweep: " << m.finished << " of " << m.points << " points finished";
  if (m.failed)
    std::cout << " (" << m.failed << " without a valid schedule: see their message)";
  std::cout << "\nwrote " << joinList(m.written, ", ", " and ") << "\n";
  if (m.finished < m.points)
    std::cerr << "dflc: note: " << m.points - m.finished << " points have no result yet; run the sweep again to "
              << "solve them\n";
  return kExitOk;
}

/// dflc sweep: a design-space sweep, here, in slices, on Slurm or through GNU parallel.
int runSweep(const CommandLine &o) {
  if (!o.mergeDir.empty())
    return mergeAndReport(o.mergeDir);
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  auto spec = sweep::readSweepSpec(o.driver.files[0], o.driver.includes, sm, diags);
  printDiagnostics(o, sm, diags);
  if (!spec)
    return kExitInvalid;
  std::vector<sweep::SweepPoint> points = sweep::sweepPoints(*spec);
  size_t tasks = std::min(o.tasks.value_or(100), points.size());
  if (o.slurm || !o.sshLogins.empty()) {
    // The record first, so that the slices find OUT theirs (and a wrong OUT
    // is refused here, not in every task).
    std::string error;
    if (!sweep::writeSpecRecord(*spec, points, o.driver.outDir, error)) {
      std::cerr << "dflc: error: " << error << "\n";
      return kExitInvalid;
    }
  }
  if (o.slurm) {
    std::filesystem::path out(o.driver.outDir);
    std::string script = (out / "sweep.sbatch").string();
    std::error_code ec;
    std::filesystem::create_directories(out / "slurm", ec);   // sbatch opens the tasks' logs there
    if (auto e = driver::writeOutputs({{script, sweep::slurmScript(selfPath(), o.driver.files[0], o.driver.outDir,
                                                                   o.driver.includes, tasks, o.sbatchOptions)}})) {
      std::cerr << "dflc: error: cannot write '" << e->path << "': " << e->reason << "\n";
      return kExitInvalid;
    }
    std::cout << "wrote " << script << ": " << points.size() << " points in a job array of " << tasks << " tasks\n";
    if (!o.submit) {
      std::cout << "submit it with 'sbatch " << script << "', then run 'dflc sweep --merge " << o.driver.outDir
                << "'\n";
      return kExitOk;
    }
    std::string job, merge;
    if (runProgram({"sbatch", "--parsable", script}, &job) != 0) {
      std::cerr << "dflc: error: sbatch did not take " << script << "\n";
      return kExitInvalid;
    }
    job = job.substr(0, job.find_first_of(";\n"));
    std::string outAbs = std::filesystem::absolute(out).string();
    if (runProgram({"sbatch", "--parsable", "--job-name=dflc-sweep-merge", "--dependency=afterany:" + job,
                    "--output=" + outAbs + "/slurm/merge.out",
                    "--wrap=exec '" + selfPath() + "' sweep --merge '" + outAbs + "'"},
                   &merge) != 0) {
      std::cerr << "dflc: error: sbatch did not take the merge job after job " << job << "\n";
      return kExitInvalid;
    }
    merge = merge.substr(0, merge.find_first_of(";\n"));
    std::cout << "submitted job array " << job << " and merge job " << merge << " (after it)\n";
    return kExitOk;
  }
  if (!o.sshLogins.empty()) {
    int status = runProgram(sweep::parallelCommand(selfPath(), o.driver.files[0], o.driver.outDir, o.driver.includes,
                                                   tasks, o.sshLogins));
    if (status != 0) {
      std::cerr << "dflc: error: GNU parallel failed (exit " << status << ")\n";
      return kExitInvalid;
    }
    return mergeAndReport(o.driver.outDir);
  }
  sweep::RunOptions ro{o.driver.outDir, o.driver.includes, 1, o.slice, o.slices, {}};
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
  if (!sweep::runPoints(*spec, points, ro, s)) {
    std::cerr << "dflc: error: " << s.error << "\n";
    return kExitInvalid;
  }
  if (o.slices > 1) {
    std::cout << "slice " << o.slice << "/" << o.slices << ": " << s.points << " points, " << s.resumed
              << " already finished, " << s.solved << " solved now\n";
    return s.solved + s.resumed == s.points ? kExitOk : kExitInvalid;
  }
  return mergeAndReport(o.driver.outDir);
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
      std::cerr << "dflc: error: cannot open log file '" << o.logFile << "'\nTry 'dflc --help'.\n";
      return kExitUsage;
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
        return runImport(cl, c);
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
