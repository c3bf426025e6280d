#include "scheduler/kapla/SolveFailure.h"

#include "support/Check.h"

#include <ostream>

namespace dfl {

std::string SolveFailure::describe() const {
  const std::string text = reasonText();
  return forcedBy.empty() ? text : text + " (" + forcedBy + ")";
}

std::string SolveFailure::reasonText() const {
  const std::string layerQuoted = "layer '" + layerName + "'";
  switch (reason) {
  case Reason::SingleLevel: return "hardware '" + hardwareName + "' has a single level";
  case Reason::DoesNotFit:
    return layerQuoted + " does not fit level " + levelName + ": even its smallest tiles need " +
           std::to_string(neededBytes) + " B of " + std::to_string(availableBytes) + " B";
  case Reason::NoneFound:
    // The rule, with its numbers: the search's last completion breaks it.
    return constraint.empty() ? "no valid schedule found for " + layerQuoted
                              : "every completion the search tried breaks a rule; the closest: " + constraint;
  case Reason::NoneAmongSamples:
    return "no valid schedule among " + std::to_string(samples) + " random samples for " + layerQuoted +
           (constraint.empty() ? "" : "; the last refused breaks a rule: " + constraint);
  case Reason::GivenInvalid:
    return "the given directives of " + layerQuoted + " leave nothing to choose and are not valid" +
           (constraint.empty() ? "" : ": " + constraint);
  case Reason::NoneWithinLimit:
    return limit == SolveLimit::Cancelled
               ? "the solve was cancelled before a valid schedule was found for " + layerQuoted
               : std::string("no valid schedule found for ") + layerQuoted + " within the " +
                     (limit == SolveLimit::Time ? "time limit" : "candidate limit");
  }
  DFLC_UNREACHABLE("failure reason " + std::to_string(static_cast<int>(reason)));
}

std::ostream &operator<<(std::ostream &os, const SolveFailure &failure) { return os << failure.describe(); }

} // namespace dfl
