#include "driver/DriverOptions.h"

#include "scheduler/Solver.h"
#include "support/Check.h"
#include "support/Diagnostics.h"

#include <algorithm>

namespace dfl::driver {
namespace {
const std::vector<std::string> kObjectives = {"energy", "latency", "edp"};
} // namespace

std::optional<std::string> solverNameError(const std::string &name) {
  if (makeSolver(name))
    return std::nullopt;
  return "unknown solver '" + name + "'" + didYouMean(name, solverNames()) + " (expected " +
         joinList(solverNames()) + ")";
}

std::optional<std::string> objectiveNameError(const std::string &name) {
  if (std::find(kObjectives.begin(), kObjectives.end(), name) != kObjectives.end())
    return std::nullopt;
  return "unknown objective '" + name + "'" + didYouMean(name, kObjectives) + " (expected energy, latency or edp)";
}

Objective objectiveOf(const std::string &name) {
  DFLC_CHECK(!objectiveNameError(name)) << "objective '" << name << "' was not validated";
  return name == "latency" ? Objective::Latency : name == "edp" ? Objective::EDP : Objective::Energy;
}

} // namespace dfl::driver
