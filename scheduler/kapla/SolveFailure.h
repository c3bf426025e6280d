// Why a solve found no schedule, as data: which layer, which level, which
// directive and which numbers. describe() words it (the text of E0821 after
// "no valid schedule for layer 'L': "); clients that want more than the text
// (an editor pointing at the directive, a test) read the fields.
#pragma once

#include "scheduler/kapla/SolveBudget.h"
#include "support/SourceManager.h"

#include <cstdint>
#include <iosfwd>
#include <string>

namespace dfl {

struct SolveFailure {
  enum class Reason {
    SingleLevel,        // the hardware has one level: nothing to place tiles in
    DoesNotFit,         // the layer's smallest tiles at `level` need more than it holds
    NoneFound,          // the search ran to its end without a valid schedule
    NoneAmongSamples,   // random search: none of `samples` samples was valid
    GivenInvalid,       // the user's directives fix every level and are not valid
    NoneWithinLimit,    // the budget (`limit`) ran out before a valid schedule was found
  };
  Reason reason = Reason::NoneFound;
  int layer = -1;
  std::string layerName;
  std::string hardwareName;   // SingleLevel
  int level = -1;             // DoesNotFit: index into Hardware::levels
  std::string levelName;
  int64_t neededBytes = 0, availableBytes = 0;   // DoesNotFit: the smallest tiles, the capacity the layer may use
  int64_t samples = 0;                           // NoneAmongSamples
  SolveLimit limit = SolveLimit::None;           // NoneWithinLimit
  /// The directives the failure follows from where they were written (by the
  /// user or the hardware): GivenInvalid, the layer's schedule; DoesNotFit, the
  /// given level below whose array tile the level cannot hold; NoneFound, the
  /// source directive the search's last completion (or sample) breaks. Invalid otherwise.
  SourceRange directive;
  /// NoneFound: the rule the search's last completion breaks (NoneAmongSamples:
  /// the last refused sample's, or the smallest completion's), worded as its
  /// diagnostic (with the numbers), at `directive` where that is in the source.
  std::string constraint;
  /// What the written directives force on this layer's completion (a user's
  /// pipelined segment: the nodes and the forwarded tiles its written layers
  /// fix), named in the text; empty when nothing beyond the layer's own.
  std::string forcedBy;

  /// Infeasible, or NoneWithinLimit.
  SolveStatus status() const {
    return reason == Reason::NoneWithinLimit ? SolveStatus::NoneWithinLimit : SolveStatus::Infeasible;
  }
  std::string describe() const;

private:
  std::string reasonText() const;
};

std::ostream &operator<<(std::ostream &os, const SolveFailure &failure);

} // namespace dfl
