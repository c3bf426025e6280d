// Formatting: the edit that makes a document canonical, by the printer
// behind `dflc fmt` (frontend/Printer.h). The document is read alone, as
// `dflc fmt` reads a file: its imports need not resolve.
#pragma once

#include "lsp/Protocol.h"

#include <optional>
#include <string>
#include <vector>

namespace dfl::lsp {

/// The edits that make `text` (the document at `uri`) canonical: none if it
/// already is, one replacing it all otherwise; nullopt if it does not parse.
std::optional<std::vector<TextEdit>> formatDocument(const std::string &uri, const std::string &text);

} // namespace dfl::lsp
