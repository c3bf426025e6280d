// Internal to the front end: what the network, hardware and schedule analyses
// share. Not part of the public interface.
#pragma once

#include "frontend/Ast.h"
#include "frontend/Units.h"
#include "support/Format.h"
#include "support/Diagnostics.h"
#include "model/Model.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace dfl::sema {

/// First-definition ranges per namespace, for redefinition diagnostics.
class Scope {
public:
  /// Returns false (and reports E0201) if `name` is already defined.
  bool define(const ast::Ident &name, const char *what, DiagnosticsEngine &diags) {
    auto [it, inserted] = defs_.emplace(name.name, name.range);
    if (!inserted)
      diags.report(name.range, diag::err_redefinition)
              .note(it->second, diag::note_previous_definition)
          << what << name.name;
    return inserted;
  }
  bool contains(const std::string &name) const { return defs_.count(name) > 0; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto &[n, r] : defs_)
      out.push_back(n);
    return out;
  }

private:
  std::map<std::string, SourceRange> defs_;
};

/// Checks the properties of one block against the keys it allows.
class PropertyTable {
public:
  PropertyTable(std::string where, std::vector<std::string> allowed, DiagnosticsEngine &diags)
      : where_(std::move(where)), allowed_(std::move(allowed)), diags_(diags) {}

  /// Returns the property if it is known and not a duplicate.
  const ast::Property *accept(const ast::Property &p) {
    if (std::find(allowed_.begin(), allowed_.end(), p.key.name) == allowed_.end()) {
      diags_.report(p.key.range, diag::err_unknown_property)
          << p.key.name << where_ << Suggestion{p.key.range, p.key.name, allowed_, "; expected " + joinList(allowed_, ", ")};
      return nullptr;
    }
    auto [it, inserted] = seen_.emplace(p.key.name, p.key.range);
    if (!inserted) {
      diags_.report(p.key.range, diag::err_duplicate_property).note(it->second, diag::note_previous_use)
          << p.key.name;
      return nullptr;
    }
    return &p;
  }
  bool has(const std::string &key) const { return seen_.count(key) > 0; }

private:
  std::string where_;
  std::vector<std::string> allowed_;
  DiagnosticsEngine &diags_;
  std::map<std::string, SourceRange> seen_;
};

/// The single value of a property, or reports E0405.
inline const ast::Value *single(const ast::Property &p, DiagnosticsEngine &diags) {
  if (p.values.size() != 1) {
    // At the values after the first: they are the ones to remove.
    diags.report({p.values[1].range.begin, p.values.back().range.end}, diag::err_value_count)
        << p.key.name << "one value" << p.values.size();
    return nullptr;
  }
  return &p.values[0];
}

inline std::optional<double> positiveQuantity(const ast::Property &p, QuantityKind kind, DiagnosticsEngine &diags,
                                       bool allowZero = false) {
  const ast::Value *v = single(p, diags);
  if (!v)
    return std::nullopt;
  auto q = toQuantity(*v, kind, p.key.name, diags);
  if (!q)
    return std::nullopt;
  if (q->value < 0 || (!allowZero && q->value == 0)) {
    diags.report(v->range, diag::err_value_range) << p.key.name << (allowZero ? "non-negative" : "positive")
                                                  << v->number + (v->unit.empty() ? "" : " " + v->unit);
    return std::nullopt;
  }
  return q->value;
}

/// A positive (or non-negative) whole number without a unit, at most `max`
/// (10^9 unless a property has a tighter limit), or reports E0403/E0404 with
/// the range it takes (and `why`, what the limit is).
inline std::optional<int64_t> wholeNumber(const ast::Property &p, DiagnosticsEngine &diags, bool allowZero = false,
                                          int64_t max = 1'000'000'000, const std::string &why = "") {
  const ast::Value *v = single(p, diags);
  if (!v)
    return std::nullopt;
  if (v->kind != ast::Value::Kind::Quantity || !v->isInteger || !v->unit.empty()) {
    diags.report(v->range, diag::err_value_kind) << p.key.name << "a whole number without a unit";
    return std::nullopt;
  }
  if (v->numeric < (allowZero ? 0 : 1) || v->numeric > static_cast<double>(max)) {
    std::string limit = max == 1'000'000'000 ? "10^9" : std::to_string(max);
    diags.report(v->range, diag::err_value_range)
        << p.key.name << std::string(allowZero ? "from 0 to " : "from 1 to ") + limit + why << v->number;
    return std::nullopt;
  }
  return static_cast<int64_t>(v->numeric);
}

