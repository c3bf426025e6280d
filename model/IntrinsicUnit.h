// What the intrinsic-embedding stage (driver::Compilation, docs/embedding.md
// "Intrinsic-aware scheduling") hands the analysis and the solvers: per layer
// of a network on a hardware template whose innermost level computes an
// intrinsic, the embedding used or why none is. Plain data: the analysis reads
// it without the constraint solver (dfl_analysis does not link Gecode).
#pragma once

#include "model/Dims.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dfl {

struct IntrinsicUnit {
  int level = -1;                // the level whose units compute the intrinsic
  std::string intrinsic;         // its name
  bool embedded = false;
  /// Not embedded: why (a pool, a sum, no embedding fits the array); the
  /// layer is scheduled from 1-element tiles as without an intrinsic.
  std::string reason;
  /// Embedded: the candidate used (the best ranked that fits the array).
  std::string model;             // strict, relaxed or padded
  bool operandsSwapped = false;
  std::vector<std::string> dimMapping;   // `j <- k (16)`, outermost first
  int64_t macs = 0, macsMin = 0;         // MACs performed (with padding) and needed
  /// The unit along each of KAPLA's dims as the tiling space sees it (1 where
  /// the intrinsic takes nothing; K is 1 for a channel-wise layer, whose C it is).
  DimVector unit{};
  /// The search's work, and whether a work limit cut it (then the candidates
  /// ranked were those found within it; docs/limits.md).
  uint64_t nodes = 0, failures = 0;
  bool limitHit = false;

  double utilization() const { return macs ? static_cast<double>(macsMin) / static_cast<double>(macs) : 0; }
};

/// The stage's result on one hardware template: per network name, per layer
/// name (a piece of a split layer is scheduled with its layer's unit).
using IntrinsicUnitTable = std::map<std::string, std::map<std::string, IntrinsicUnit>>;

} // namespace dfl
