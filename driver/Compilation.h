// One dflc invocation: the pipeline every client runs — the CLI's commands,
// the language server, the benchmarks, the fuzzer — so that the same options
// give the same diagnostics everywhere. The stages, in order:
//
//   load            FILEs and (transitively) their imports, parsed
//   analyze         semantic analysis: the model (with the backward pass if train),
//                   then the intrinsic units: on hardware whose level computes
//                   an intrinsic, every layer's embedding (bounded by work, not
//                   time), stored in the hardware for the check, the solver and
//                   the report (model/IntrinsicUnit.h)
//   checkSchedules  every schedule the FILEs declare: validity, cost, W0830;
//                   E0820 if requireSchedule and the FILEs declare none
//   check           what `dflc check` and the language server run: on a
//                   computational-memory input placeOnCm and controlCm
//                   without the run (E1104-E1108), else checkSchedules
//   selectSchedule  the schedule `dflc compile` completes (E0822 if ambiguous);
//                   the directives given must be valid on their own
//   solve           the complete schedule (E0821 if none exists)
//   embed           every intrinsic the inputs declare into every
//                   multiply-accumulate layer (E0702 if one cannot take it,
//                   W0703 at the time limit), for `dflc embed`
//   placeOnCm       on a computational-memory chip (docs/cm.md), instead of
//                   select and solve: partitions, crossbar tiles and their
//                   cores (E1104-E1107); then writeFiles writes placement.*
//   scheduleOnDsa   on a cluster/core DSA (docs/graphturbo.md), instead of
//                   select and solve: GraphTurbo and its two baselines
//                   (E1204); then writeFiles writes report.json
//   simulate        after solve or checkSchedules (`dflc sim`, `--sim`): the
//                   pipelined segments' isl dependences and LCUs (E0824),
//                   then every layer in JIT kernels against the reference
//                   (E1301-E1304, E1307); the outcome and its files in simulation()
//   controlCm       after placeOnCm: the chip's dependences, buffers (E1108)
//                   and LCUs, and with `simulate` its run (E1305)
//   exportTimeloop  after checkSchedules (`dflc export --timeloop`): a layer
//                   of the one schedule as Timeloop YAML (E1301, E1501-E1504)
//   importTimeloop  instead of load (`dflc import --timeloop`): Timeloop YAML
//                   as DFL, checked in memory (E1505-E1510); then writeFiles
//   writeOutputs    OUT/schedule.dfl and OUT/report.json, all or nothing
//                   (writeFiles: other outputs of a checked schedule)
//
// (`parse` replaces load and analyze for `dflc fmt`: the FILEs alone.) Each
// stage returns false when its errors stop the pipeline, so a client chains
// them: `c.load() && c.analyze() && c.checkSchedules()`. Running a stage
// before the one it needs is an internal error (InternalError). Every stage's
// wall time goes to timer(). The compilation keeps the source manager,
// diagnostics, files, model and results for its client, and never prints or
// exits: the client renders. Runs on the caller's thread; one compilation is
// used by one thread at a time.
#pragma once

#include "driver/DriverOptions.h"
#include "driver/OutputWriter.h"
#include "driver/PassTimer.h"
#include "driver/Simulation.h"

#include "frontend/Loader.h"
#include "model/Model.h"
#include "scheduler/embedding/IntrinsicEmbedding.h"
#include "scheduler/analysis/ScheduleCheck.h"
#include "scheduler/graph/GraphTurbo.h"
#include "scheduler/placement/CmPlacementReport.h"
#include "scheduler/kapla/Solver.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dfl::driver {

class Compilation {
public:
  explicit Compilation(DriverOptions options);
  Compilation(const Compilation &) = delete;
  Compilation &operator=(const Compilation &) = delete;

