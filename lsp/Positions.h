// Where things are, in LSP's terms: the one place where dflc's 1-based lines
// and byte columns (SourceManager) become LSP's 0-based lines and UTF-16
// characters, and back; source ranges as LSP ranges and locations; file URIs
// as paths.
#pragma once

#include "lsp/Protocol.h"

#include "support/SourceManager.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace dfl::lsp {

/// file:///a%20b/c.dfl <-> /a b/c.dfl. A file URI is read per RFC 8089: an empty
/// or `localhost` authority is this machine, the path is percent-decoded.
std::string uriToPath(const std::string &uri);
std::string pathToUri(const std::string &path);

/// A source location as an LSP position (0-based line, UTF-16 character).
Position toLspPosition(const SourceManager &sm, SourceLoc loc);
Range toLspRange(const SourceManager &sm, SourceRange r);
/// The range in its file, named by the file's canonical path as a URI.
Location toLocation(const SourceManager &sm, SourceRange r);

/// The inverse, for positions the client sends: a byte offset into `text`,
/// clamped; `\n`, `\r\n` and a lone `\r` each end a line (LSP, "Text Documents").
size_t offsetAt(const std::string &text, Position p);

/// True if the byte `offset` of `file` lies in `r` (either end included).
bool contains(SourceRange r, uint32_t file, size_t offset);

} // namespace dfl::lsp
