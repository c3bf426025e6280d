// Running a sweep's points and collecting their results (docs/sweep.md).
//
// runPoints() solves points on a pool of worker processes, one point per
// process (fork: a crash or a runaway solve loses one point, not the sweep),
// each through the one driver (driver/Compilation.h) with the point's
// hardware variant as an open buffer. Each finished point writes
// OUT/points/<id>.json atomically, so a run killed at any moment leaves whole
// results only, and a run over the same OUT skips them. mergeSweep() turns
// whatever OUT/points holds into OUT/sweep.csv, OUT/sweep.json and
// OUT/pareto.svg, in point order: two runs of one spec, local or on a
// cluster, give the same bytes.
#pragma once

#include "driver/OutputWriter.h"
#include "sweep/SweepSpec.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dfl::sweep {

struct RunOptions {
  std::string outDir;
  std::vector<std::string> includes;   // -I dirs, for the networks' imports
  size_t jobs = 1;                     // worker processes
  size_t slice = 0, slices = 1;        // this run solves the points with index % slices == slice
  /// Called after each point finished here: (done here, to do here, resumed).
  std::function<void(size_t, size_t, size_t)> progress;
  /// OUT, opened and locked by the caller (shared by the slices of one sweep);
  /// every file goes through it (driver/OutputWriter.h).
  const driver::OutputDir *out = nullptr;
};

struct RunSummary {
  size_t points = 0;     // in this slice
  size_t resumed = 0;    // found finished in OUT/points
  size_t solved = 0;     // solved now (including those with no valid schedule)
  size_t failed = 0;     // of those, without a schedule
};

// Every file a sweep reads back from OUT (spec.json, points/ID.json) is read
// as the loader reads inputs (a regular file of at most 64 MiB) and checked
// value by value: one dflc did not write this way is reported to `diags`,
// located in it (E0005, E1006), and false is returned.

/// OUT/spec.json: the spec's text and its points' ids, in order, which
/// --merge reads; false after reporting why not: OUT holds another spec's
/// sweep (E1008) or a spec.json dflc did not write, or cannot be written (E1401).
bool writeSpecRecord(const SweepSpec &spec, const std::vector<SweepPoint> &points, const driver::OutputDir &out,
                     SourceManager &sm, DiagnosticsEngine &diags);

/// Writes OUT/spec.json (refusing an OUT that holds another spec's sweep) and
/// solves the slice's unfinished points.
bool runPoints(const SweepSpec &spec, const std::vector<SweepPoint> &points, const RunOptions &options,
               RunSummary &summary, SourceManager &sm, DiagnosticsEngine &diags);

struct MergeSummary {
  size_t points = 0, finished = 0, failed = 0;
  std::vector<std::string> written;
};

/// OUT/points/*.json into OUT/sweep.csv, OUT/sweep.json and OUT/pareto.svg,
/// all or nothing.
bool mergeSweep(const driver::OutputDir &out, MergeSummary &summary, SourceManager &sm, DiagnosticsEngine &diags);

/// The energy-latency plot of the merged rows (sweep.json's "points"): each
/// workload (network and batch) its own panel, its Pareto front joined.
std::string paretoSvg(const std::string &sweepJson);

// Running slices elsewhere. No path or other value of the user's is written
// into a string that a shell, sbatch or GNU parallel parses: the Slurm jobs
// read their command from OUT/sweep.argv, GNU parallel's jobs from the
// environment.

/// The command a slice runs, less its --slice and --jobs: `dflc sweep SPEC
/// -o OUT [-I DIR]...`, every path absolute.
std::vector<std::string> sliceArgv(const std::string &dflc, const std::string &spec, const std::string &outDir,
                                   const std::vector<std::string> &includes);

/// `argv` NUL-separated (OUT/sweep.argv), as bash's `mapfile -d ''` reads it.
std::string argvFile(const std::vector<std::string> &argv);

/// OUT/sweep.sbatch: a Slurm job array of `tasks` slices, each running
/// sweep.argv's command with `--slice $SLURM_ARRAY_TASK_ID/tasks`, in the
/// directory it is submitted from (OUT; logs in OUT/slurm/). `sbatchOptions`
/// become #SBATCH lines.
std::string slurmScript(size_t tasks, const std::vector<std::string> &sbatchOptions);

/// OUT/merge.sbatch: `dflc sweep --merge OUT` as a Slurm job, run from OUT.
std::string slurmMergeScript(const std::vector<std::string> &sbatchOptions);

/// Whether an sbatch option can be an #SBATCH line: it holds no line break.
bool sbatchOptionFits(const std::string &option);

/// GNU parallel running `tasks` slices over `sshLogins` (parallel's
/// --sshlogin list; ":" is this machine): its argv, and the environment it
/// needs, which carries every path.
struct ParallelRun {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
};
ParallelRun parallelCommand(const std::string &dflc, const std::string &spec, const std::string &outDir,
                            const std::vector<std::string> &includes, size_t tasks, const std::string &sshLogins);

} // namespace dfl::sweep
