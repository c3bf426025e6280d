// `dflc import --timeloop FILE.yaml... OUT/`: a Timeloop v0.4 problem,
// architecture and mapping (in one YAML file or several, their top-level keys
// merged) as DFL: a network of the one CNN layer, a hardware template and
// the schedule. The inverse of driver/TimeloopExport.h; docs/timeloop.md
// ("Importing a Timeloop mapping") is the reference: how factors become
// directives, and what DFL cannot state (E1505-E1510).
#pragma once

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl::driver {

/// The three DFL files of an imported mapping; the schedule imports the other
/// two by these names, from its own directory.
struct TimeloopDfl {
  static constexpr const char *kNetworkFile = "network.dfl";
  static constexpr const char *kHardwareFile = "hardware.dfl";
  static constexpr const char *kScheduleFile = "schedule.dfl";
  std::string network, hardware, schedule;
  std::string layer;   // the layer's name in the network
  SourceRange mapping;  // the YAML mapping, where a refusal of the whole of it points
};

/// The YAML buffers `files` (ids in `sm`, in the order given) as DFL, the
/// layer named `layer`; nullopt with located refusals in `diags` where the
/// YAML is not a Timeloop problem, architecture and mapping DFL can state.
std::optional<TimeloopDfl> timeloopDfl(const SourceManager &sm, const std::vector<uint32_t> &files,
                                       const std::string &layer, DiagnosticsEngine &diags);

} // namespace dfl::driver
