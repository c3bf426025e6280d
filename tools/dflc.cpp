// dflc: the command-line driver. A thin main(): parses arguments, runs the
// front end (and, later, the scheduler and backend), renders diagnostics and
// chooses the exit code. docs/cli.md is its reference.
//
// Exit codes: 0 ok, 1 invalid input, 2 usage error, 3 internal error.
#include "scheduler/Analysis.h"
#include "support/Check.h"
#include "support/DiagnosticRenderer.h"
#include "lsp/LSPServer.h"
#include "frontend/Loader.h"
#include "model/ModelSummary.h"
#include "frontend/Parser.h"
#include "frontend/Printer.h"
#include "scheduler/Report.h"
#include "scheduler/ScheduleCheck.h"
#include "model/ScheduleWriter.h"
#include "scheduler/Solver.h"
#include "frontend/Sema.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dfl;

namespace {

constexpr int kExitOk = 0, kExitInvalid = 1, kExitUsage = 2, kExitInternal = 3;

const char *kVersion = "dflc 0.1.0";

const char *kHelp = R"(dflc - a compiler for neural-network accelerator dataflow

Usage:
  dflc [compile] NET HW [SCHED] -o OUT [options]
                                     fill in every directive SCHED leaves out
                                     (or schedule from scratch) and write
                                     OUT/schedule.dfl and OUT/report.json
                                     --solver kapla|exhaustive|random,
                                     --objective energy|latency|edp,
                                     --top-k N: segment chains kept for
                                     the real solve (default 4),
                                     --train: schedule training (the network
                                     with its backward layers)
  dflc show [options] FILE...        print networks (per layer: type, shapes,
                                     loop bounds, MACs; totals) and hardware
  dflc check [options] FILE...       check the schedules in the FILEs (with the
                                     network and hardware they name): print a
                                     per-layer table of energy, latency and
                                     utilization, or every problem
                                     --allow-partial: an incomplete schedule
                                     is not an error; --train: the schedule
                                     is for training
  dflc fmt [-i | --check] FILE...    print FILEs in canonical DFL form
                                     -i: rewrite the files in place
                                     --check: exit 1 if a file is not canonical
  dflc lsp [--log FILE] [--lit-test] [-I DIR]
                                     run the language server on stdio
                                     (docs/lsp.md)
  dflc --list-diagnostics[=markdown] print the table of diagnostic codes
  dflc --help | --version

Options:
  -I DIR                 add DIR to the import search roots
  --json                 (show) print JSON instead of text
  --format text|json|sarif
                         how diagnostics are printed (to stderr; default
                         text); for check, json and sarif go to stdout with
                         the report
  --error-limit N        stop after N errors (default 20; 0: no limit)
  --color | --no-color   colour text diagnostics (default: if stderr is a tty)

Exit status: 0 ok, 1 invalid input, 2 usage error, 3 internal compiler error.
See docs/cli.md.
)";

struct Options {
  std::string command;
  std::vector<std::string> files;
  std::vector<std::string> includes;
  bool json = false, inPlace = false, check = false, allowPartial = false, train = false;
  std::string format = "text";
  unsigned errorLimit = 20;
  std::optional<bool> color;
  std::string outDir, solver = "kapla", objective = "energy";
  size_t topK = 4;   // segment chains the inter-layer DP keeps
};

int usageError(const std::string &message) {
  std::cerr << "dflc: error: " << message << "\n" << "Try 'dflc --help'.\n";
  return kExitUsage;
}

