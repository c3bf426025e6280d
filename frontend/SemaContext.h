// Internal to the front end: what the network, hardware and schedule analyses
// share. Not part of the public interface.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"
#include "model/Model.h"

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

/// A value as a diagnostic quotes it: `4 pJ`, `2 x 2`, `'word'`.
std::string valueText(const ast::Value &v);
/// A positive integer from a quantity value (no unit), or reports E0210.
std::optional<int64_t> positiveInteger(const ast::Value &v, const std::string &key,
                                       DiagnosticsEngine &diags);
/// true/false from a word value, or reports E0210.
std::optional<bool> boolean(const ast::Value &v, const std::string &key, DiagnosticsEngine &diags);

/// `batch`, if given, replaces the batch the network declares (AnalyzeOptions::batch).
Network analyzeNetwork(const ast::NetworkDecl &decl, DiagnosticsEngine &diags, std::optional<int64_t> batch = {});
Hardware analyzeHardware(const ast::HardwareDecl &decl, DiagnosticsEngine &diags);
Schedule analyzeSchedule(const ast::ScheduleDecl &decl, const Model &model, DiagnosticsEngine &diags);
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
