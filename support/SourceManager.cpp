#include "support/SourceManager.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace dfl {

uint32_t SourceManager::addBuffer(std::string path, std::string text) {
  Buffer b{std::move(path), std::move(text), {0}};
  // A line ends at \n, \r\n or a lone \r (old Mac files), as the lexer's whitespace does.
  for (uint32_t i = 0; i < b.text.size(); ++i)
    if (b.text[i] == '\n' || (b.text[i] == '\r' && (i + 1 == b.text.size() || b.text[i + 1] != '\n')))
      b.lineStarts.push_back(i + 1);
  buffers_.push_back(std::move(b));
  return static_cast<uint32_t>(buffers_.size());
}

std::optional<uint32_t> SourceManager::loadFile(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open file";
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = "cannot read file";
    return std::nullopt;
  }
  return addBuffer(path, ss.str());
}

uint32_t SourceManager::findBuffer(const std::string &path) const {
  for (size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].path == path)
      return static_cast<uint32_t>(i + 1);
  return 0;
}

LineCol SourceManager::lineCol(SourceLoc loc) const {
  if (!loc.valid())
    return {};
  const Buffer &b = buffer(loc.file);
  auto it = std::upper_bound(b.lineStarts.begin(), b.lineStarts.end(), loc.offset);
  unsigned line = static_cast<unsigned>(it - b.lineStarts.begin());
  return {line, loc.offset - b.lineStarts[line - 1] + 1};
}

std::string_view SourceManager::lineText(uint32_t file, unsigned line) const {
  const Buffer &b = buffer(file);
  if (line == 0 || line > b.lineStarts.size())
    return {};
  uint32_t begin = b.lineStarts[line - 1];
  uint32_t end = line < b.lineStarts.size() ? b.lineStarts[line] - 1
                                            : static_cast<uint32_t>(b.text.size());
  std::string_view v(b.text.data() + begin, end - begin);
  if (!v.empty() && v.back() == '\r')
    v.remove_suffix(1);
  return v;
}

uint32_t SourceManager::offsetOf(uint32_t file, LineCol lc) const {
  const Buffer &b = buffer(file);
  if (lc.line == 0)
    return 0;
  if (lc.line > b.lineStarts.size())
    return static_cast<uint32_t>(b.text.size());
  uint32_t begin = b.lineStarts[lc.line - 1];
  uint32_t len = static_cast<uint32_t>(lineText(file, lc.line).size());
  return begin + std::min(lc.column > 0 ? lc.column - 1 : 0, len);
}

std::string_view SourceManager::textOf(SourceRange r) const {
  if (!r.valid())
    return {};
  const std::string &t = text(r.begin.file);
  uint32_t b = std::min<uint32_t>(r.begin.offset, t.size());
  uint32_t e = std::min<uint32_t>(std::max(r.end.offset, b), t.size());
  return std::string_view(t).substr(b, e - b);
}

} // namespace dfl
