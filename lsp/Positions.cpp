#include "lsp/Positions.h"

#include "support/DiagnosticRenderer.h"

#include "frontend/Loader.h"

#include <algorithm>
#include <cctype>

namespace dfl::lsp {

namespace {

/// RFC 3986 percent-decoding; a `%00` stays as written (no NUL inside a path).
std::string percentDecoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      char c = static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      if (c != '\0') {
        out += c;
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

} // namespace

std::string uriToPath(const std::string &uri) {
  // RFC 8089: file:/PATH, file:///PATH, file://localhost/PATH (local), or
  // file://HOST/PATH (another machine's: //HOST/PATH, as clangd does). The
  // scheme is case-insensitive; a query or fragment is not part of the path.
  std::string_view rest(uri);
  if (rest.size() < 5 || !equalsIgnoringCase(rest.substr(0, 5), "file:"))
    return percentDecoded(rest);   // another scheme (untitled:...): a name, not a file
  rest.remove_prefix(5);
  rest = rest.substr(0, rest.find_first_of("?#"));
  std::string host;
  if (rest.rfind("//", 0) == 0) {
    rest.remove_prefix(2);
    size_t slash = rest.find('/');
    host = percentDecoded(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
  }
  std::string path = percentDecoded(rest);
  if (!host.empty() && !equalsIgnoringCase(host, "localhost"))
    return "//" + host + path;
  return path;
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

namespace {

/// The length of the line break at `off` (\n, \r\n or a lone \r, as LSP's
/// "Text Documents" and SourceManager count lines); 0 if none starts there.
size_t lineBreakAt(const std::string &text, size_t off) {
  if (off >= text.size())
    return 0;
  if (text[off] == '\n')
    return 1;
  if (text[off] == '\r')
    return off + 1 < text.size() && text[off + 1] == '\n' ? 2 : 1;
  return 0;
}

} // namespace

size_t offsetAt(const std::string &text, Position p) {
  size_t off = 0;
  for (int line = 0; line < p.line; ++line) {
    while (off < text.size() && !lineBreakAt(text, off))
      ++off;
    if (off == text.size())
      return text.size();
    off += lineBreakAt(text, off);
  }
  int units = 0;
  while (off < text.size() && !lineBreakAt(text, off) && units < p.character) {
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
