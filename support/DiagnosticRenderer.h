// Renders diagnostics for people (clang-style text with the source line and a
// caret), for programs (JSON) and for code scanning (SARIF 2.1.0). All three
// show the same diagnostics; positions are 1-based lines and columns.
#pragma once

#include "support/Diagnostics.h"

#include <ostream>
#include <string>
#include <vector>

namespace dfl {

void renderText(std::ostream &os, const SourceManager &sm, const std::vector<Diagnostic> &diags,
                bool color = false);
/// {"diagnostics": [{"severity", "code", "message", "file", "range": {...}, "notes": [...], "fixits": [...]}]}
std::string renderJson(const SourceManager &sm, const std::vector<Diagnostic> &diags);
std::string renderSarif(const SourceManager &sm, const std::vector<Diagnostic> &diags);
/// "2 errors and 1 warning generated." or "" if there are none.
std::string summaryLine(const std::vector<Diagnostic> &diags);
/// A URI reference for a path (RFC 3986): absolute paths become file:// URIs,
/// relative ones stay relative; bytes outside the unreserved set and `/` are %XX.
std::string fileUri(const std::string &path);

} // namespace dfl
