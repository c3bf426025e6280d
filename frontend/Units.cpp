#include "frontend/Units.h"

#include "support/Check.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace dfl {
namespace {

struct UnitDef {
  const char *name;
  QuantityKind kind;
  double scale;
  bool perSecond;
};

const UnitDef kUnits[] = {
    {"bit", QuantityKind::Size, 1.0 / 8, false},
    {"B", QuantityKind::Size, 1, false},
    {"KiB", QuantityKind::Size, 1024.0, false},
    {"MiB", QuantityKind::Size, 1024.0 * 1024, false},
    {"GiB", QuantityKind::Size, 1024.0 * 1024 * 1024, false},
    {"KB", QuantityKind::Size, 1e3, false},
    {"MB", QuantityKind::Size, 1e6, false},
    {"GB", QuantityKind::Size, 1e9, false},
    {"fJ", QuantityKind::Energy, 1e-3, false},
    {"pJ", QuantityKind::Energy, 1, false},
    {"nJ", QuantityKind::Energy, 1e3, false},
    {"uJ", QuantityKind::Energy, 1e6, false},
    {"mJ", QuantityKind::Energy, 1e9, false},
    {"J", QuantityKind::Energy, 1e12, false},
    {"Hz", QuantityKind::Frequency, 1, false},
    {"kHz", QuantityKind::Frequency, 1e3, false},
    {"MHz", QuantityKind::Frequency, 1e6, false},
    {"GHz", QuantityKind::Frequency, 1e9, false},
    {"B/cycle", QuantityKind::Bandwidth, 1, false},
    {"bit/cycle", QuantityKind::Bandwidth, 1.0 / 8, false},
    {"B/s", QuantityKind::Bandwidth, 1, true},
    {"KB/s", QuantityKind::Bandwidth, 1e3, true},
    {"MB/s", QuantityKind::Bandwidth, 1e6, true},
    {"GB/s", QuantityKind::Bandwidth, 1e9, true},
    {"KiB/s", QuantityKind::Bandwidth, 1024.0, true},
    {"MiB/s", QuantityKind::Bandwidth, 1024.0 * 1024, true},
    {"GiB/s", QuantityKind::Bandwidth, 1024.0 * 1024 * 1024, true},
};

} // namespace

std::vector<std::string> unitNamesOf(QuantityKind kind) {
  std::vector<std::string> names;
  for (const UnitDef &u : kUnits)
    if (u.kind == kind)
      names.push_back(u.name);
  return names;
}

std::optional<double> unitScale(const std::string &unit, QuantityKind kind) {
  for (const UnitDef &u : kUnits)
    if (unit == u.name && u.kind == kind)
      return u.scale;
  return std::nullopt;
}

const char *quantityKindName(QuantityKind k) {
  switch (k) {
  case QuantityKind::Size: return "a size";
  case QuantityKind::Energy: return "an energy";
  case QuantityKind::Frequency: return "a frequency";
  case QuantityKind::Bandwidth: return "a bandwidth";
  case QuantityKind::Count: return "a plain number";
  }
  DFLC_UNREACHABLE("QuantityKind " + std::to_string(static_cast<int>(k)));
}

// A quantity, converted to its base unit, is finite and at most 2^53 (exact
// integers in a double): 1.0e300 GiB or 1.0e999 (infinite) would turn into
// infinities, NaNs and out-of-range integer conversions downstream.
constexpr double kMaxQuantity = 9007199254740992.0;

const char *baseUnit(QuantityKind kind) {
  switch (kind) {
  case QuantityKind::Size: return " B";
  case QuantityKind::Energy: return " pJ";
  case QuantityKind::Frequency: return " Hz";
  case QuantityKind::Bandwidth: return " B/cycle";
  case QuantityKind::Count: return "";
  }
  DFLC_UNREACHABLE("QuantityKind " + std::to_string(static_cast<int>(kind)));
}

std::optional<Quantity> bounded(Quantity q, const ast::Value &v, const std::string &key, const char *unit,
                                DiagnosticsEngine &diags) {
  if (std::isfinite(q.value) && std::fabs(q.value) <= kMaxQuantity)
    return q;
  diags.report(v.range, diag::err_value_range)
      << key << std::string("at most 2^53") + unit << v.number + (v.unit.empty() ? "" : " " + v.unit);
  return std::nullopt;
}

std::optional<Quantity> toQuantity(const ast::Value &v, QuantityKind kind, const std::string &key,
                                   DiagnosticsEngine &diags) {
  std::vector<std::string> expected = unitNamesOf(kind);
  if (v.kind != ast::Value::Kind::Quantity) {
    diags.report(v.range, diag::err_value_kind)
        << key
        << std::string(quantityKindName(kind)) +
               (kind == QuantityKind::Count ? "" : " with a unit (" + joinList(expected, ", ") + ")");
    return std::nullopt;
  }
  if (kind == QuantityKind::Count) {
    if (!v.unit.empty()) {
      diags.report(v.unitRange, diag::err_value_kind) << key << "a plain number without a unit";
      return std::nullopt;
    }
    return bounded(Quantity{v.numeric, false}, v, key, "", diags);
  }
  if (v.unit.empty()) {
    diags.report(v.range, diag::err_value_kind)
        << key << std::string(quantityKindName(kind)) + " with a unit (" + joinList(expected, ", ") + ")";
    return std::nullopt;
  }
  for (const UnitDef &u : kUnits) {
    if (v.unit != u.name)
      continue;
    if (u.kind != kind) {
      diags.report(v.unitRange, diag::err_unit_mismatch)
          << key << quantityKindName(kind) << v.unit << quantityKindName(u.kind);
      return std::nullopt;
    }
    return bounded(Quantity{v.numeric * u.scale, u.perSecond}, v, key, u.perSecond ? " B/s" : baseUnit(kind), diags);
  }
  std::vector<std::string> all;
  for (const UnitDef &u : kUnits)
    all.push_back(u.name);
  diags.report(v.unitRange, diag::err_unknown_unit)
      << v.unit << Suggestion{v.unitRange, v.unit, all} << joinList(expected, ", ");
  return std::nullopt;
}

} // namespace dfl