std::optional<Options> parseArgs(int argc, char **argv, int &exitCode) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  static const std::vector<std::string> commands = {"compile", "show", "check", "fmt"};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](const char *flag) -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        exitCode = usageError(std::string("option '") + flag + "' needs a value");
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "-I") {
      auto v = value("-I");
      if (!v)
        return std::nullopt;
      o.includes.push_back(*v);
    } else if (a.rfind("-I", 0) == 0 && a.size() > 2) {
      o.includes.push_back(a.substr(2));
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "-i") {
      o.inPlace = true;
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--allow-partial") {
      o.allowPartial = true;
    } else if (a == "--train") {
      o.train = true;
    } else if (a == "-o" || (a.rfind("-o", 0) == 0 && a.size() > 2 && a[2] != '-')) {
      std::optional<std::string> v = a == "-o" ? value("-o") : a.substr(2);
      if (!v)
        return std::nullopt;
      o.outDir = *v;
    } else if (a == "--solver" || a.rfind("--solver=", 0) == 0) {
      std::optional<std::string> v = a == "--solver" ? value("--solver") : a.substr(9);
      if (!v)
        return std::nullopt;
      if (!makeSolver(*v)) {
        exitCode = usageError("unknown solver '" + *v + "'" + didYouMean(*v, solverNames()) + " (expected " +
                              joinList(solverNames()) + ")");
        return std::nullopt;
      }
      o.solver = *v;
    } else if (a == "--objective" || a.rfind("--objective=", 0) == 0) {
      std::optional<std::string> v = a == "--objective" ? value("--objective") : a.substr(12);
      if (!v)
        return std::nullopt;
      if (*v != "energy" && *v != "latency" && *v != "edp") {
        exitCode = usageError("unknown objective '" + *v + "'" + didYouMean(*v, {"energy", "latency", "edp"}) +
                              " (expected energy, latency or edp)");
        return std::nullopt;
      }
      o.objective = *v;
    } else if (a == "--top-k" || a.rfind("--top-k=", 0) == 0) {
      std::optional<std::string> v = a == "--top-k" ? value("--top-k") : a.substr(8);
      if (!v)
        return std::nullopt;
      char *end = nullptr;
      long n = std::strtol(v->c_str(), &end, 10);
      if (v->empty() || *end || n < 1 || n > 1000) {
        exitCode = usageError("--top-k needs an integer from 1 to 1000, got '" + *v + "'");
        return std::nullopt;
      }
      o.topK = static_cast<size_t>(n);
    } else if (a == "--format" || a.rfind("--format=", 0) == 0) {
      std::optional<std::string> v = a == "--format" ? value("--format") : a.substr(9);
      if (!v)
        return std::nullopt;
      if (*v != "text" && *v != "json" && *v != "sarif") {
        exitCode = usageError("unknown diagnostics format '" + *v + "'" + didYouMean(*v, {"text", "json", "sarif"}) +
                              " (expected text, json or sarif)");
        return std::nullopt;
      }
      o.format = *v;
    } else if (a == "--error-limit" || a.rfind("--error-limit=", 0) == 0) {
      std::optional<std::string> v = a == "--error-limit" ? value("--error-limit") : a.substr(14);
      if (!v)
        return std::nullopt;
      char *end = nullptr;
      long n = std::strtol(v->c_str(), &end, 10);
      if (v->empty() || *end || n < 0) {
        exitCode = usageError("--error-limit needs a non-negative integer, got '" + *v + "'");
        return std::nullopt;
      }
      o.errorLimit = static_cast<unsigned>(n);
    } else if (a == "--color") {
      o.color = true;
    } else if (a == "--no-color") {
      o.color = false;
    } else if (a == "--") {
      o.files.insert(o.files.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (a.size() > 1 && a[0] == '-') {
      exitCode = usageError("unknown option '" + a + "'" +
                            didYouMean(a, {"--json", "--format", "--error-limit", "--color", "--no-color", "--check",
                                           "--allow-partial", "--train", "--solver", "--objective", "--top-k", "--help", "--version", "-i", "-I"}));
      return std::nullopt;
    } else if (o.command.empty()) {
      if (std::find(commands.begin(), commands.end(), a) == commands.end()) {
        if (a.size() > 4 && a.substr(a.size() - 4) == ".dfl") {
          o.command = "compile";   // the default mode: dflc NET HW -o OUT
          o.files.push_back(a);
          continue;
        }
        exitCode = usageError("unknown command '" + a + "'" + didYouMean(a, commands) +
                              " (expected compile, show, check or fmt)");
        return std::nullopt;
      }
      o.command = a;
    } else {
      o.files.push_back(a);
    }
  }
  if (o.command.empty()) {
    exitCode = usageError("no command given");
    return std::nullopt;
  }
  if (o.files.empty()) {
    exitCode = usageError("'dflc " + o.command + "' needs at least one FILE");
    return std::nullopt;
  }
  if (o.command != "show" && o.json) {
    exitCode = usageError("--json is an option of 'dflc show'");
    return std::nullopt;
  }
  if (o.command != "fmt" && (o.inPlace || o.check)) {
    exitCode = usageError("-i and --check are options of 'dflc fmt'");
    return std::nullopt;
  }
  if (o.command == "fmt" && o.train) {
    exitCode = usageError("--train is an option of compile, check and show");
    return std::nullopt;
  }
  if (o.command != "check" && o.allowPartial) {
    exitCode = usageError("--allow-partial is an option of 'dflc check'");
    return std::nullopt;
  }
  if (o.command == "compile" && o.outDir.empty()) {
    exitCode = usageError("'dflc compile' needs an output directory: -o OUT");
    return std::nullopt;
  }
  if (o.command != "compile" && (!o.outDir.empty() || o.solver != "kapla" || o.objective != "energy" || o.topK != 4)) {
    exitCode = usageError("-o, --solver, --objective and --top-k are options of 'dflc compile'");
    return std::nullopt;
  }
  if (o.inPlace && o.check) {
    exitCode = usageError("-i and --check cannot be combined");
    return std::nullopt;
  }
  return o;
}

