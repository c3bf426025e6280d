// The DFL printer behind `dflc fmt`: prints a parsed file in canonical form.
// Canonical: 2-space indentation, one item per line, one space around `=` and
// after `,`, blank lines between top-level declarations, units and numbers as
// written. Comments are kept where they were, relative to the items around
// them. Parsing the output gives the same AST, but for the per-axis window
// attributes, printed in their shortest form (`stride=2 x 2` as `stride=2`,
// the same layer); printing it again gives the same text (idempotent).
#pragma once

#include "frontend/Ast.h"

#include <string>

namespace dfl {

std::string printFile(const ast::File &file, const SourceManager &sm);

} // namespace dfl
