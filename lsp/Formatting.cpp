#include "lsp/Formatting.h"

#include "lsp/Positions.h"

#include "frontend/Parser.h"
#include "frontend/Printer.h"

namespace dfl::lsp {

std::optional<std::vector<TextEdit>> formatDocument(const std::string &uri, const std::string &text) {
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  uint32_t id = sm.addBuffer(uriToPath(uri), text);
  auto file = parseFile(id, sm, diags);
  if (!file)
    return std::nullopt;
  std::string printed = printFile(*file, sm);
  if (printed == text)
    return std::vector<TextEdit>{};
  SourceLoc end{id, static_cast<uint32_t>(text.size())};
  return std::vector<TextEdit>{{{{0, 0}, toLspPosition(sm, end)}, printed}};
}

} // namespace dfl::lsp