void printDiagnostics(const Options &o, const SourceManager &sm, const DiagnosticsEngine &diags) {
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
      std::cerr << "dflc: stopped at --error-limit " << o.errorLimit << "; --error-limit 0 shows every error\n";
  }
}

/// Writes `text` to `path` atomically: a temporary file in the same directory, then rename.
bool writeAtomically(const std::string &path, const std::string &text, std::string &error) {
  std::string tmp = path + ".dflc-tmp-" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      error = "cannot create " + tmp;
      return false;
    }
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      error = "cannot write " + tmp;
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    error = ec.message();
    return false;
  }
  return true;
}

int runShow(const Options &o) {
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  diags.setErrorLimit(o.errorLimit);
  LoadOptions lo{o.includes};
  appendDefaultSearchRoots(lo.searchRoots);
  LoadedFiles files = loadFiles(o.files, lo, sm, diags);
  Model model;
  if (!diags.hasErrors())
    model = analyze(files.files, diags, AnalyzeOptions{o.train});
  printDiagnostics(o, sm, diags);
  if (diags.hasErrors())
    return kExitInvalid;
  if (o.json) {
    std::cout << modelSummaryJson(model);
  } else {
    bool first = true;
    for (const Network &n : model.networks)
      std::cout << (first ? "" : "\n") << networkSummaryText(n), first = false;
    for (const Hardware &h : model.hardware)
      std::cout << (first ? "" : "\n") << hardwareSummaryText(h), first = false;
  }
  return kExitOk;
}

/// Loads and analyzes the FILEs; nullopt (diagnostics printed) on errors.
/// `roots`, if given, receives the buffer ids of the FILEs themselves.
std::optional<Model> runFrontend(const Options &o, SourceManager &sm, DiagnosticsEngine &diags,
                                 std::vector<uint32_t> *roots = nullptr) {
  diags.setErrorLimit(o.errorLimit);
  LoadOptions lo{o.includes};
  appendDefaultSearchRoots(lo.searchRoots);
  LoadedFiles files = loadFiles(o.files, lo, sm, diags);
  if (roots)
    *roots = files.roots;
  Model model;
  if (!diags.hasErrors())
    model = analyze(files.files, diags, AnalyzeOptions{o.train});
  if (diags.hasErrors())
    return std::nullopt;
  return model;
}

