#include "model/Hardware.h"

#include "support/Check.h"

namespace dfl {

const char *transferName(Transfer t) {
  switch (t) {
  case Transfer::Unicast: return "unicast";
  case Transfer::Multicast: return "multicast";
  case Transfer::Systolic: return "systolic";
  case Transfer::Sharing: return "sharing";
  }
  DFLC_UNREACHABLE("Transfer " + std::to_string(static_cast<int>(t)));
}

int Hardware::findLevel(const std::string &n) const {
  for (size_t i = 0; i < levels.size(); ++i)
    if (levels[i].name == n)
      return static_cast<int>(i);
  return -1;
}

} // namespace dfl
