// The simulator (docs/simulator.md): runs a complete schedule layer by layer
// in topological order on seeded integer data, each layer through its
// JIT-compiled kernel, and checks it twice — its output against the
// independent reference (backend/Reference.h), its counted accesses against
// the analysis (docs/directives.md §6).
//
// Before: a checked model, a complete and valid schedule and its analysis.
// After: per layer, the outputs equal or the first element that differs, and
// every count beside the analysis' with the verdict; nothing written.
#pragma once

#include "backend/KernelCodegen.h"
#include "backend/KernelRun.h"
#include "backend/SimData.h"
#include "scheduler/analysis/Instances.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dfl::sim {

/// Where a run is (SimOptions::progress): the layers done of those to
/// simulate, the layer starting (empty at the end), and the work done of the
/// run's (runWork), so that a client can report per fixed fraction of it.
struct SimProgress {
  size_t done = 0, todo = 0;
  std::string layer;
  double work = 0, totalWork = 0;
};

struct SimOptions {
  uint64_t seed = 1;
  /// The layers to simulate (empty: all). The others run in the reference
  /// only, to give their consumers real inputs, unless that passes the work
  /// bound: then they do not run and what they compute is seeded.
  std::vector<std::string> layers;
  /// A kernel's arrays, and the run's tensors, may take at most this many bytes each.
  int64_t memoryLimitBytes = int64_t{8} << 30;
  /// The work bound (docs/simulator.md, "Limits of the kernels"): a run's
  /// work (runWork) up to it runs as chosen; past it, each layer's own
  /// reference and kernel must fit (simulate()). 2^36, about ten minutes at
  /// the kernels' 5 to 10 ns a point; `--work-limit` raises it.
  double workLimit = 0x1p36;
  /// Run the pipelined segments' control only (their isl dependences and
  /// LCUs), no kernels: `dflc sim --pipelines-only`, for schedules whose
  /// kernels would pass the work bound (the driver's simulate stage reads it).
  bool pipelinesOnly = false;
  /// The threads compiling kernels ahead of the run (KernelCache, backend/Jit.h);
  /// -1: defaultCompileThreads(). The results do not depend on it.
  int compileThreads = -1;
  KernelFault fault = KernelFault::None;   // tests only
  double unclippedSteps = KernelOptions{}.unclippedSteps;   // KernelOptions; tests only
  /// Called before each layer simulated and at the end.
  std::function<void(const SimProgress &)> progress;
};

/// One count, by the kernel and by the analysis.
struct CountCheck {
  int level = 0;
  TensorRole role = TensorRole::Ifm;
  const char *kind = "";          // reads, writes, same-level
  double counted = 0, analysed = 0;
  bool equal = true;              // within rounding
};

struct LayerSim {
  std::string layer;
  /// Why the layer was not simulated (empty: it was).
  std::string skipped;
  /// Why its operands derive from seeded data rather than from the network's
  /// inputs through every layer before it (empty: they do), and the tensors
  /// seeded in place of a layer's output they derive from (docs/simulator.md,
  /// "Seeded operands"). The kernel is still compared with the reference on them.
  std::string seeded;
  std::vector<std::string> seededTensors;
  bool outputEqual = false;
  /// The first element that differs: its flat index, its index per tensor
  /// dimension, the kernel's word and the reference's.
  int64_t mismatchAt = -1;
  std::vector<int64_t> mismatchIndex;
  Word got = 0, want = 0;
  /// Whether the analysis claims its counts exact for this layer (every tile
  /// even, docs/directives.md §4); where not, the counts are compared and
  /// reported but a difference is not a failure.
  bool exactClaimed = false;
  std::vector<CountCheck> counts;
  double macs = 0, analysedMacs = 0;
  bool countsEqual = true;
  double compileMs = 0, runMs = 0;
  /// The optimized kernel; a split layer's distinct pieces' kernels, in
  /// the order the instances first use them.
  std::vector<std::string> ir;
  bool ok() const { return !skipped.empty() || (outputEqual && (countsEqual || !exactClaimed)); }
};