int runCheck(const Options &o) {
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  std::vector<uint32_t> roots;
  auto model = runFrontend(o, sm, diags, &roots);
  std::vector<CheckedSchedule> results;
  if (model) {
    // E0820 only if no FILE declares a schedule (an imported one is context).
    bool any = std::any_of(model->schedules.begin(), model->schedules.end(), [&](const Schedule &s) {
      return std::find(roots.begin(), roots.end(), s.range.begin.file) != roots.end();
    });
    if (!any)
      diags.report({}, diag::err_no_schedule) << joinList(o.files, ", ", " and ");
    results = checkSchedules(*model, roots, diags);
  }
  bool failed = diags.hasErrors();
  for (const CheckedSchedule &c : results)
    failed |= !c.result.complete && !o.allowPartial;
  if (o.format == "text") {
    printDiagnostics(o, sm, diags);
    if (!diags.hasErrors())
      for (size_t i = 0; i < results.size(); ++i)
        std::cout << (i ? "\n" : "")
                  << scheduleReportText(*model, model->schedules[results[i].schedule], results[i].result);
  } else if (o.format == "sarif") {
    std::cout << renderSarif(sm, diags.diagnostics());
  } else {
    nlohmann::ordered_json out = nlohmann::ordered_json::parse(renderJson(sm, diags.diagnostics()));
    out["schedules"] = nlohmann::ordered_json::array();
    for (const CheckedSchedule &c : results)
      out["schedules"].push_back(
          nlohmann::ordered_json::parse(scheduleReportJson(*model, model->schedules[c.schedule], c.result)));
    std::cout << out.dump(2) << "\n";
  }
  return failed ? kExitInvalid : kExitOk;
}

/// Picks the schedule to complete: the one in the inputs, or a new one for the
/// inputs' only network and hardware. Reports E0822 if that is ambiguous.
std::optional<Schedule> scheduleToComplete(const Model &model, DiagnosticsEngine &diags) {
  if (model.schedules.size() == 1)
    return model.schedules[0];
  if (model.schedules.size() > 1) {
    diags.report(model.schedules[1].range, diag::err_compile_ambiguous)
        << "the inputs hold " + std::to_string(model.schedules.size()) + " schedules; give one";
    return std::nullopt;
  }
  if (model.networks.size() != 1 || model.hardware.size() != 1) {
    diags.report({}, diag::err_compile_ambiguous)
        << "the inputs declare " + std::to_string(model.networks.size()) + " networks and " +
               std::to_string(model.hardware.size()) +
               " hardware templates; give one of each (or a schedule naming them)";
    return std::nullopt;
  }
  Schedule s;
  s.network = 0;
  s.hardware = 0;
  return s;
}

/// The path of `target` as an import written in a file in `dir`.
std::string importPath(const std::string &target, const std::string &dir) {
  std::error_code ec;
  fs::path rel = fs::relative(fs::absolute(target), fs::absolute(dir), ec);
  return ec || rel.empty() ? fs::absolute(target).string() : rel.string();
}

