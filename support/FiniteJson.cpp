#include "support/FiniteJson.h"

#include "support/Check.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>

namespace dfl {
namespace {

/// Where in `j` the first number that is not finite is ("" if none); built
/// only on the way out of a failure, so a large report costs one walk.
std::optional<std::string> nonFinite(const nlohmann::ordered_json &j) {
  if (j.is_number_float() && !std::isfinite(j.get<double>()))
    return "";
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      if (auto where = nonFinite(it.value()))
        return "." + it.key() + *where;
  if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i)
      if (auto where = nonFinite(j[i]))
        return "[" + std::to_string(i) + "]" + *where;
  return std::nullopt;
}

} // namespace

std::string dumpReport(const nlohmann::ordered_json &j) {
  auto where = nonFinite(j);
  DFLC_CHECK(!where) << "report value $" << *where << " is not finite";
  return j.dump(2) + "\n";
}

} // namespace dfl
