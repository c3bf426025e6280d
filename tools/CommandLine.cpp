#include "tools/CommandLine.h"

#include "frontend/OnnxImporter.h"
#include "support/Diagnostics.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace dfl::tools {

const char *const kHelp = R"(dflc - a compiler for neural-network accelerator dataflow

Usage:
  dflc [compile] NET HW [SCHED] -o OUT [options]
                                     fill in every directive SCHED leaves out
                                     (or schedule from scratch) and write
                                     OUT/schedule.dfl and OUT/report.json;
                                     on a cluster/core DSA (docs/graphturbo.md)
                                     schedule with GraphTurbo beside its
                                     baselines and write OUT/report.json
                                     --solver kapla|exhaustive|random,
                                     --gap P: with --solver exhaustive,
                                     stop each layer's search once its
                                     schedule is proved within P % of the
                                     optimum (default 0: prove it),
                                     --objective energy|latency|edp,
                                     --top-k N: segment chains kept for
                                     the real solve (default 4),
                                     --jobs N: threads solving (default:
                                     the CPUs this process may use; the
                                     schedule does not depend on it),
                                     --train: schedule training (the network
                                     with its backward layers),
                                     --time-limit SECONDS|none: stop the
                                     solver then and write the best schedule
                                     found (default 600),
                                     --no-pipelining: layer by layer, no
                                     inter-layer segments,
                                     --max-latency T (cycles; s, ms, us, ns),
                                     --max-energy E (pJ, nJ, uJ, mJ, J):
                                     the best schedule within the bounds,
                                     --pareto: also OUT/pareto.json, the
                                     energy-latency front found,
                                     --no-plots: write no OUT/plots/,
                                     -v, --verbose: also print why the
                                     solver chose its segments (each priced
                                     every way) and its best chains
  dflc sim FILE... -o OUT [options]  run a complete schedule (the FILEs hold
                                     it, with its network and hardware) in
                                     JIT-compiled kernels on seeded data;
                                     check every layer's output against an
                                     independent reference and every access
                                     count against the analysis; write
                                     OUT/sim.json and OUT/kernels/LAYER.ll
                                     --layers A,B: only these layers (and
                                     the pipelined segments holding them),
                                     --seed N: the data's seed (default 1),
                                     --jobs N: threads compiling kernels
                                     (default: the CPUs this process may
                                     use; the results do not depend on it),
                                     --work-limit N: the work bound in
                                     points, an integer or 2^K (default
                                     2^36, about ten minutes; past it the
                                     run seeds what it leaves out),
                                     --pipelines-only: only the pipelined
                                     segments' dependences and LCUs, no
                                     kernels (OUT/pipeline.json);
                                     `dflc NET HW -o OUT --sim` solves first;
                                     for a computational-memory chip (NET
                                     CM_HW): place it, run its cores cycle
                                     by cycle through their LCUs, write
                                     OUT/sim.json (docs/cm.md)
  dflc embed NET HW [--json]         embed every intrinsic the FILEs declare
                                     into every multiply-accumulate layer
                                     (docs/embedding.md): per layer the
                                     chosen embedding, its overheads, the
                                     transformations and the solve statistics;
                                     --time-limit SECONDS: per model and
                                     operand order (default 1)
  dflc show [options] FILE...        print networks (per layer: type, shapes,
                                     loop bounds, MACs; totals) and hardware
                                     --loops: print the schedules in the
                                     FILEs as loop nests per level, outermost
                                     first, with what each buffer holds
  dflc check [options] FILE...       check the schedules in the FILEs (with the
                                     network and hardware they name): print a
                                     per-layer table of energy, latency and
                                     utilization, or every problem
                                     --allow-partial: an incomplete schedule
                                     is not an error; --train: the schedule
                                     is for training
  dflc diff [options] A B            compare two schedules of one network on
                                     one hardware: per layer and in total
                                     energy and latency (B/A), the energy by
                                     component, the segments, and the
                                     directives that differ
  dflc sweep SPEC -o OUT [options]   solve every point of a design-space sweep
                                     (docs/sweep.md) on all cores, skipping
                                     points OUT already has; write
                                     OUT/sweep.csv, OUT/sweep.json and
                                     OUT/pareto.svg
                                     --jobs N: worker processes,
                                     --progress: a progress line on stderr
                                     even when it is not a terminal,
                                     --slice I/N: only the points whose
                                     index is I modulo N (no merge),
                                     --slurm [--tasks N] [--submit]
                                     [--sbatch-option OPT]: write (and
                                     submit) OUT/sweep.sbatch, a job array,
                                     --parallel SSHLOGINS [--tasks N]: run
                                     the slices through GNU parallel
  dflc sweep --merge OUT             merge OUT/points into the tables
  dflc import MODEL.onnx [-o NET.dfl]
                                     write the network of an ONNX model as
                                     canonical DFL (docs/onnx.md); any
                                     command reads MODEL.onnx as that network
  dflc import --timeloop FILE.yaml... OUT
                                     write a Timeloop v0.4 problem,
                                     architecture (with its ERT) and mapping,
                                     in one YAML file or several, as DFL:
                                     OUT/network.dfl, OUT/hardware.dfl and
                                     OUT/schedule.dfl, checked before they
                                     are written (docs/timeloop.md)
  dflc export --timeloop LAYER OUT   write layer LAYER of the compiled
                                     OUT/schedule.dfl as Timeloop v0.4 YAML
                                     (problem, architecture with its energy
                                     table, mapping) to OUT/timeloop/LAYER.yaml
                                     for timeloop-model (docs/timeloop.md)
  dflc fmt [-i | --check] FILE...    print FILEs in canonical DFL form
                                     -i: rewrite the files in place
                                     --check: exit 1 if a file is not canonical
  dflc lsp [--log FILE] [--lit-test] [-I DIR] [--train] [--batch N]
           [--solver NAME] [--objective NAME]
                                     run the language server on stdio
                                     (docs/lsp.md)
  dflc --list-diagnostics[=markdown] print the table of diagnostic codes
  dflc --help | --version

