#include "model/Hardware.h"

#include "support/Check.h"

#include <limits>

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

int Hardware::findVector(const std::string &n) const {
  for (size_t i = 0; i < vectors.size(); ++i)
    if (vectors[i].name == n)
      return static_cast<int>(i);
  return -1;
}

const Hardware &Hardware::templateFor(int unit) const {
  if (unit < 0)
    return *this;
  DFLC_CHECK(static_cast<size_t>(unit) < vectors.size() && vectors[static_cast<size_t>(unit)].truncated)
      << "vector unit " << unit << " of " << name << "'s " << vectors.size();
  return *vectors[static_cast<size_t>(unit)].truncated;
}

int Level::bufferOf(TensorRole r) const {
  for (size_t b = 0; b < buffers.size(); ++b)
    if (buffers[b].holds(r))
      return static_cast<int>(b);
  return -1;
}

unsigned Level::heldRoles() const {
  unsigned roles = 0;
  for (const Buffer &b : buffers)
    roles |= b.roles;
  return roles;
}

std::vector<std::string> roleNames(unsigned roles) {
  std::vector<std::string> names;
  for (size_t r = 0; r < kNumRoles; ++r)
    if (roles & roleBit(static_cast<TensorRole>(r)))
      names.push_back(roleName(static_cast<TensorRole>(r)));
  return names;
}

std::string rolesText(unsigned roles) {
  std::string text;
  for (const std::string &n : roleNames(roles))
    text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "nothing" : text;
}

size_t Hardware::holderAbove(size_t l, TensorRole r) const {
  size_t h = l + 1;
  while (h + 1 < levels.size() && !levels[h].holds(r))
    ++h;
  return h;
}

size_t Hardware::innermostHolder(TensorRole r) const {
  size_t h = 0;
  while (h + 1 < levels.size() && !levels[h].holds(r))
    ++h;
  return h;
}

size_t Hardware::outermostOnChipHolder(TensorRole r) const {
  for (size_t h = levels.size() - 1; h-- > 0;)
    if (levels[h].holds(r))
      return h;
  return levels.size() - 1;
}

BufferBytes Hardware::bufferBytes(size_t l, const std::array<int64_t, kNumRoles> &words, TensorRole output) const {
  const Level &lv = levels[l];
  DFLC_CHECK(lv.buffers.size() <= kNumRoles) << "level '" + lv.name + "' has " + std::to_string(lv.buffers.size()) +
                                                    " buffers";
  BufferBytes bytes{};
  for (size_t r = 0; r < kNumRoles; ++r) {
    const auto role = static_cast<TensorRole>(r);
    if (int b = lv.bufferOf(role); b >= 0 && words[r] > 0)
      bytes[static_cast<size_t>(b)] += bytesOf(words[r], heldBits(role, output));
  }
  return bytes;
}

int Hardware::overflowingBuffer(size_t l, const BufferBytes &bytes, TensorRole output, int64_t reserve) const {
  const Level &lv = levels[l];
  for (size_t b = 0; b < lv.buffers.size(); ++b) {
    const Buffer &buf = lv.buffers[b];
    const bool forwarded = buf.holds(TensorRole::Ifm) || buf.holds(output);
    if (buf.capacityBytes && bytes[b] + (forwarded ? reserve : 0) > *buf.capacityBytes)
      return static_cast<int>(b);
  }
  return -1;
}

std::string bypassText(const Level &lv) {
  const unsigned bypassed = kAllRoles & ~lv.heldRoles();
  if (!bypassed)
    return "";
  const bool one = (bypassed & (bypassed - 1)) == 0;
  return rolesText(bypassed) + (one ? " bypasses" : " bypass");
}

int64_t Hardware::bytesOf(int64_t words, int64_t bits) const {
  // Sema admits whole bits from 1 up (docs/language.md, "Limits").
  DFLC_CHECK(wordBits >= 1 && bits >= 1) << "word of " + std::to_string(wordBits) + " bits, tensor of " +
                                                std::to_string(bits);
  // 64 bits where the product fits (the analysis asks for every buffer of
  // every candidate: a 128-bit division is a library call), else 128: 2^53
  // words of 512 bits at 64 bytes a word fit.
  int64_t num64 = 0;
  if (!__builtin_mul_overflow(words, bits, &num64) && !__builtin_mul_overflow(num64, wordBytes(), &num64) &&
      num64 <= std::numeric_limits<int64_t>::max() - wordBits)
    return (num64 + wordBits - 1) / wordBits;
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

Hardware vectorTemplate(const Hardware &hw, const VectorUnit &v) {
  DFLC_CHECK(v.level > 0 && static_cast<size_t>(v.level) + 1 < hw.levels.size())
      << "vector unit " << v.name << " at level " << v.level << " of " << hw.levels.size();
  Hardware t = hw;
  t.vectors.clear();
  t.intrinsicUnits = {};
  t.levels.erase(t.levels.begin(), t.levels.begin() + v.level);
  // The whole chip leaks while a layer runs on the unit, the MAC array too:
  // its static energy is the chip's, as one term.
  t.staticEnergyPj = hw.chipStaticEnergyPj();
  for (size_t l = 0; l < t.levels.size(); ++l) {
    Level &lv = t.levels[l];
    lv.staticEnergyPj = 0;
    lv.fixed.level = static_cast<int>(l);
  }
  Level &inner = t.levels.front();
  inner.busEnergyPj = 0;   // the unit reads its own unit's buffers: no array bus inside
  inner.intrinsic.clear();
  inner.intrinsicNest.reset();
  t.macEnergyPj = v.energyPj;
  t.opsPerCycle = v.opsPerCycle;
  return t;
}

} // namespace dfl