/// Why a whole network's run skips a layer whose own work passes the bound.
inline constexpr const char *kPastWorkBound =
    "past the work bound alone (docs/simulator.md, \"Limits of the kernels\"); simulate it with --layers and a "
    "larger --work-limit";
/// Why a layer's operands are seeded (LayerSim::seeded).
inline constexpr const char *kSeededPrefix =
    "the reference of the layers before it would take the run past its work bound: what the layers not chosen "
    "compute is seeded";
inline constexpr const char *kSeededPastBound =
    "a layer before it is past the work bound alone: what it computes is seeded";

struct SimResult {
  std::vector<LayerSim> layers;
  /// The layers a whole network's run left out, each past the work bound
  /// alone: the first, its own work (reference and kernel) and how many.
  struct WorkCut {
    int layer = 0;
    double work = 0;
    int layers = 0;
  };
  std::optional<WorkCut> workCut;
  bool ok() const;
};

/// A run refused before it would pass a limit: at `layer`, `amount` (bytes
/// or work) against `limit`, and what needs it.
struct LimitError {
  enum Kind { Memory, Work } kind = Memory;
  int layer = 0;
  double amount = 0, limit = 0;
  std::string what;   // "its kernel's arrays", "the tensors of the run up to it", ...
};

/// A layer's work: the points of its statement (the iterations of its loop
/// nest over the whole batch: MACs, a pool's window reads, a copy's words)
/// times its input operands, each point reading every one (add, mul) or
/// searching them (a concatenation).
double layerWork(const Layer &layer);
/// A run's work: every layer up to the last one simulated once in the
/// reference, and each simulated layer once more in its kernel.
double runWork(const Network &net, const SimOptions &options);

/// A run of at least this much work (runWork) is long, about ten seconds or
/// more: off a terminal, `dflc sim` reports its progress.
constexpr double kProgressWork = 0x1p30;

/// Simulates the schedule. A run whose work (runWork) would pass
/// options.workLimit computes less, and seeds what it leaves out as it seeds
/// the network's inputs (LayerSim::seeded): a run of chosen layers runs them
/// alone; a whole network's run leaves out each layer whose own reference and
/// kernel pass the bound (SimResult::workCut). Throws LimitError, before
/// anything runs, if a chosen layer's own work passes the bound or the tensors
/// of the run up to a layer options.memoryLimitBytes, and before a kernel runs
/// if its arrays would.
SimResult simulate(const Model &model, const Schedule &schedule, const SimOptions &options);

/// A layer of a segment split into instances as the simulator runs it
/// (scheduler/analysis/Instances.h): per instance the piece's own kernel on
/// the rows (columns) of its inputs it reads, its output placed where it
/// belongs (a halo two pieces compute is written twice, equal).
struct SplitRun {
  size_t axis = 2;                 ///< the tensors' axis the split cuts (X: 2, Y: 3)
  std::vector<Layer> pieces;       ///< the distinct pieces
  std::vector<KernelPlan> plans;   ///< one per piece
  std::vector<int64_t> runs;       ///< per piece, the instances computing it
  struct Instance {
    size_t piece = 0;
    Span out, in;                  ///< the output span it computes, the input span it reads
  };
  std::vector<Instance> instances;
};

/// Layer `li`, the k-th of split segment `seg`, as its pieces' kernels with
/// the layer's directives `ls`; nullopt with `why` where a piece has none.
std::optional<SplitRun> planSplitRun(const Network &net, int li, const SegmentResult &seg, size_t k,
                                     const Hardware &hw, const LayerScheduleModel &ls, std::string &why);

/// The kernel options of piece i: a kernel runs once per instance computing
/// it, so its unclipped steps pay by the steps of all those runs.
KernelOptions pieceKernelOptions(const SplitRun &run, size_t i, KernelOptions options);

/// Runs every instance of `run` on kernels[piece] (compiled from
/// run.plans[piece]) over its inputs taken from `store`: the layer's output
/// (`extent`) with every piece placed, the counts and times summed.
KernelResult runSplit(const Network &net, int li, const SplitRun &run,
                      const std::vector<CompiledKernel> &kernels, const TensorStore &store,
                      const std::vector<int64_t> &extent);

} // namespace dfl::sim
