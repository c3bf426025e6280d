// Parses one DFL buffer into an AST. Syntax errors (ANTLR's, rephrased) and
// lexical errors become diagnostics; nothing is printed by ANTLR itself.
// A file with any syntax error yields no AST: later stages never see a
// half-parsed tree.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <optional>

namespace dfl {

std::optional<ast::File> parseFile(uint32_t fileId, const SourceManager &sm,
                                   DiagnosticsEngine &diags);

/// Whether `word` is one of the grammar's keywords (no identifier may be).
bool isKeyword(const std::string &word);

} // namespace dfl
