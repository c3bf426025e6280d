#include "model/HardwareAdvice.h"

#include "support/Format.h"

#include <cmath>

namespace dfl {

HardwareTotals hardwareTotals(const Hardware &hw) {
  HardwareTotals t;
  if (hw.levels.empty())
    return t;
  t.pes = hw.chipUnits(0);
  t.nodes = hw.levels.size() >= 2 ? hw.chipUnits(hw.levels.size() - 2) : 1;
  for (size_t l = 0; l < hw.levels.size(); ++l)
    if (hw.levels[l].capacityBytes)
      t.onChipBytes += static_cast<double>(*hw.levels[l].capacityBytes) * static_cast<double>(hw.chipUnits(l));
  return t;
}

double minimumWordsPerMac(double words) { return words > 0 ? 2 / std::sqrt(words) : 2; }

void adviseOnHardware(const Hardware &hw, DiagnosticsEngine &diags) {
  const int64_t oneOfEach = hw.bytesOf(1, hw.dataBits(TensorRole::Ifm)) + hw.bytesOf(1, hw.dataBits(TensorRole::Wgt)) +
                            hw.bytesOf(1, hw.partialBits());
  for (const Level &lv : hw.levels)
    if (lv.capacityBytes && *lv.capacityBytes < oneOfEach)
      diags.report(lv.capacityRange.valid() ? lv.capacityRange : lv.nameRange, diag::warn_level_too_small)
          << lv.name << formatBytes(static_cast<double>(*lv.capacityBytes)) << formatBytes(static_cast<double>(oneOfEach));
  const HardwareTotals totals = hardwareTotals(hw);
  if (totals.nodes > 1 && hw.chipStaticEnergyPj() == 0)
    diags.report(hw.nameRange, diag::warn_no_static_energy) << hw.name << std::to_string(totals.nodes);
  const double wordBytes = static_cast<double>(hw.wordBytes());
  for (size_t l = 1; l < hw.levels.size(); ++l) {
    const Level &lv = hw.levels[l];
    if (!lv.bandwidthBytesPerCycle)
      continue;
    // Per unit of level l: the PEs under it and the words they hold.
    const double units = static_cast<double>(hw.chipUnits(l));
    const double pes = static_cast<double>(totals.pes) / units;
    double words = 0;
    for (size_t j = 0; j < l; ++j)
      words += static_cast<double>(*hw.levels[j].capacityBytes) / wordBytes * static_cast<double>(hw.chipUnits(j)) / units;
    const double need = pes * minimumWordsPerMac(words) * wordBytes;
    if (*lv.bandwidthBytesPerCycle < need)
      diags.report(lv.nameRange, diag::warn_bandwidth_starves)
          << lv.name << formatTrimmed(*lv.bandwidthBytesPerCycle, 3) << formatTrimmed(need, 3)
          << formatNumber(pes) << formatNumber(std::floor(words));
  }
}

} // namespace dfl
