#include "model/DsaHardware.h"

namespace dfl {

const char *dsaUnitKindName(DsaUnitKind k) { return k == DsaUnitKind::Vector ? "vector" : "matrix"; }

double DsaHardware::rate(DsaUnitKind k) const {
  double r = 0;
  for (const DsaUnit &u : units)
    if (u.kind == k)
      r += u.opsPerCycle;
  return r;
}

} // namespace dfl
