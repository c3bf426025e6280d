// A compilation's diagnostics in LSP's terms: what `publishDiagnostics`
// sends (the code as `code`, notes as `relatedInformation`, a problem in an
// imported file shown at the `import` that reads it) and the fix-its as quick
// fixes.
#pragma once

#include "lsp/Protocol.h"

#include "support/Diagnostics.h"

#include <string>
#include <vector>

namespace dfl::lsp {

struct Compilation;

/// A dflc diagnostic of `c` as LSP's.
Diagnostic toLspDiagnostic(const Compilation &c, const dfl::Diagnostic &d);

/// The fix-its of the root document's diagnostics on the lines of `range`, as
/// quick fixes (the same edits `dflc check` prints under the caret).
std::vector<CodeAction> quickFixes(const Compilation &c, const std::string &uri, Range range);

} // namespace dfl::lsp