/// Whether a hardware declaration has a block of `kind` (what tells a CM chip
/// or a cluster/core DSA from a memory hierarchy).
inline bool hasBlock(const ast::HardwareDecl &decl, const char *kind) {
  return std::any_of(decl.items.begin(), decl.items.end(), [&](const ast::HardwareItem &item) {
    const auto *b = std::get_if<ast::HardwareBlock>(&item);
    return b && b->kind.name == kind;
  });
}

/// A word width (`word`, and `wgt`, `psum` in a `word` block): bits or bytes,
/// a whole number of bits from 1 to `maxBits`, or reports E0404 (0.4 bit
/// would round to no bits: a division by zero, or weights made free).
std::optional<int64_t> wordWidthBits(const ast::Property &p, int64_t maxBits, DiagnosticsEngine &diags);

/// `word` (at most 64 bit) or `frequency`, the top-level properties the
/// CM and DSA templates share.
void wordOrFrequency(const ast::Property &p, int64_t &wordBits, double &frequencyHz, DiagnosticsEngine &diags);

/// The blocks of a CM or DSA template: `kinds` are the ones it knows (any
/// other is reported as `unknownKind`: kind, hardware name, suggestion), and
/// a block holds no dataflow directives (E0507).
bool knownBlock(const ast::HardwareBlock &b, const std::vector<std::string> &kinds, diag::ID unknownKind,
                const std::string &hardware, DiagnosticsEngine &diags);
/// A block that appears once and takes no name: false after E0509 or E0201.
bool onceUnnamed(const ast::HardwareBlock &b, std::map<std::string, SourceRange> &seen, DiagnosticsEngine &diags);

/// A value as a diagnostic quotes it: `4 pJ`, `2 x 2`, `'word'`.
std::string valueText(const ast::Value &v);
/// A positive integer (at least `least`: 0 for a position) from a quantity value (no unit), or reports E0210.
std::optional<int64_t> positiveInteger(const ast::Value &v, const std::string &key,
                                       DiagnosticsEngine &diags, int64_t least = 1);
/// true/false from a word value, or reports E0210.
std::optional<bool> boolean(const ast::Value &v, const std::string &key, DiagnosticsEngine &diags);

/// `batch`, if given, replaces the batch the network declares (AnalyzeOptions::batch).
Network analyzeNetwork(const ast::NetworkDecl &decl, DiagnosticsEngine &diags, std::optional<int64_t> batch = {});
Hardware analyzeHardware(const ast::HardwareDecl &decl, DiagnosticsEngine &diags);
/// Whether a hardware declaration describes a computational-memory chip (it
/// has a `core` block), and its analysis (docs/language.md, "CM accelerators").
bool isCmHardware(const ast::HardwareDecl &decl);
CmHardware analyzeCmHardware(const ast::HardwareDecl &decl, DiagnosticsEngine &diags);
/// Whether a hardware declaration describes a cluster/core DSA (it has a
/// `cluster` block), and its analysis (docs/language.md, "Cluster/core DSAs").
bool isDsaHardware(const ast::HardwareDecl &decl);
DsaHardware analyzeDsaHardware(const ast::HardwareDecl &decl, DiagnosticsEngine &diags);
Schedule analyzeSchedule(const ast::ScheduleDecl &decl, const Model &model, DiagnosticsEngine &diags);
/// A schedule on the cluster/core DSA `model.dsaHardware[hardware]`
/// (docs/language.md, "Schedules on a cluster/core DSA").
DsaSchedule analyzeDsaSchedule(const ast::ScheduleDecl &decl, const Model &model, int hardware, DiagnosticsEngine &diags);
/// The index of the layer a schedule names, or -1 after E0202 with a hint
/// (a close name, an input, a fused activation, a backward layer without --train).
int scheduledLayer(const Network &net, const ast::Ident &id, DiagnosticsEngine &diags);
Intrinsic analyzeIntrinsic(const ast::IntrinsicDecl &decl, DiagnosticsEngine &diags);
/// Gives every level with `intrinsic = NAME;` the named intrinsic's nest, or
/// reports E0705 (no such intrinsic) or E0706 (it does not fit the level).
void resolveLevelIntrinsics(Model &model, DiagnosticsEngine &diags);

/// Checks one level's directives against a layer (or, for hardware-fixed
/// dataflow, against no layer: `layer` may be null).
LevelDirectives analyzeDirectives(const std::vector<ast::Directive> &directives, const Layer *layer,
                                  DiagnosticsEngine &diags);
/// Drops, with E0608/E0609, the layouts not at the outermost level of `hw`
/// (`level` < 0: fixed by the hardware) or whose parts do not match its
/// memory channels.
void checkLayouts(std::vector<LayoutDirective> &layouts, const Hardware &hw, int level, DiagnosticsEngine &diags);

} // namespace dfl::sema
