// dflc's command line: the arguments become a CommandLine (what to run, with
// the driver's options and the CLI's own), or a usage error (exit 2). No
// printing here: main() prints the help, the version or the error.
// docs/cli.md is the reference; tests/lit/cli pins the messages.
#pragma once

#include "driver/DriverOptions.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl::tools {

struct CommandLine {
  /// compile, show, check, sim, fmt, lsp, help, version or list-diagnostics.
  std::string command;
  driver::DriverOptions driver;
  bool json = false, inPlace = false, check = false, allowPartial = false, loops = false;
  std::string format = "text";     // diagnostics: text, json or sarif
  std::optional<bool> color;
  bool markdown = false;           // --list-diagnostics=markdown
  bool timeLimitGiven = false;     // --time-limit, even "none" (compile only)
  // dflc sim, and dflc compile --sim
  bool sim = false;
  bool verbose = false;             // -v, --verbose (compile): why the solver chose its segments
  std::vector<std::string> simLayers;   // --layers a,b (empty: all)
  bool pipelinesOnly = false;           // --pipelines-only (dflc sim)
  std::optional<uint64_t> seed;         // --seed N
  std::optional<double> workLimit;      // --work-limit N: the simulator's work bound
  // dflc sweep (docs/sweep.md)
  std::string mergeDir;                 // --merge OUT
  std::optional<size_t> jobs;           // --jobs N (default: the CPUs this process may use)
  size_t slice = 0, slices = 1;         // --slice I/N
  bool progress = false;                // --progress: also when stderr is no terminal
  bool slurm = false, submit = false;   // --slurm [--submit]
  std::vector<std::string> sbatchOptions;   // --sbatch-option OPT
  std::optional<size_t> tasks;          // --tasks N: slices of --slurm and --parallel
  std::string sshLogins;                // --parallel SSHLOGINS
  // --timeloop's value: dflc export --timeloop LAYER OUT, dflc import
  // --timeloop FILE.yaml... OUT (the first FILE; the rest are in driver.files)
  std::string timeloop;
  // dflc lsp
  bool litTest = false;
  bool debugWaitAfterLock = false;  // --debug-wait-after-lock (compile, sim): read stdin to its end once OUT is locked
  std::string logFile;
};

/// The command line of `dflc ARGS...`; nullopt with `usageError` set (the
/// message after "dflc: error: ") if it is not one.
std::optional<CommandLine> parseCommandLine(const std::vector<std::string> &args, std::string &usageError);

/// `dflc --help`.
extern const char *const kHelp;

} // namespace dfl::tools