Options:
  -I DIR                 add DIR to the import search roots
  --batch N              (compile, check, diff, show, lsp) every network's batch is N,
                         whatever it declares
  --json                 (show, embed) print JSON instead of text
  --format text|json|sarif
                         how diagnostics are printed (to stderr; default
                         text); for check, json and sarif go to stdout with
                         the report
  --error-limit N        stop after N errors (default 20; 0: no limit)
  --color | --no-color   colour text diagnostics (default: if stderr is a tty)
  --time-passes          print the wall time of each stage to stderr

Exit status: 0 ok, 1 invalid input, 2 usage error, 3 internal compiler error.
See docs/cli.md.
)";

namespace {

/// Reads the arguments in order; each method consumes what it recognizes.
class Parser {
public:
  Parser(const std::vector<std::string> &args, std::string &error) : args_(args), error_(error) {}

  /// The value of `flag` given as "FLAG VALUE" or "FLAG=VALUE" (or "-oVALUE",
  /// "-IVALUE" for one-letter flags); nullopt if the argument at `i` is not
  /// `flag`. `missing` is set if the value is missing.
  /// An integer option's value in [lo, hi], or nullopt with `what` as the error.
  std::optional<long> integer(const std::string &v, long lo, long hi, const std::string &what) {
    char *end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || n < lo || n > hi) {
      error_ = what + ", got '" + v + "'";
      return std::nullopt;
    }
    return n;
  }

  std::optional<std::string> value(size_t &i, const std::string &flag, bool &missing) {
    const std::string &a = args_[i];
    if (a == flag) {
      if (i + 1 >= args_.size()) {
        error_ = "option '" + flag + "' needs a value";
        missing = true;
        return std::nullopt;
      }
      return args_[++i];
    }
    bool shortFlag = flag.size() == 2 && flag[0] == '-' && flag[1] != '-';
    if (shortFlag && a.rfind(flag, 0) == 0 && a.size() > 2 && !(flag == "-o" && a[2] == '-'))
      return a.substr(2);
    if (!shortFlag && a.rfind(flag + "=", 0) == 0)
      return a.substr(flag.size() + 1);
    return std::nullopt;
  }

