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

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return formatTrimmed(bytes, 2) + " " + units[u];
}

std::string formatEnergy(double pj) {
  const char *units[] = {"pJ", "nJ", "uJ", "mJ", "J"};
  int u = 0;
  while (std::fabs(pj) >= 1000 && u < 4) {
    pj /= 1000;
    ++u;
  }
  return formatTrimmed(pj, 3) + " " + units[u];
}

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
