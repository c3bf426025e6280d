// What the driver's run stages produce (docs/simulator.md, docs/cm.md): a
// schedule run in JIT-compiled kernels against the reference, its pipelined
// segments' LCUs run against each other, or a computational-memory chip's
// control and run; and the files they leave in OUT.
#pragma once

#include "backend/PipelineSim.h"
#include "backend/Simulator.h"
#include "backend/cm/CmSim.h"
#include "driver/OutputWriter.h"

#include <optional>
#include <string>
#include <vector>

namespace dfl::driver {

struct Simulation {
  sim::SimOptions options;
  std::optional<sim::SimResult> kernels;          // a memory-hierarchy schedule's layers
  std::optional<sim::PipelineResult> pipelines;   // its spatially pipelined segments, if any
  std::optional<cm::CmSimResult> cm;              // a computational-memory chip, if run
  /// A CM chip whose control could not be derived (isl's operation limit):
  /// why; the compile writes no LCUs and says so.
  std::string cmControlSkipped;
  std::vector<OutputFile> files;                  // relative to OUT
  /// Every output equal to the reference, every count to the analysis, no
  /// dependence violated.
  bool ok() const {
    return (!kernels || kernels->ok()) && (!pipelines || pipelines->ok()) && (!cm || cm->ok());
  }
};

} // namespace dfl::driver