  /// --solver, --objective, -I, --train and --batch, which `dflc lsp` shares: true if
  /// the argument at `i` was one (with `failed` set if it was wrong).
  bool driverOption(size_t &i, driver::DriverOptions &o, bool &failed) {
    if (args_[i] == "--train") {
      o.train = true;
      return true;
    }
    if (auto v = value(i, "-I", failed)) {
      o.includes.push_back(*v);
      return true;
    }
    if (auto v = value(i, "--solver", failed)) {
      if (auto e = driver::solverNameError(*v))
        error_ = *e, failed = true;
      o.solver = *v;
      return true;
    }
    if (auto v = value(i, "--objective", failed)) {
      if (auto e = driver::objectiveNameError(*v))
        error_ = *e, failed = true;
      o.objective = *v;
      return true;
    }
    if (auto v = value(i, "--batch", failed)) {
      if (!(o.batch = driver::parseBatch(*v, error_)))
        failed = true;
      return true;
    }
    return failed;
  }

  std::optional<CommandLine> lsp() {
    CommandLine cl;
    cl.command = "lsp";
    for (size_t i = 1; i < args_.size(); ++i) {
      bool failed = false;
      if (args_[i] == "--lit-test") {
        cl.litTest = true;
        continue;
      }
      if (auto v = value(i, "--log", failed)) {
        cl.logFile = *v;
        continue;
      }
      if (!failed && driverOption(i, cl.driver, failed) && !failed)
        continue;
      if (!failed)
        error_ = "unknown option of 'dflc lsp': '" + args_[i] + "'" +
                 didYouMean(args_[i], {"--log", "--lit-test", "-I", "--train", "--batch", "--solver", "--objective"});
      return std::nullopt;
    }
    return cl;
  }

