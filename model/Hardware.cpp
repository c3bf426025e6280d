#include "model/Hardware.h"

#include "support/Check.h"

namespace dfl {

const char *transferName(Transfer t) {
  switch (t) {
  case Transfer::Unicast: return "unicast";
  case Transfer::Multicast: return "multicast";
  case Transfer::Systolic: return "systolic";
  case Transfer::Sharing: return "sharing";
  case Transfer::Reduction: return "reduction";
  }
  DFLC_UNREACHABLE("Transfer " + std::to_string(static_cast<int>(t)));
}

int Hardware::findLevel(const std::string &n) const {
  for (size_t i = 0; i < levels.size(); ++i)
    if (levels[i].name == n)
      return static_cast<int>(i);
  return -1;
}

double Hardware::chipStaticEnergyPj() const {
  double total = staticEnergyPj;
  int64_t units = 1;   // units of level l in the whole chip
  for (size_t l = levels.size(); l-- > 0;) {
    units *= levels[l].units();
    total += static_cast<double>(units) * levels[l].staticEnergyPj;
  }
  return total;
}

} // namespace dfl
