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
  std::string error;     // OUT could not be written (then false is returned)
};

/// OUT/spec.json: the spec's text and its points' ids, in order, which
/// --merge reads; false with `error` set if OUT holds another spec's sweep
/// or cannot be written.
bool writeSpecRecord(const SweepSpec &spec, const std::vector<SweepPoint> &points, const driver::OutputDir &out,
                     std::string &error);

/// Writes OUT/spec.json (refusing an OUT that holds another spec's sweep) and
/// solves the slice's unfinished points.
bool runPoints(const SweepSpec &spec, const std::vector<SweepPoint> &points, const RunOptions &options,
               RunSummary &summary);

struct MergeSummary {
  size_t points = 0, finished = 0, failed = 0;
  std::string error;
  std::vector<std::string> written;
};

/// OUT/points/*.json into OUT/sweep.csv, OUT/sweep.json and OUT/pareto.svg,
/// all or nothing.
bool mergeSweep(const driver::OutputDir &out, MergeSummary &summary);

/// The energy-latency plot of the merged rows (sweep.json's "points"): each
/// workload (network and batch) its own panel, its Pareto front joined.
std::string paretoSvg(const std::string &sweepJson);

/// A Slurm batch script running `tasks` slices of the sweep as a job array,
/// each `dflc sweep SPEC -o OUT --slice $SLURM_ARRAY_TASK_ID/tasks`, all paths
/// absolute. `sbatchOptions` become #SBATCH lines.
std::string slurmScript(const std::string &dflc, const std::string &spec, const std::string &outDir,
                        const std::vector<std::string> &includes, size_t tasks,
                        const std::vector<std::string> &sbatchOptions);

/// The argv of GNU parallel running `tasks` slices over `sshLogins`
/// (parallel's --sshlogin list; ":" is this machine).
std::vector<std::string> parallelCommand(const std::string &dflc, const std::string &spec, const std::string &outDir,
                                         const std::vector<std::string> &includes, size_t tasks,
                                         const std::string &sshLogins);

} // namespace dfl::sweep