  std::optional<CommandLine> command() {
    CommandLine o;
    static const std::vector<std::string> commands = {"compile", "show", "check", "diff", "sim", "fmt", "embed", "sweep", "import",
                                                       "export"};
    for (size_t i = 0; i < args_.size(); ++i) {
      const std::string &a = args_[i];
      bool failed = false;
      if (driverOption(i, o.driver, failed)) {
        if (failed)
          return std::nullopt;
      } else if (flag(a, o)) {
      } else if (auto v = value(i, "-o", failed)) {
        o.driver.outDir = *v;
      } else if (auto v = value(i, "--top-k", failed)) {
        auto n = integer(*v, 1, 1000, "--top-k needs an integer from 1 to 1000");
        if (!n)
          return std::nullopt;
        o.driver.topK = static_cast<size_t>(*n);
      } else if (auto v = value(i, "--gap", failed)) {
        // A percentage, "0.5" or "0.5%": the exact search's gap tolerated.
        std::string text = *v;
        if (!text.empty() && text.back() == '%')
          text.pop_back();
        char *end = nullptr;
        const double g = std::strtod(text.c_str(), &end);
        if (text.empty() || *end || !(g >= 0) || g > 100) {
          error_ = "--gap needs a percentage from 0 to 100 (e.g. '0.5' or '0.5%'), got '" + *v + "'";
          return std::nullopt;
        }
        o.driver.gapPercent = g;
      } else if (auto v = value(i, "--time-limit", failed)) {
        o.timeLimitGiven = true;
        if (*v == "none") {
          o.driver.timeLimitSeconds = std::nullopt;
          continue;
        }
        char *end = nullptr;
        double t = std::strtod(v->c_str(), &end);
        if (v->empty() || *end || !(t >= 0) || t > 1e9) {
          error_ = "--time-limit needs a non-negative number of seconds or 'none', got '" + *v + "'";
          return std::nullopt;
        }
        o.driver.timeLimitSeconds = t;
      } else if (auto v = value(i, "--max-latency", failed)) {
        if (!(o.driver.maxLatency = driver::parseLatencyBound(*v, error_)))
          return std::nullopt;
      } else if (auto v = value(i, "--max-energy", failed)) {
        if (!(o.driver.maxEnergyPj = driver::parseEnergyBound(*v, error_)))
          return std::nullopt;
      } else if (auto v = value(i, "--timeloop", failed)) {
        o.timeloop = *v;
      } else if (auto v = value(i, "--merge", failed)) {
        o.mergeDir = *v;
      } else if (auto v = value(i, "--jobs", failed)) {
        auto n = integer(*v, 1, 4096, "--jobs needs an integer from 1 to 4096");
        if (!n)
          return std::nullopt;
        o.jobs = static_cast<size_t>(*n);
        o.driver.solveThreads = o.jobs.value();
      } else if (auto v = value(i, "--tasks", failed)) {
        auto n = integer(*v, 1, 100000, "--tasks needs an integer from 1 to 100000");
        if (!n)
          return std::nullopt;
        o.tasks = static_cast<size_t>(*n);
      } else if (auto v = value(i, "--slice", failed)) {
        size_t slash = v->find('/');
        auto n = slash == std::string::npos ? std::nullopt
                                            : integer(v->substr(slash + 1), 1, 100000, "--slice needs I/N with 0 <= I < N");
        auto k = n ? integer(v->substr(0, slash), 0, *n - 1, "--slice needs I/N with 0 <= I < N") : std::nullopt;
        if (!k) {
          error_ = "--slice needs I/N with 0 <= I < N, got '" + *v + "'";
          return std::nullopt;
        }
        o.slice = static_cast<size_t>(*k), o.slices = static_cast<size_t>(*n);
      } else if (auto v = value(i, "--sbatch-option", failed)) {
        o.sbatchOptions.push_back(*v);
      } else if (auto v = value(i, "--parallel", failed)) {
        o.sshLogins = *v;
      } else if (auto v = value(i, "--layers", failed)) {
        o.simLayers.clear();
        for (size_t at = 0; at <= v->size();) {
          size_t comma = std::min(v->find(',', at), v->size());
          if (comma > at)
            o.simLayers.push_back(v->substr(at, comma - at));
          at = comma + 1;
        }
        if (o.simLayers.empty()) {
          error_ = "--layers needs layer names separated by commas";
          return std::nullopt;
        }
      } else if (auto v = value(i, "--seed", failed)) {
        auto n = integer(*v, 0, std::numeric_limits<long>::max(), "--seed needs a non-negative integer");
        if (!n)
          return std::nullopt;
        o.seed = static_cast<uint64_t>(*n);
      } else if (auto v = value(i, "--work-limit", failed)) {
        if (!(o.workLimit = driver::parseWorkLimit(*v, error_)))
          return std::nullopt;
      } else if (auto v = value(i, "--format", failed)) {
        if (*v != "text" && *v != "json" && *v != "sarif") {
          error_ = "unknown diagnostics format '" + *v + "'" + didYouMean(*v, {"text", "json", "sarif"}) +
                   " (expected text, json or sarif)";
          return std::nullopt;
        }
        o.format = *v;
      } else if (auto v = value(i, "--error-limit", failed)) {
        auto n = integer(*v, 0, std::numeric_limits<long>::max(), "--error-limit needs a non-negative integer");
        if (!n)
          return std::nullopt;
        o.driver.errorLimit = static_cast<unsigned>(*n);
      } else if (failed) {
        return std::nullopt;
      } else if (a == "--") {
        o.driver.files.insert(o.driver.files.end(), args_.begin() + static_cast<long>(i) + 1, args_.end());
        break;
      } else if (a.size() > 1 && a[0] == '-') {
        error_ = "unknown option '" + a + "'" +
                 didYouMean(a, {"--json", "--format", "--error-limit", "--color", "--no-color", "--check",
                                "--allow-partial", "--loops", "--train", "--solver", "--objective", "--top-k", "--gap", "--time-limit", "--time-passes",
                                "--batch", "--no-pipelining", "--max-latency", "--max-energy", "--pareto", "--no-plots",
                                "--verbose", "--sim", "--pipelines-only", "--layers", "--seed", "--work-limit", "--merge", "--jobs", "--tasks", "--slice",
                                "--progress", "--slurm", "--submit", "--sbatch-option", "--parallel",
                                "--timeloop", "--help", "--version", "-i", "-I"});
        return std::nullopt;
      } else if (o.command.empty()) {
        if (std::find(commands.begin(), commands.end(), a) == commands.end()) {
          if ((a.size() > 4 && a.substr(a.size() - 4) == ".dfl") || isOnnxPath(a)) {
            o.command = "compile";   // the default mode: dflc NET HW -o OUT
            o.driver.files.push_back(a);
            continue;
          }
          error_ = "unknown command '" + a + "'" + didYouMean(a, commands) + " (expected compile, show, check, diff, sim, fmt, embed, sweep, import or export)";
          return std::nullopt;
        }
        o.command = a;
      } else {
        o.driver.files.push_back(a);
      }
    }
    if (auto e = misuse(o)) {
      error_ = *e;
      return std::nullopt;
    }
    if (o.command == "import" && !o.timeloop.empty()) {   // the YAML files, then OUT
      o.driver.outDir = o.driver.files.back();
      o.driver.files.back() = o.timeloop;
      std::rotate(o.driver.files.rbegin(), o.driver.files.rbegin() + 1, o.driver.files.rend());
    }
    if (o.command == "export") {   // reads OUT/schedule.dfl, writes beside it
      o.driver.outDir = o.driver.files[0];
      o.driver.files[0] = o.driver.outDir + (o.driver.outDir.back() == '/' ? "" : "/") + "schedule.dfl";
    }
    return o;
  }

private:
  /// The options that take no value, each setting one field: a table, so
  /// that the option loop reads as the options that take one.
  static bool flag(const std::string &a, CommandLine &o) {
    using Set = void (*)(CommandLine &);
    static const std::vector<std::pair<const char *, Set>> flags = {
        {"--json", [](CommandLine &c) { c.json = true; }},
        {"-i", [](CommandLine &c) { c.inPlace = true; }},
        {"--check", [](CommandLine &c) { c.check = true; }},
        {"--loops", [](CommandLine &c) { c.loops = true; }},
        {"--allow-partial", [](CommandLine &c) { c.allowPartial = true; }},
        {"--time-passes", [](CommandLine &c) { c.driver.timePasses = true; }},
        {"--debug-internal-error", [](CommandLine &c) { c.driver.debugSkipAnalysis = true; }},
        {"--debug-wait-after-lock", [](CommandLine &c) { c.debugWaitAfterLock = true; }},
        {"--no-pipelining", [](CommandLine &c) { c.driver.pipelining = false; }},
        {"--progress", [](CommandLine &c) { c.progress = true; }},
        {"--slurm", [](CommandLine &c) { c.slurm = true; }},
        {"--submit", [](CommandLine &c) { c.submit = true; }},
        {"--pareto", [](CommandLine &c) { c.driver.pareto = true; }},
        {"--no-plots", [](CommandLine &c) { c.driver.plots = false; }},
        {"-v", [](CommandLine &c) { c.verbose = true; }},
        {"--verbose", [](CommandLine &c) { c.verbose = true; }},
        {"--sim", [](CommandLine &c) { c.sim = true; }},
        {"--pipelines-only", [](CommandLine &c) { c.pipelinesOnly = true; }},
        {"--color", [](CommandLine &c) { c.color = true; }},
        {"--no-color", [](CommandLine &c) { c.color = false; }},
    };
    for (const auto &[name, set] : flags)
      if (a == name) {
        set(o);
        return true;
      }
    return false;
  }

