#include "lsp/Diagnostics.h"

#include "lsp/Compilation.h"
#include "lsp/Positions.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace dfl::lsp {
namespace {

DiagnosticSeverity toLspSeverity(Severity s) {
  switch (s) {
  case Severity::Error: return DiagnosticSeverity::Error;
  case Severity::Warning: return DiagnosticSeverity::Warning;
  case Severity::Remark: return DiagnosticSeverity::Information;
  case Severity::Note: return DiagnosticSeverity::Hint;
  }
  return DiagnosticSeverity::Error;
}

/// Where, in the root document, a problem in another file shows: the import
/// that reads that file, else the first import, else the top of the file.
Range anchorInRoot(const Compilation &c, uint32_t file) {
  if (!c.rootAst || c.rootAst->imports.empty())
    return {};
  std::string target = canonicalPath(c.sm.path(file));
  fs::path dir = fs::path(c.sm.path(c.root)).parent_path();
  for (const ast::Import &imp : c.rootAst->imports)
    if (canonicalPath((dir / imp.path).string()) == target)
      return toLspRange(c.sm, imp.pathRange);
  return toLspRange(c.sm, c.rootAst->imports.front().pathRange);
}

} // namespace

Diagnostic toLspDiagnostic(const Compilation &c, const dfl::Diagnostic &d) {
  Diagnostic out;
  out.severity = toLspSeverity(d.severity);
  out.code = d.code;
  out.message = d.message;
  if (d.range.valid() && d.range.begin.file == c.root) {
    out.range = toLspRange(c.sm, d.range);
  } else if (d.range.valid()) {
    LineCol lc = c.sm.lineCol(d.range.begin);
    out.range = anchorInRoot(c, d.range.begin.file);
    out.message = c.sm.path(d.range.begin.file) + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column) +
                  ": " + d.message;
    out.relatedInformation.push_back({toLocation(c.sm, d.range), d.message});
  }
  for (const dfl::Diagnostic &n : d.notes)
    if (n.range.valid())
      out.relatedInformation.push_back({toLocation(c.sm, n.range), n.message});
    else
      out.message += "\nnote: " + n.message;
  return out;
}

std::vector<CodeAction> quickFixes(const Compilation &c, const std::string &uri, Range range) {
  std::vector<CodeAction> out;
  for (const dfl::Diagnostic &d : c.diags.diagnostics())
    for (const FixIt &f : d.fixits) {
      if (!f.range.valid() || f.range.begin.file != c.root)
        continue;
      Range r = toLspRange(c.sm, f.range);
      if (range.end.line < r.start.line || range.start.line > r.end.line)
        continue;
      out.push_back({"Replace '" + std::string(c.sm.textOf(f.range)) + "' with '" + f.replacement + "'", "quickfix",
                     uri, {{r, f.replacement}}, std::nullopt, true});
    }
  return out;
}

} // namespace dfl::lsp
