#include "lsp/Positions.h"

#include "support/DiagnosticRenderer.h"

#include "frontend/Loader.h"

#include <algorithm>
#include <cctype>

namespace dfl::lsp {

std::string uriToPath(const std::string &uri) {
  std::string rest = uri.rfind("file://", 0) == 0 ? uri.substr(7) : uri;
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      out += static_cast<char>(std::stoi(rest.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

std::string pathToUri(const std::string &path) {
  // Server paths are absolute (they come from file:// URIs or are made so).
  return fileUri(path[0] == '/' ? path : "/" + path);
}

namespace {

/// UTF-16 code units in a UTF-8 string (LSP's default position encoding).
int utf16Length(std::string_view s) {
  int n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80)
      n += c >= 0xF0 ? 2 : 1;
  return n;
}

} // namespace

Position toLspPosition(const SourceManager &sm, SourceLoc loc) {
  if (!loc.valid())
    return {};
  LineCol lc = sm.lineCol(loc);
  std::string_view line = sm.lineText(loc.file, lc.line);
  size_t bytes = std::min<size_t>(lc.column - 1, line.size());
  return {static_cast<int>(lc.line) - 1, utf16Length(line.substr(0, bytes))};
}

Range toLspRange(const SourceManager &sm, SourceRange r) {
  Position b = toLspPosition(sm, r.begin);
  return {b, r.end.valid() ? toLspPosition(sm, r.end) : b};
}

Location toLocation(const SourceManager &sm, SourceRange r) {
  return {pathToUri(canonicalPath(sm.path(r.begin.file))), toLspRange(sm, r)};
}

size_t offsetAt(const std::string &text, Position p) {
  size_t off = 0;
  for (int line = 0; line < p.line; ++line) {
    size_t nl = text.find('\n', off);
    if (nl == std::string::npos)
      return text.size();
    off = nl + 1;
  }
  int units = 0;
  while (off < text.size() && text[off] != '\n' && units < p.character) {
    unsigned char c = static_cast<unsigned char>(text[off]);
    units += c >= 0xF0 ? 2 : 1;
    ++off;
    while (off < text.size() && (static_cast<unsigned char>(text[off]) & 0xC0) == 0x80)
      ++off;
  }
  return off;
}

bool contains(SourceRange r, uint32_t file, size_t offset) {
  return r.valid() && r.begin.file == file && r.begin.offset <= offset && offset <= r.end.offset;
}

} // namespace dfl::lsp