  /// An option given to a command that does not take it, or a missing one.
  static std::optional<std::string> misuse(const CommandLine &o) {
    if (o.command.empty())
      return "no command given";
    const bool simulates = o.command == "sim" || o.sim;
    bool sweepOption = !o.mergeDir.empty() || (o.jobs && !simulates && o.command != "compile") || o.slices > 1 || o.progress || o.slurm ||
                       o.submit || !o.sbatchOptions.empty() || o.tasks || !o.sshLogins.empty();
    if (o.command != "sweep" && sweepOption)
      return "--merge, --jobs, --slice, --progress, --slurm, --submit, --sbatch-option, --tasks and --parallel are "
             "options of 'dflc sweep' (--jobs also of 'dflc sim' and 'dflc compile')";
    if (o.command == "sweep")
      return sweepMisuse(o);
    if (o.driver.files.empty() && !(o.command == "import" && !o.timeloop.empty()))
      return "'dflc " + o.command + "' needs at least one FILE";
    if (o.command == "import" && !o.timeloop.empty())
      return importTimeloopMisuse(o);
    if (o.command == "import" && (o.driver.files.size() != 1 || !isOnnxPath(o.driver.files[0])))
      return "'dflc import' takes one ONNX model, MODEL.onnx";
    if (o.command == "import" && o.driver.batch)
      return "--batch is an option of compile, check, sim and show";
    if (o.command == "export")
      return exportMisuse(o);
    if (!o.timeloop.empty())
      return "--timeloop is an option of 'dflc export' and 'dflc import'";
    if (o.command == "diff" && o.driver.files.size() != 2)
      return "'dflc diff' takes two FILEs, A and B, a schedule in each";
    if (o.command != "show" && o.command != "embed" && o.json)
      return "--json is an option of 'dflc show' and 'dflc embed'";
    if (o.command != "fmt" && (o.inPlace || o.check))
      return "-i and --check are options of 'dflc fmt'";
    if (o.command == "fmt" && o.driver.train)
      return "--train is an option of compile, check and show";
    if (o.command != "check" && o.command != "compile" && o.driver.debugSkipAnalysis)
      return "--debug-internal-error is an option of check and compile";
    if (o.command != "compile" && o.command != "sim" && o.debugWaitAfterLock)
      return "--debug-wait-after-lock is an option of compile and sim";
    if (o.command != "show" && o.loops)
      return "--loops is an option of 'dflc show'";
    if (o.loops && o.json)
      return "--loops prints text; the loops' trip counts are in 'dflc check --format json'";
    if (o.command != "check" && o.allowPartial)
      return "--allow-partial is an option of 'dflc check'";
    if ((o.command == "compile" || o.command == "sim") && o.driver.outDir.empty())
      return "'dflc " + o.command + "' needs an output directory: -o OUT";
    const driver::DriverOptions defaults;
    if (o.command != "compile" && o.command != "sim" && o.command != "import" && !o.driver.outDir.empty())
      return "-o is an option of 'dflc compile', 'dflc sim' and 'dflc import'";
    if (o.command != "compile" && (o.driver.solver != defaults.solver ||
                                   o.driver.objective != defaults.objective || o.driver.topK != defaults.topK))
      return "--solver, --objective and --top-k are options of 'dflc compile'";
    if (o.driver.gapPercent > 0 && (o.command != "compile" || o.driver.solver != "exhaustive"))
      return "--gap is an option of 'dflc compile --solver exhaustive'";
    if (o.command != "compile" && o.verbose)
      return "-v is an option of 'dflc compile'";
    if (o.command != "compile" && o.sim)
      return "--sim is an option of 'dflc compile' ('dflc sim' simulates a schedule you have)";
    if (!simulates && (!o.simLayers.empty() || o.seed || o.pipelinesOnly || o.workLimit))
      return "--layers, --seed, --work-limit and --pipelines-only are options of 'dflc sim' and 'dflc compile --sim'";
    if (o.command != "compile" && o.command != "embed" && o.timeLimitGiven)
      return "--time-limit is an option of 'dflc compile' and 'dflc embed'";
    if (o.command != "compile" && (!o.driver.pipelining || o.driver.maxLatency || o.driver.maxEnergyPj ||
                                   o.driver.pareto || !o.driver.plots))
      return "--no-pipelining, --max-latency, --max-energy, --pareto and --no-plots are options of 'dflc compile'";
    if (o.command == "fmt" && o.driver.batch)
      return "--batch is an option of compile, check, sim and show";
    if (o.inPlace && o.check)
      return "-i and --check cannot be combined";
    return std::nullopt;
  }

