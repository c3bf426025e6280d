// The outputs of compiling for a computational-memory chip (docs/cli.md):
// placement.json (partitions, tiles, edges, cores, the solver's result) and
// placement.svg (the core grid with the partition graph drawn on it).
#pragma once

#include "model/CmHardware.h"
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

std::string cmPlacementJson(const Network &net, const CmHardware &hw, const CmMapping &m);
std::string cmPlacementSvg(const Network &net, const CmHardware &hw, const CmMapping &m);
/// The summary `dflc compile` prints: partitions, tiles, cores, cost, status.
std::string cmPlacementText(const Network &net, const CmHardware &hw, const CmMapping &m);

} // namespace dfl