  bool load();
  /// The FILEs alone, parsed, without following imports (dflc fmt). An
  /// unreadable FILE or a directory is E0005.
  bool parse();
  bool analyze();
  bool checkSchedules();
  /// After analyze(): warnings for hardware values no chip would have
  /// (model/HardwareAdvice.h); advice, never an error. `dflc show` advises on
  /// every template it prints; check() (hardwareOnly) on those the FILEs
  /// declare if they declare no network and no schedule: hardware files.
  void adviseOnHardware(bool hardwareOnly = false);
  /// After analyze(): the check every client runs (`dflc check`, the language
  /// server): first adviseOnHardware() on hardware files. On a
  /// computational-memory input (targetsCm() with one network) the placement
  /// and the control without the run — its buffers against the cores' SRAM
  /// (E1108) — as `dflc NET HW` does, and no E0820; otherwise checkSchedules().
  bool check(const CmPlacementOptions &options = {});
  bool selectSchedule();
  /// After checkSchedules() (`dflc diff`): whether the FILEs hold two schedules,
  /// memory-hierarchy (checked()) or DSA (checkedDsa()) ones, of one network
  /// on one hardware template (else E1301, E1306).
  bool selectPair();
  /// `progress` (may be empty) is called with (layers done, layers in all).
  /// Throws InternalError if the solver returns an invalid schedule and the
  /// user gave no segment that could explain it.
  bool solve(const std::function<void(size_t, size_t)> &progress = {});
  /// One layer embedded with one intrinsic (layer and intrinsic by index).
  struct LayerEmbedding {
    size_t network = 0, layer = 0, intrinsic = 0;
    EmbeddingResult result;
  };
  /// After analyze(): embeds; false if a layer could take no intrinsic.
  bool embed(const EmbeddingOptions &options = {});
  const std::vector<LayerEmbedding> &embeddings() const { return embeddings_; }
  /// After analyze(): whether the inputs target a computational-memory chip
  /// (one CM hardware, no other hardware, no schedule).
  bool targetsCm() const;
  /// After analyze(): partitions, tiles and places the only network on the
  /// only CM hardware; false after reporting why not. Then writeFiles().
  bool placeOnCm(const CmPlacementOptions &options = {});
  /// After placeOnCm() returned true.
  const CmMapping &cmMapping() const;
  bool placedOnCm() const { return cmMapping_.has_value(); }
  /// After solve() (its solution) or checkSchedules() (the one complete
  /// schedule the FILEs declare): runs it (docs/simulator.md); false after
  /// reporting why it cannot run. Failed checks are the outcome, not errors:
  /// simulation().ok().
  bool simulate(sim::SimOptions options);
  /// After placeOnCm() returned true: the chip's control (docs/cm.md) and, if
  /// `simulate`, its run; false after reporting why not.
  bool controlCm(bool simulate, uint64_t seed);
  /// After simulate() or controlCm() returned true.
  const Simulation &simulation() const;
  /// After analyze(): whether the inputs target a cluster/core DSA (one DSA
  /// hardware, no other hardware, no memory-hierarchy schedule).
  bool targetsDsa() const;
  /// After analyze(): schedules the only network on the only DSA hardware
  /// with GraphTurbo and the two baselines — as the inputs' DSA schedule says
  /// where they hold one, GraphTurbo's rules for what it leaves out — false
  /// after reporting why not (E1204, E1208-E1210). Then writeFiles().
  bool scheduleOnDsa();
  /// After scheduleOnDsa() returned true.
  const graph::DsaComparison &dsaSchedules() const;
  /// After scheduleOnDsa() returned true: its GraphTurbo plan as a DFL
  /// schedule importing the FILEs, for OUT/schedule.dfl (docs/graphturbo.md).
  std::string dsaScheduleText() const;
  /// After checkSchedules(): every DSA schedule the FILEs declare, rebuilt
  /// and evaluated (index into model().dsaSchedules, the comparison); one
  /// that is not valid is left out (its errors are reported).
  const std::vector<std::pair<size_t, graph::DsaComparison>> &checkedDsa() const { return checkedDsa_; }
  /// After checkSchedules() (`dflc export --timeloop`): layer `layer` of the
  /// one schedule checked as Timeloop YAML (driver/TimeloopExport.h);
  /// nullopt after reporting why not.
  std::optional<std::string> exportTimeloop(const std::string &layer);
  /// The first stage of `dflc import --timeloop` (instead of load): the
  /// FILEs as Timeloop YAML, imported as DFL (driver/TimeloopImport.h) and
  /// checked as `dflc check OUT/schedule.dfl` would check them, in memory; the
  /// three files (paths relative to OUT), or nullopt after reporting why not
  /// (E0005, E1505-E1510). Then writeFiles().
  std::optional<std::vector<OutputFile>> importTimeloop();
  /// Opens the output directory (creating it) and locks it for the rest of
  /// the compilation (driver/OutputWriter.h); false with outputError() set if
  /// it cannot be opened or another run holds it. The write stages call it if
  /// the client did not; a client that writes calls it first, so that the lock
  /// covers the whole run. A directory it created is removed again at the end
  /// if nothing was written into it.
  bool openOutputs();
  /// Writes the outputs into the output directory; false with outputError()
  /// set if anything failed (then nothing changed). An output that is one of
  /// the inputs (same file, links followed) is refused first.
  /// `extra` files (paths relative to the output directory, e.g. the
  /// simulator's) are written with them, all or nothing.
  bool writeOutputs(const std::vector<OutputFile> &extra = {});
  /// After solve() returned true: what writeOutputs() writes besides its
  /// `extra` (schedule.dfl, report.json, the plots; paths relative to OUT),
  /// made once; a client that keeps them in memory (the Python module) reads
  /// them here.
  const std::vector<OutputFile> &outputs();
  /// After checkSchedules() (`dflc sim`): writes `files` (paths relative to
  /// the output directory) as writeOutputs() does, all or nothing.
  bool writeFiles(const std::vector<OutputFile> &files);