  /// Whether an option of compile, sim, show, fmt or check is given: -o,
  /// the solver's, the simulator's, the report's (the Timeloop commands take none).
  static bool otherCommandsOption(const CommandLine &o) {
    const driver::DriverOptions defaults;
    return !o.driver.outDir.empty() || o.json || o.loops || o.sim || o.timeLimitGiven ||
           o.driver.solver != defaults.solver || o.driver.objective != defaults.objective || !o.driver.pipelining ||
           o.driver.pareto || !o.driver.plots || o.inPlace || o.check || o.allowPartial || o.verbose ||
           o.debugWaitAfterLock || o.driver.debugSkipAnalysis || !o.simLayers.empty() || o.seed || o.workLimit ||
           o.pipelinesOnly;
  }

  /// `dflc export --timeloop LAYER OUT`: one OUT, read as OUT/schedule.dfl;
  /// the driver's options that change what a schedule means are not its.
  static std::optional<std::string> exportMisuse(const CommandLine &o) {
    if (o.timeloop.empty())
      return "'dflc export' needs the tool and the layer: --timeloop LAYER";
    if (o.driver.files.size() != 1 || o.driver.files[0].empty())
      return "'dflc export' takes one compiled output directory, OUT";
    if (otherCommandsOption(o))
      return "'dflc export' takes --timeloop LAYER, OUT, --batch, --train and the common options (-I, --format, "
             "--error-limit, --color, --time-passes) only: OUT/schedule.dfl says the rest";
    return std::nullopt;
  }

