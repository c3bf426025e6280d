#include "support/Format.h"

#include <cmath>
#include <cstdio>

namespace dfl {

std::string formatFixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
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
