// A hardware intrinsic: a fixed computation the hardware performs in one step,
// kept as a loop nest of the same kind as a layer's (model/LoopNest.h).
#pragma once

#include "model/LoopNest.h"
#include "support/SourceManager.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dfl {

// ---- intrinsic --------------------------------------------------------------

struct Intrinsic {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> dims;
  /// The compute statement `out[...] += lhs[...] * rhs[...]` over the declared
  /// dims: a Mac nest whose accesses are ofm (out), ifm (lhs) and wgt (rhs).
  LoopNest nest;
  SourceRange range;
};

} // namespace dfl