  /// `dflc import --timeloop FILE.yaml... OUT`: the YAML files, then OUT;
  /// the import reads nothing else and writes OUT/*.dfl.
  static std::optional<std::string> importTimeloopMisuse(const CommandLine &o) {
    if (o.driver.files.empty() || o.driver.files.back().empty())
      return "'dflc import --timeloop' takes the Timeloop YAML files, then the output directory: FILE.yaml... OUT";
    if (otherCommandsOption(o) || o.driver.batch || o.driver.train)
      return "'dflc import --timeloop' takes FILE.yaml... OUT and the common options (-I, --format, --error-limit, "
             "--color, --time-passes) only";
    return std::nullopt;
  }

  static std::optional<std::string> sweepMisuse(const CommandLine &o) {
    if (!o.mergeDir.empty())
      return o.driver.files.empty() && o.driver.outDir.empty() && !o.slurm && o.sshLogins.empty() && o.slices == 1
                 ? std::nullopt
                 : std::optional<std::string>("'dflc sweep --merge OUT' takes no other FILE or option");
    if (o.driver.files.size() != 1)
      return "'dflc sweep' takes one FILE, the sweep spec (or --merge OUT)";
    if (o.driver.outDir.empty())
      return "'dflc sweep' needs an output directory: -o OUT";
    if (o.slurm && !o.sshLogins.empty())
      return "--slurm and --parallel cannot be combined";
    if ((o.submit || !o.sbatchOptions.empty()) && !o.slurm)
      return "--submit and --sbatch-option are options of 'dflc sweep --slurm'";
    if (o.tasks && !o.slurm && o.sshLogins.empty())
      return "--tasks is an option of 'dflc sweep --slurm' and '--parallel'";
    if (o.slices > 1 && (o.slurm || !o.sshLogins.empty()))
      return "--slice runs one slice here; --slurm and --parallel run them all";
    const driver::DriverOptions defaults;
    if (o.driver.solver != defaults.solver || o.driver.objective != defaults.objective || o.driver.batch ||
        o.driver.train || o.timeLimitGiven)
      return "the sweep spec gives the solver, objectives, batches and time limit (docs/sweep.md)";
    return std::nullopt;
  }

  const std::vector<std::string> &args_;
  std::string &error_;
};

} // namespace

std::optional<CommandLine> parseCommandLine(const std::vector<std::string> &args, std::string &usageError) {
  for (const std::string &a : args) {
    CommandLine cl;
    if (a == "--help" || a == "-h")
      cl.command = "help";
    else if (a == "--version")
      cl.command = "version";
    else if (a == "--list-diagnostics" || a == "--list-diagnostics=markdown")
      cl.command = "list-diagnostics", cl.markdown = a != "--list-diagnostics";
    if (!cl.command.empty())
      return cl;
  }
  Parser parser(args, usageError);
  if (!args.empty() && args[0] == "lsp")
    return parser.lsp();
  return parser.command();
}

} // namespace dfl::tools
