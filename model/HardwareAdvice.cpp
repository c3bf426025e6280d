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

std::optional<double> levelBandwidth(const Level &lv) {
  double sum = 0;
  for (const Buffer &buf : lv.buffers) {
    if (!buf.bandwidthBytesPerCycle)
      return std::nullopt;
    sum += *buf.bandwidthBytesPerCycle;
  }
  return sum;
}

double minimumWordsPerMac(double words) { return words > 0 ? 2 / std::sqrt(words) : 2; }

/// What a buffer is called in a message: the level alone for its implicit one.
std::string bufferTitle(const Level &lv, const Buffer &buf) {
  return buf.implicit ? "level '" + lv.name + "'" : "buffer '" + buf.name + "' of level '" + lv.name + "'";
}

void adviseOnHardware(const Hardware &hw, DiagnosticsEngine &diags) {
  // W0513: one word of each role a buffer holds, the output at the psum width.
  for (const Level &lv : hw.levels)
    for (const Buffer &buf : lv.buffers) {
      int64_t oneOfEach = 0;
      std::vector<std::string> roles;
      for (TensorRole r : {TensorRole::Ifm, TensorRole::Wgt, TensorRole::Ofm})
        if (buf.holds(r)) {
          oneOfEach += r == TensorRole::Ofm ? hw.bytesOf(1, hw.partialBits()) : hw.bytesOf(1, hw.dataBits(r));
          roles.push_back(r == TensorRole::Ofm ? "a partial sum" : roleName(r));
        }
      if (buf.capacityBytes && *buf.capacityBytes < oneOfEach)
        diags.report(buf.capacityRange.valid() ? buf.capacityRange : lv.nameRange, diag::warn_level_too_small)
            << bufferTitle(lv, buf) << formatBytes(static_cast<double>(*buf.capacityBytes))
            << joinList(roles, ", ", " and ") << formatBytes(static_cast<double>(oneOfEach));
    }
  const HardwareTotals totals = hardwareTotals(hw);
  if (totals.nodes > 1 && hw.chipStaticEnergyPj() == 0)
    diags.report(hw.nameRange, diag::warn_no_static_energy) << hw.name << std::to_string(totals.nodes);
  const double wordBytes = static_cast<double>(hw.wordBytes());
  for (size_t l = 1; l < hw.levels.size(); ++l) {
    const Level &lv = hw.levels[l];
    const std::optional<double> bandwidth = levelBandwidth(lv);
    if (!bandwidth)
      continue;
    // Per unit of level l: the PEs under it and the words they hold.
    const double units = static_cast<double>(hw.chipUnits(l));
    const double pes = static_cast<double>(totals.pes) / units;
    double words = 0;
    for (size_t j = 0; j < l; ++j)
      words += static_cast<double>(*hw.levels[j].capacityBytes) / wordBytes * static_cast<double>(hw.chipUnits(j)) / units;
    const double need = pes * minimumWordsPerMac(words) * wordBytes;
    if (*bandwidth < need)
      diags.report(lv.nameRange, diag::warn_bandwidth_starves)
          << lv.name << formatTrimmed(*bandwidth, 3) << formatTrimmed(need, 3)
          << formatNumber(pes) << formatNumber(std::floor(words));
  }
}

} // namespace dfl
