// What one dflc invocation does, whoever runs it: the CLI fills these from its
// command line, the language server from its flags and the editor's
// configuration, the benchmarks and the fuzzer by hand. The same options give
// the same diagnostics in every client (docs/design.md, "The driver").
#pragma once

#include "scheduler/kapla/IntraLayerSolver.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dfl::driver {

/// dflc's version, as `dflc --version`, the server's `serverInfo` and the
/// header of a compiled schedule print it.
inline constexpr const char *kVersion = "0.1.0";

/// The time limit of a solve nobody gave one (`dflc compile` without
/// --time-limit): long enough for every stdlib network with every solver
/// (the exhaustive yardstick's largest, GoogLeNet training, takes about two
/// minutes), short enough that a hostile input cannot hold a CI job or a
/// service for good. A client with a user waiting (the language server) sets
/// its own, shorter one.
inline constexpr double kDefaultTimeLimitSeconds = 600;

/// A latency bound as written: cycles, or seconds (converted at the clock of
/// the hardware the schedule runs on).
struct LatencyBound {
  double value = 0;
  bool seconds = false;
  std::string text;   // as given, for messages
};

struct DriverOptions {
  std::vector<std::string> files;      // the FILEs; the first is the editor's document
  std::vector<std::string> includes;   // -I dirs; the stdlib root is searched after them
  /// The root searched after the -I dirs; nullopt: $DFLC_PATH, then the stdlib
  /// next to the binary (appendDefaultSearchRoots, frontend/Loader.h).
  /// The fuzzer gives its sandbox.
  std::optional<std::string> stdlibRoot;
  /// Texts that take precedence over the disk, keyed by canonical path (the
  /// language server's open documents; frontend/Loader.h).
  std::map<std::string, std::string> openBuffers;
  bool train = false;                  // append the backward pass (docs/language.md, "Training")
  unsigned errorLimit = 20;            // 0: no limit
  std::string solver = "kapla";        // a name of solverNames()
  std::string objective = "energy";    // energy, latency or edp
  size_t topK = 4;                     // segment chains the inter-layer DP keeps
  double gapPercent = 0;               // --gap: the exact search's optimality gap tolerated, in %
  /// --time-limit: seconds the solve may take; then the best schedule found
  /// (scheduler/kapla/SolveBudget.h). nullopt: no limit (`--time-limit none`).
  /// Every solve has one unless a client says otherwise (docs/solver.md,
  /// "Solving under a budget").
  std::optional<double> timeLimitSeconds = kDefaultTimeLimitSeconds;
  /// --jobs (compile): threads for the solver's independent solves
  /// (SolverOptions::threads; 0: the CPUs this process may use).
  size_t solveThreads = 0;
  /// --batch: every network's batch, in place of the one it declares.
  std::optional<int64_t> batch;
  /// --no-pipelining: solve layer by layer (SolverOptions::pipelining).
  bool pipelining = true;
  /// --max-latency, in cycles or (seconds) at the hardware's clock.
  std::optional<LatencyBound> maxLatency;
  /// --max-energy, in pJ.
  std::optional<double> maxEnergyPj;
  /// --pareto: also write OUT/pareto.json, the energy-latency front.
  bool pareto = false;
  /// false (--no-plots): writeOutputs() draws no OUT/plots/ (docs/cli.md, "Plots").
  bool plots = true;
  std::string outDir;                  // where writeOutputs() writes
  bool timePasses = false;             // the client prints PassTimer::report()
  /// E0820 when the FILEs declare no schedule: `dflc check`'s rule. The
  /// language server turns it off, since an editor opens network and hardware
  /// files too.
  bool requireSchedule = true;
  /// --debug-internal-error: analyze() does nothing, so the next stage's
  /// precondition check fails for real (tests/lit/cli/internal-error.test).
  bool debugSkipAnalysis = false;
};

/// nullopt if `name` is a registered solver, else the message saying so
/// ("unknown solver 'kapl'; did you mean 'kapla'? (expected ...)").
std::optional<std::string> solverNameError(const std::string &name);
/// The same for an objective name.
std::optional<std::string> objectiveNameError(const std::string &name);
/// The objective a valid name stands for.
Objective objectiveOf(const std::string &name);
/// --batch's value: a positive integer; nullopt with `error` set if not.
std::optional<int64_t> parseBatch(const std::string &text, std::string &error);
/// --work-limit's value, the simulator's work bound in points
/// (sim::SimOptions::workLimit): a positive integer, or 2^K, at most 2^53;
/// nullopt with `error` set if not.
std::optional<double> parseWorkLimit(const std::string &text, std::string &error);
/// --max-latency's value: a positive number of cycles (optionally followed by
/// "cycles") or of s, ms, us or ns; nullopt with `error` set if not.
std::optional<LatencyBound> parseLatencyBound(const std::string &text, std::string &error);
/// --max-energy's value in pJ: a positive number with an energy unit (fJ, pJ,
/// nJ, uJ, mJ, J: frontend/Units); nullopt with `error` set if not.
std::optional<double> parseEnergyBound(const std::string &text, std::string &error);

} // namespace dfl::driver