  const DriverOptions &options() const { return options_; }
  const SourceManager &sources() const { return sm_; }
  const DiagnosticsEngine &diagnostics() const { return diags_; }
  bool hasErrors() const { return diags_.hasErrors(); }
  const LoadedFiles &files() const { return files_; }
  /// Buffer ids of the FILEs, in order (0 for one that could not be read).
  const std::vector<uint32_t> &roots() const { return files_.roots; }
  const Model &model() const { return model_; }
  bool analyzed() const { return stage_ >= Stage::Analyzed; }
  const std::vector<CheckedSchedule> &checked() const { return checked_; }
  /// After selectSchedule(): the schedule to complete.
  const Schedule &selected() const;
  /// After solve() returned true.
  const Solution &solution() const;
  /// After writeOutputs() returned true: the paths written, in order.
  const std::vector<std::string> &outputPaths() const { return outputPaths_; }
  /// After openOutputs() or writeOutputs() returned false: what failed
  /// (E1401 "cannot write 'OUT/report.json': ...", or E1402 if OUT is locked).
  const OutputError &outputError() const { return outputError_; }
  const PassTimer &timer() const { return timer_; }

private:
  enum class Stage { Created, Loaded, Analyzed, Checked, Selected, Solved, Written };
  static const char *stageName(Stage s);
  /// The intrinsic-embedding stage, run by analyze() once sema succeeded.
  void embedUnits();
  void enter(Stage needed, const char *stage);
  /// Whether a declaration at `range` is in one of the FILEs (not imported).
  bool inFiles(const SourceRange &range) const;
  /// Writes files under the output directory, all or nothing.
  bool write(const std::vector<OutputFile> &files);

  DriverOptions options_;
  SourceManager sm_;
  DiagnosticsEngine diags_{sm_};
  LoadedFiles files_;
  Model model_;
  std::vector<CheckedSchedule> checked_;
  std::vector<LayerEmbedding> embeddings_;
  std::optional<Schedule> selected_;
  std::optional<Solution> solution_;
  std::optional<std::vector<OutputFile>> outputs_;
  std::optional<CmMapping> cmMapping_;
  std::optional<Simulation> simulation_;
  /// simulate()'s schedule: the solution, else the one complete checked
  /// schedule (E1301, E1302 if there is none).
  const Schedule *scheduleToRun();
  /// The reason `net` cannot be scheduled on a DSA (E1204's), or "".
  static std::string dsaNetworkError(const Network &net);
  /// checkOnDsa for the schedule `s`, its issues reported.
  std::optional<graph::DsaComparison> checkDsaSchedule(const DsaSchedule &s);

  std::optional<graph::DsaComparison> dsaSchedules_;
  std::vector<std::pair<size_t, graph::DsaComparison>> checkedDsa_;
  std::optional<OutputDir> out_;
  std::vector<std::string> outputPaths_;
  OutputError outputError_;
  PassTimer timer_;
  Stage stage_ = Stage::Created;
};

} // namespace dfl::driver
