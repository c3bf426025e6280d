// A hardware intrinsic: a fixed computation the hardware performs in one step.
#pragma once

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
  SourceRange range;
};

} // namespace dfl
