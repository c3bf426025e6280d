// The symbol index: every name a file writes (networks, hardware templates,
// inputs, layers, levels), where it is and what it names, definitions and uses
// alike; and the queries over it: the name at a position, its definition and
// references across the open documents, a document's outline.
#pragma once

#include "lsp/Protocol.h"

#include "frontend/Ast.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dfl::lsp {

struct Compilation;

/// A name in the source and what it names; definitions and uses alike.
struct Occurrence {
  enum class Kind { Network, Hardware, Tensor, Level };
  Kind kind;
  SourceRange range;
  bool isDefinition = false;
  std::string scope, name;      // network or hardware; the layer/input/level name
  std::string scheduleLayer;    // Level inside a schedule: the layer it schedules
  SourceRange schedule;         // inside a schedule: its declaration's range
  std::string key() const { return std::to_string(static_cast<int>(kind)) + ":" + scope + "/" + name; }
};

/// Appends the occurrences `file` writes to `out`.
void indexFile(const ast::File &file, std::vector<Occurrence> &out);

/// The occurrence at `pos` in the root document of `c`, if any.
const Occurrence *occurrenceAt(const Compilation &c, Position pos);

/// Every occurrence of the name at `pos` in `c` that `want` accepts: in that
/// document and what it imports, then in `others` (the other open documents,
/// which may import it); each place once.
std::vector<Location> findOccurrences(const Compilation &c, Position pos,
                                      const std::vector<std::shared_ptr<const Compilation>> &others,
                                      const std::function<bool(const Occurrence &)> &want);

/// The outline of the root document of `c`: networks (inputs, layers), hardware
/// (levels and blocks), schedules (layers, levels), intrinsics.
std::vector<DocumentSymbol> documentSymbols(const Compilation &c);

} // namespace dfl::lsp
