// Units of DFL quantities and their conversion to dflc's canonical units:
// bytes, picojoules, hertz, and bytes per cycle or per second.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace dfl {

enum class QuantityKind { Size, Energy, Frequency, Bandwidth, Count };
const char *quantityKindName(QuantityKind k);   // "a size", "an energy", ...

struct Quantity {
  double value = 0;          // bytes, pJ, Hz, B/cycle or B/s, plain number
  bool perSecond = false;    // Bandwidth only: value is B/s, not B/cycle
};

/// How many base units (B, pJ, Hz, B/cycle or B/s) one `unit` of `kind` is;
/// nullopt if `unit` is not one of kind's units.
std::optional<double> unitScale(const std::string &unit, QuantityKind kind);
/// The units of `kind`, in table order ("fJ", "pJ", ...).
std::vector<std::string> unitNamesOf(QuantityKind kind);

/// Converts `v` (the value of property `key`) to a quantity of `kind`, or
/// reports E0401/E0402/E0403 and returns nullopt.
std::optional<Quantity> toQuantity(const ast::Value &v, QuantityKind kind, const std::string &key,
                                   DiagnosticsEngine &diags);

} // namespace dfl
