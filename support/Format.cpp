#include "support/Format.h"

#include <cmath>
#include <cstdio>

namespace dfl {

std::string formatFixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  // A value that rounds to zero prints as zero, not "-0.000" (a rounding
  // residue of subtracted energies is not a negative cost).
  std::string s = buf;
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos)
    s.erase(0, 1);
  return s;
}

std::string formatTrimmed(double v, int digits) {
  std::string s = formatFixed(v, digits);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}

std::string formatNumber(double v) {
  char buf[64];
  if (std::fabs(v) < 1e15 && v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

namespace {
/// `v` divided by `base` until below it (at most four times), trimmed to
/// `digits` decimals, with the unit of that step.
std::string inUnits(double v, double base, const char *const (&units)[5], int digits) {
  int u = 0;
  while (std::fabs(v) >= base && u < 4) {
    v /= base;
    ++u;
  }
  return formatTrimmed(v, digits) + " " + units[u];
}
} // namespace

std::string formatBytes(double bytes) { return inUnits(bytes, 1024, {"B", "KiB", "MiB", "GiB", "TiB"}, 2); }

std::string formatEnergy(double pj) { return inUnits(pj, 1000, {"pJ", "nJ", "uJ", "mJ", "J"}, 3); }

std::string formatScaled(double v) {
  const char *suffix[] = {"", " K", " M", " G", " T"};
  int i = 0;
  while (v >= 1000 && i < 4)
    v /= 1000, ++i;
  return formatFixed(v, i ? 2 : 0) + suffix[i];
}

std::string padRight(std::string s, size_t w) {
  if (s.size() < w)
    s.append(w - s.size(), ' ');
  return s;
}

std::string padLeft(std::string s, size_t w) {
  if (s.size() < w)
    s.insert(0, w - s.size(), ' ');
  return s;
}

} // namespace dfl

namespace dfl {

size_t utf8Length(const std::string &s, size_t i) {
  auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned c = byte(i);
  size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (len == 0 || i + len > s.size())
    return 0;
  // The second byte's range depends on the first; later ones are 80..BF.
  unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (len > 1 && (byte(i + 1) < lo || byte(i + 1) > hi))
    return 0;
  for (size_t k = 2; k < len; ++k)
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  return len;
}

} // namespace dfl
