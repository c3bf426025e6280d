// The outputs of compiling for a computational-memory chip (docs/cli.md):
// placement.json (partitions, tiles, edges, cores, the solver's result) and
// placement.svg (the core grid with the partition graph drawn on it).
#pragma once

#include "model/CmHardware.h"
#include "model/Evaluation.h"
#include "model/Network.h"
#include "scheduler/placement/CmPartition.h"
#include "scheduler/placement/CmPlacement.h"

#include <string>

namespace dfl {

struct CmMapping {
  CmPartitioning partitioning;
  CmPlacement placement;
  CmObjective objective = CmObjective::Traffic;
};

/// The computational-memory target's side of the one evaluator
/// (model/Evaluation.h), over the whole batch: per partition its tiles' MxVs
/// at mvm_energy each ("MxV"); the words the placement routes, at hop_energy
/// a word per link ("interconnect": a chip-wide part, in no row). No latency:
/// the chip's run gives it (cm::withSimulatedLatency).
Evaluation evaluationOf(const Network &net, const CmHardware &hw, const CmMapping &m);

std::string cmPlacementJson(const Network &net, const CmHardware &hw, const CmMapping &m);
std::string cmPlacementSvg(const Network &net, const CmHardware &hw, const CmMapping &m);
/// The summary `dflc compile` prints: partitions, tiles, cores, cost, status.
std::string cmPlacementText(const Network &net, const CmHardware &hw, const CmMapping &m);

} // namespace dfl