int runCompile(const Options &o) {
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  auto model = runFrontend(o, sm, diags);
  std::optional<Schedule> given;
  if (model)
    given = scheduleToComplete(*model, diags);
  if (given && (given->network < 0 || given->hardware < 0))
    given.reset();
  // The directives the user wrote must be valid on their own.
  if (given) {
    ScheduleResult check = analyzeSchedule(*model, *given);
    reportIssues(check.issues, diags);
  }
  if (!given || diags.hasErrors()) {
    printDiagnostics(o, sm, diags);
    return kExitInvalid;
  }
  const Network &net = model->networks[given->network];
  SolverOptions so;
  so.objective = o.objective == "latency" ? Objective::Latency : o.objective == "edp" ? Objective::EDP
                                                                                      : Objective::Energy;
  so.topK = o.topK;
  bool tty = isatty(STDERR_FILENO);
  if (tty)
    so.progress = [&](size_t done, size_t all) {
      std::cerr << "\rdflc: solving " << net.name << ": " << done << "/" << all << " layers" << std::flush;
      if (done == all)
        std::cerr << "\r\033[K";
    };
  SolveFailure failure;
  auto solution = makeSolver(o.solver)->solve(*model, *given, so, failure);
  if (!solution) {
    const Layer &l = net.layers.at(failure.layer);
    diags.report(l.nameRange, diag::err_no_valid_schedule) << l.name << failure.why;
    printDiagnostics(o, sm, diags);
    return kExitInvalid;
  }
  reportIssues(solution->result.issues, diags);
  if (!solution->result.valid || !solution->result.complete) {
    printDiagnostics(o, sm, diags);
    // A segment the user wrote can be impossible to satisfy (too little buffer
    // for its intermediates, say): the diagnostics point at it. Without user
    // segments an invalid result is our bug.
    if (!given->segments.empty())
      return kExitInvalid;
    std::cerr << "dflc: internal compiler error: the solver returned an invalid schedule\n";
    return kExitInternal;
  }
  // Outputs: written to temporaries first, renamed only when all are complete.
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  if (ec) {
    std::cerr << "dflc: error: cannot create output directory '" << o.outDir << "': " << ec.message() << "\n";
    return kExitInvalid;
  }
  std::vector<std::string> imports;
  for (const std::string &f : o.files)
    imports.push_back(importPath(f, o.outDir));
  std::string header = "The complete schedule of " + net.name + " on " + model->hardware[given->hardware].name +
                       ", written by " + kVersion + " (solver " + o.solver + ", objective " + o.objective +
                       (o.train ? ", training: forward and backward layers" : "") +
                       ").\nCheck it with: dflc check " + (o.train ? "--train " : "") + "schedule.dfl";
  Model printed = *model;
  std::string scheduleText = writeSchedule(printed, solution->schedule, imports, header);
  nlohmann::ordered_json report =
      nlohmann::ordered_json::parse(scheduleReportJson(*model, solution->schedule, solution->result));
  report["solver"] = {{"name", o.solver},
                      {"objective", o.objective},
                      {"candidates", solution->stats.candidates},
                      {"rejected", solution->stats.rejected},
                      {"top_k", so.topK},
                      {"segments",
                       {{"candidates", solution->stats.interLayer.candidates},
                        {"pruned_invalid", solution->stats.interLayer.prunedInvalid},
                        {"pruned_pareto", solution->stats.interLayer.prunedPareto},
                        {"pruned_bound", solution->stats.interLayer.prunedBound},
                        {"skipped_by_estimate", solution->stats.interLayer.skippedByEstimate},
                        {"chains_solved", solution->stats.interLayer.chains},
                        {"spatial_segments_solved", solution->stats.interLayer.segmentsSolved},
                        {"temporal_reserved", solution->stats.interLayer.temporalReserved},
                        {"reserve_solves", solution->stats.interLayer.reserveSolves}}}};
  std::vector<std::pair<std::string, std::string>> outputs = {
      {(fs::path(o.outDir) / "schedule.dfl").string(), scheduleText},
      {(fs::path(o.outDir) / "report.json").string(), report.dump(2) + "\n"}};
  std::vector<std::string> temps;
  for (auto &[path, text] : outputs) {
    std::string tmp = path + ".dflc-tmp-" + std::to_string(getpid());
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    temps.push_back(tmp);
    if (!out) {
      for (const std::string &t : temps)
        std::remove(t.c_str());
      std::cerr << "dflc: error: cannot write '" << path << "'\n";
      return kExitInvalid;
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    fs::rename(temps[i], outputs[i].first, ec);
  printDiagnostics(o, sm, diags);
  std::cout << scheduleReportText(*model, solution->schedule, solution->result);
  std::cout << "solver " << o.solver << ": " << solution->stats.candidates << " candidates evaluated ("
            << solution->stats.rejected << " invalid) in " << solution->stats.seconds << " s (layers "
            << solution->stats.layerSeconds << " s, segment estimate " << solution->stats.interLayer.estimateSeconds
            << " s, short list " << solution->stats.interLayer.shortListSeconds << " s); " 
            << solution->stats.interLayer.candidates << " spatial segment candidates, "
            << solution->stats.interLayer.prunedInvalid << " pruned as invalid, "
            << solution->stats.interLayer.prunedPareto << " as not Pareto-optimal, "
            << solution->stats.interLayer.prunedBound << " by the lower bound; "
            << solution->stats.interLayer.skippedByEstimate << " schemes skipped by their estimate; "
            << solution->stats.interLayer.temporalReserved << " temporal segments fit by reserving node buffer ("
            << solution->stats.interLayer.reserveSolves << " layer re-solves)\n"
            << "wrote " << outputs[0].first << " and " << outputs[1].first << "\n";
  return kExitOk;
}

int runFmt(const Options &o) {
  int status = kExitOk;
  for (const std::string &path : o.files) {
    SourceManager sm;
    DiagnosticsEngine diags(sm);
    diags.setErrorLimit(o.errorLimit);
    std::string error;
    auto id = fs::is_directory(path) ? std::nullopt : sm.loadFile(path, error);
    if (!id) {
      diags.report({}, diag::err_file_unreadable) << path << (error.empty() ? "is a directory" : error);
      printDiagnostics(o, sm, diags);
      status = kExitInvalid;
      continue;
    }
    auto file = parseFile(*id, sm, diags);
    if (!file) {
      printDiagnostics(o, sm, diags);
      status = kExitInvalid;
      continue;
    }
    std::string text = printFile(*file, sm);
    if (o.check) {
      if (text != sm.text(*id)) {
        std::cerr << path << ": not in canonical form (run 'dflc fmt -i " << path << "')\n";
        status = kExitInvalid;
      }
    } else if (o.inPlace) {
      if (text != sm.text(*id) && !writeAtomically(path, text, error)) {
        std::cerr << "dflc: error: cannot write '" << path << "': " << error << "\n";
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

/// dflc lsp [--log FILE] [--lit-test] [-I DIR]...: the language server on stdio.
int runLsp(const std::vector<std::string> &args) {
  lsp::LspOptions lo;
  lo.version = std::string(kVersion).substr(5);
  std::ofstream log;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--lit-test") {
      lo.litTest = true;
    } else if (a == "--log" || a == "-I") {
      if (i + 1 >= args.size())
        return usageError("option '" + a + "' needs a value");
      const std::string &v = args[++i];
      if (a == "-I") {
        lo.includes.push_back(v);
        continue;
      }
      log.open(v, std::ios::app);
      if (!log)
        return usageError("cannot open log file '" + v + "'");
      lo.log = &log;
    } else if (a.rfind("-I", 0) == 0 && a.size() > 2) {
      lo.includes.push_back(a.substr(2));
    } else {
      return usageError("unknown option of 'dflc lsp': '" + a + "'" + didYouMean(a, {"--log", "--lit-test", "-I"}));
    }
  }
  std::ios::sync_with_stdio(false);
  return lsp::runLanguageServer(std::cin, std::cout, lo);
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

} // namespace

int main(int argc, char **argv) {
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::cout << kHelp;
        return kExitOk;
      }
      if (a == "--version") {
        std::cout << kVersion << "\n";
        return kExitOk;
      }
      if (a == "--list-diagnostics" || a == "--list-diagnostics=markdown")
        return listDiagnostics(a != "--list-diagnostics");
    }
    if (argc > 1 && std::string(argv[1]) == "lsp")
      return runLsp({argv + 2, argv + argc});
    int exitCode = kExitUsage;
    auto options = parseArgs(argc, argv, exitCode);
    if (!options)
      return exitCode;
    if (options->command == "show")
      return runShow(*options);
    if (options->command == "check")
      return runCheck(*options);
    if (options->command == "compile")
      return runCompile(*options);
    return runFmt(*options);
  } catch (const InternalError &e) {
    std::cerr << "dflc: internal compiler error: " << e.what() << "\n";
  } catch (const std::exception &e) {
    std::cerr << "dflc: internal compiler error: " << e.what() << "\n";
  }
  return kExitInternal;
}
