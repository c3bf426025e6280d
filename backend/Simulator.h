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

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dfl::sim {

struct SimOptions {
  uint64_t seed = 1;
  /// The layers to simulate (empty: all). The others run in the reference
  /// only, to give their consumers real inputs.
  std::vector<std::string> layers;
  /// A kernel's arrays, and the run's tensors, may take at most this many bytes each.
  int64_t memoryLimitBytes = int64_t{8} << 30;
  KernelFault fault = KernelFault::None;   // tests only
  /// (layers done, layers to simulate, the layer starting).
  std::function<void(size_t, size_t, const std::string &)> progress;
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
  std::string ir;                 // the optimized kernel
  bool ok() const { return !skipped.empty() || (outputEqual && (countsEqual || !exactClaimed)); }
};

struct SimResult {
  std::vector<LayerSim> layers;
  bool ok() const;
};

/// The bytes a layer's kernel needs, or an error message naming them.
struct MemoryError {
  std::string layer;
  int64_t bytes = 0;
};

/// Simulates the schedule. Throws MemoryError if a layer's kernel, or the
/// tensors of the run up to a layer, would need more than
/// options.memoryLimitBytes.
SimResult simulate(const Model &model, const Schedule &schedule, const SimOptions &options);

} // namespace dfl::sim
