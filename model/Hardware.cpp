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

int64_t Hardware::bytesOf(int64_t words, int64_t bits) const {
  // Sema admits whole bits from 1 up (docs/language.md, "Limits").
  DFLC_CHECK(wordBits >= 1 && bits >= 1) << "word of " + std::to_string(wordBits) + " bits, tensor of " +
                                                std::to_string(bits);
  // 128 bits: 2^53 words of 512 bits at 64 bytes a word fit.
  __int128 num = static_cast<__int128>(words) * bits * wordBytes();
  return static_cast<int64_t>((num + wordBits - 1) / wordBits);
}

WordScale Hardware::wordScale(TensorRole output) const {
  WordScale s;
  s.output = static_cast<size_t>(output);
  const double word = static_cast<double>(wordBits);
  for (size_t r = 0; r < kNumRoles; ++r) {
    auto role = static_cast<TensorRole>(r);
    s.held[r] = static_cast<double>(heldBits(role, output)) / word;
    s.data[r] = static_cast<double>(dataBits(role)) / word;
  }
  return s;
}

int64_t Hardware::chipUnits(size_t l) const {
  int64_t units = 1;
  for (size_t j = l; j < levels.size(); ++j)
    units *= levels[j].units();
  return units;
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
