// The cycle simulator of a computational-memory chip (docs/cm.md,
// "Simulation"): every core runs its JIT-compiled LCU (backend/lcu/Lcu.h)
// cycle by cycle on seeded integer data (backend/SimData.h). A core's step
// is one MxV of its crossbar block (mvm_cycles), then on a reducer the
// partial sums and the DPU operations of what the step finalizes (their
// cycles per element); what a step finalizes leaves in its last cycle and
// reaches a core hop_latency × hops cycles later, where the consumer's LCU
// sees it; a consumer's progress returns to the producer's LCU the same way
// (back-pressure). Each step is checked against the dependences' exact
// tables (RAW: what it reads has arrived; WAR: the buffer slot it
// overwrites has been read) and every element a core reads must have
// arrived; every layer's output is compared with backend/Reference.
//
// Before: a built CmControl of a placed network. After: the report, nothing written.
#pragma once

#include "backend/SimData.h"
#include "backend/cm/CmControl.h"
#include "model/Evaluation.h"
#include "support/ChromeTrace.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dfl::cm {

using sim::Mismatch;

struct CmSimOptions {
  uint64_t seed = 1;
  /// Layer by layer: cycles to program one crossbar row (assumed 1 µs at
  /// 1 GHz: iterative program-and-verify of PCM; docs/cm.md).
  int64_t programRowCycles = 1000;
  size_t listedViolations = 20;
  /// Tests only: this edge's RAW wait (or, with weakenWar, its WAR wait)
  /// one step short (LcuOptions).
  int weakenedEdge = -1;
  bool weakenWar = false;
  /// Where every step goes as an event (OUT/trace.json): a track per core
  /// and the GCU (null: no trace).
  ChromeTrace *trace = nullptr;
};

struct CmCoreRun {
  std::string region;
  int core = -1;                     // -1: the GCU
  int64_t steps = 0;
  int64_t mvmCycles = 0, dpuCycles = 0, busyCycles = 0;
  int64_t firstStart = 0, lastEnd = 0;
  std::map<std::string, int64_t> stalls;   // cause -> cycles ready but waiting
  int64_t sramBytes = 0;
  std::string lcuC;
};

struct CmLayerCheck {
  std::string layer;
  std::optional<Mismatch> mismatch;
};

/// One partition run alone, its crossbars programmed first.
struct CmLayerByLayer {
  std::string layer;
  int64_t programCycles = 0, computeCycles = 0;
};

struct CmSimResult {
  int64_t batch = 1, cycles = 0;
  std::vector<int64_t> imageDone;    // per image: its last output at the GCU
  std::vector<CmCoreRun> cores;
  std::vector<CmLayerCheck> layers;
  std::vector<std::string> violations;
  int64_t unlistedViolations = 0;
  std::vector<CmLayerByLayer> layerByLayer;
  int64_t programCycles = 0;         // programming the whole chip once (cores in parallel)
  double frequencyHz = 1e9;

  int64_t fillCycles() const { return imageDone.empty() ? 0 : imageDone.front(); }
  /// Steady state: the interval between images once the pipeline is full
  /// (the whole run's cycles for a batch of one).
  double cyclesPerImage() const;
  int64_t layerByLayerCycles() const;
  int64_t violationCount() const { return static_cast<int64_t>(violations.size()) + unlistedViolations; }
  bool bitExact() const;
  bool ok() const { return bitExact() && violationCount() == 0; }
};

CmSimResult simulateCm(const Network &net, const CmHardware &hw, const CmMapping &m, const CmControl &control,
                       const CmSimOptions &options = {});

/// The placement's evaluation (evaluationOf) with the run's latency: every
/// image through the chip, until the last output reaches the GCU.
Evaluation withSimulatedLatency(Evaluation e, const CmSimResult &r);

/// OUT/sim.json (docs/cm.md, "sim.json").
std::string cmSimJson(const Network &net, const CmHardware &hw, const CmSimOptions &options, const CmSimResult &r);
/// The summary `dflc sim` prints.
std::string cmSimText(const Network &net, const CmHardware &hw, const CmSimResult &r);

} // namespace dfl::cm
