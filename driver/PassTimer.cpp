#include "driver/PassTimer.h"

#include <cstdio>

namespace dfl::driver {

void PassTimer::add(const std::string &stage, double seconds) {
  for (auto &[name, s] : stages_)
    if (name == stage) {
      s += seconds;
      return;
    }
  stages_.emplace_back(stage, seconds);
}

void PassTimer::merge(const PassTimer &other) {
  for (const auto &[name, s] : other.stages_)
    add(name, s);
}

double PassTimer::seconds(const std::string &stage) const {
  for (const auto &[name, s] : stages_)
    if (name == stage)
      return s;
  return 0;
}

double PassTimer::total() const {
  double t = 0;
  for (const auto &[name, s] : stages_)
    t += s;
  return t;
}

std::string PassTimer::report() const {
  const char *rule = "===-------------------------------------------------------------------------===\n";
  double all = total();
  char line[160];
  std::string out = rule;
  out += "                          dflc stage timing report\n";
  out += rule;
  std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds (%.4f wall clock)\n\n", all, all);
  out += line;
  out += "   ---Wall Time---  --- Stage ---\n";
  auto row = [&](const std::string &name, double s) {
    std::snprintf(line, sizeof line, "  %8.4f (%5.1f%%)  %s\n", s, all > 0 ? 100.0 * s / all : 0.0, name.c_str());
    out += line;
  };
  for (const auto &[name, s] : stages_)
    row(name, s);
  row("Total", all);
  return out;
}

} // namespace dfl::driver
