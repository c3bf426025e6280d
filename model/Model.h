// The model: the checked meaning of a DFL program, the one vocabulary every
// stage after the front end speaks. Network (a DAG of layers with loop bounds,
// tensor shapes and MAC counts), Hardware (memory levels, MAC, NoC,
// pipelining), CmHardware (a computational-memory chip) or DsaHardware (a
// cluster/core accelerator), and Schedule
// (segments; per layer, per level: tensor, stack and update directives).
// Every node carries the source range it came from.
#pragma once

#include "model/CmHardware.h"
#include "model/DsaHardware.h"
#include "model/DsaSchedule.h"
#include "model/Hardware.h"
#include "model/Intrinsic.h"
#include "model/Network.h"
#include "model/Schedule.h"

#include <vector>

namespace dfl {

struct Model {
  std::vector<Network> networks;
  std::vector<Hardware> hardware;
  /// Computational-memory chips: `hardware` declarations with a `core` block
  /// (model/CmHardware.h); they share the hardware names.
  std::vector<CmHardware> cmHardware;
  /// Cluster/core DSAs: `hardware` declarations with a `cluster` block
  /// (model/DsaHardware.h), scheduled by GraphTurbo (docs/graphturbo.md).
  std::vector<DsaHardware> dsaHardware;
  std::vector<Schedule> schedules;
  /// Schedules on a cluster/core DSA (model/DsaSchedule.h).
  std::vector<DsaSchedule> dsaSchedules;
  std::vector<Intrinsic> intrinsics;
};

} // namespace dfl
