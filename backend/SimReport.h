// What `dflc sim` writes and prints: OUT/sim.json (per layer the output
// verdict, every count beside the analysis', MACs, JIT compile and run time),
// OUT/kernels/LAYER.ll, and a summary table (docs/simulator.md, "Outputs").
#pragma once

#include "backend/Simulator.h"

#include <string>
#include <utility>
#include <vector>

namespace dfl::sim {

std::string simJson(const Network &net, const Hardware &hw, const SimOptions &options, const SimResult &result);

/// One line per layer, then the verdict.
std::string simTable(const SimResult &result);

/// The kernels' optimized IR: (file name under OUT/kernels, text) per layer
/// simulated, the layer's name made a portable file name.
std::vector<std::pair<std::string, std::string>> kernelFiles(const SimResult &result);

} // namespace dfl::sim
