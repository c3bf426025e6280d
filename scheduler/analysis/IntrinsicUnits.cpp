#include "scheduler/analysis/IntrinsicUnits.h"

#include "support/Check.h"

namespace dfl {

int intrinsicLevel(const Hardware &hw) {
  for (size_t l = 0; l < hw.levels.size(); ++l)
    if (hw.levels[l].intrinsicNest)
      return static_cast<int>(l);
  return -1;
}

const IntrinsicUnit *intrinsicUnitFor(const Network &net, const Layer &layer, const Hardware &hw) {
  if (intrinsicLevel(hw) < 0)
    return nullptr;
  auto n = hw.intrinsicUnits.find(net.name);
  DFLC_CHECK(n != hw.intrinsicUnits.end())
      << "no intrinsic units for network '" << net.name << "' on hardware '" << hw.name
      << "': the driver's embedding stage did not run";
  auto u = n->second.find(layer.name);
  DFLC_CHECK(u != n->second.end()) << "no intrinsic unit for layer '" << layer.name << "' of network '" << net.name
                                   << "' on hardware '" << hw.name << "'";
  return &u->second;
}

} // namespace dfl
