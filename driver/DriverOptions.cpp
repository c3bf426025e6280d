#include "driver/DriverOptions.h"

#include "scheduler/kapla/Solver.h"
#include "support/Check.h"
#include "support/Diagnostics.h"

#include "frontend/Units.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace dfl::driver {
namespace {
const std::vector<std::string> kObjectives = {"energy", "latency", "edp"};

/// "2.5ms", "2.5 ms", "1e6": the number and the unit after it (spaces
/// between them allowed); nullopt unless the number is finite and positive.
std::optional<std::pair<double, std::string>> numberAndUnit(const std::string &text) {
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(begin, &end);
  if (end == begin || errno == ERANGE || !std::isfinite(v) || !(v > 0) || std::isspace(static_cast<unsigned char>(*begin)))
    return std::nullopt;
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  return std::pair(v, unit);
}
} // namespace

std::optional<std::string> solverNameError(const std::string &name) {
  if (makeSolver(name))
    return std::nullopt;
  return "unknown solver '" + name + "'" + didYouMean(name, solverNames()) + " (expected " +
         joinList(solverNames()) + ")";
}

std::optional<std::string> objectiveNameError(const std::string &name) {
  if (std::find(kObjectives.begin(), kObjectives.end(), name) != kObjectives.end())
    return std::nullopt;
  return "unknown objective '" + name + "'" + didYouMean(name, kObjectives) + " (expected energy, latency or edp)";
}

Objective objectiveOf(const std::string &name) {
  DFLC_CHECK(!objectiveNameError(name)) << "objective '" << name << "' was not validated";
  return name == "latency" ? Objective::Latency : name == "edp" ? Objective::EDP : Objective::Energy;
}

std::optional<int64_t> parseBatch(const std::string &text, std::string &error) {
  errno = 0;
  char *end = nullptr;
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) && !*end && errno != ERANGE && n >= 1)
    return n;
  error = "--batch needs a positive integer (at most 2^63 - 1), got '" + text + "'";
  return std::nullopt;
}

std::optional<double> parseWorkLimit(const std::string &text, std::string &error) {
  // Digits only (no sign, space or fraction); a power "2^K"; at most 2^53,
  // where a double still counts every point.
  auto digits = [](const std::string &t) {
    return !t.empty() && t.size() <= 16 && std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  const bool power = text.rfind("2^", 0) == 0;
  const std::string number = power ? text.substr(2) : text;
  if (digits(number)) {
    const uint64_t n = std::stoull(number), most = uint64_t{1} << 53;
    if (power ? n <= 53 : n >= 1 && n <= most)
      return static_cast<double>(power ? uint64_t{1} << n : n);
  }
  error = "--work-limit needs a positive number of points of work, an integer or 2^K, at most 2^53 (e.g. '2^40'), "
          "got '" + text + "'";
  return std::nullopt;
}

std::optional<LatencyBound> parseLatencyBound(const std::string &text, std::string &error) {
  static const std::pair<const char *, double> kTimeUnits[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  if (auto nu = numberAndUnit(text)) {
    auto [v, unit] = *nu;
    if (unit.empty() || unit == "cycles")
      return LatencyBound{v, false, text};
    for (auto [name, scale] : kTimeUnits)
      if (unit == name)
        return LatencyBound{v * scale, true, text};
  }
  error = "--max-latency needs a positive number of cycles, or of s, ms, us or ns (e.g. '2ms'), got '" + text + "'";
  return std::nullopt;
}

std::optional<double> parseEnergyBound(const std::string &text, std::string &error) {
  if (auto nu = numberAndUnit(text))
    if (auto scale = unitScale(nu->second, QuantityKind::Energy); scale && std::isfinite(nu->first * *scale))
      return nu->first * *scale;
  error = "--max-energy needs a positive energy with a unit (" + joinList(unitNamesOf(QuantityKind::Energy), ", ") +
          "; e.g. '2.5mJ'), got '" + text + "'";
  return std::nullopt;
}

} // namespace dfl::driver
