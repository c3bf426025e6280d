#include "support/SourceManager.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

uint32_t SourceManager::addOpaqueBuffer(std::string path) {
  uint32_t id = addBuffer(std::move(path), "");
  buffers_.back().opaque = true;
  return id;
}

std::string notRegularFileReason(unsigned mode) {
  if (S_ISREG(mode))
    return "";
  if (S_ISDIR(mode))
    return "is a directory";
  const char *what = S_ISFIFO(mode)  ? "a FIFO"
                     : S_ISCHR(mode) ? "a character device"
                     : S_ISBLK(mode) ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                     : S_ISLNK(mode)  ? "a symbolic link"
                                      : "not a file";
  return std::string("is ") + what + ", not a regular file";
}

namespace {

std::string tooLarge() {
  return "is larger than the " + std::to_string(SourceManager::kMaxFileBytes >> 20) + " MiB limit";
}

/// Closes a descriptor on every path out of loadFile.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

std::optional<uint32_t> SourceManager::loadFile(const std::string &path, std::string &error) {
  // stat first, so that a FIFO or device is never opened; O_NONBLOCK in case
  // the path was replaced by one in between (then fstat refuses it).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = std::string("cannot open file: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (error = notRegularFileReason(st.st_mode); !error.empty())
    return std::nullopt;
  Fd in{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
  if (in.fd < 0) {
    error = std::string("cannot open file: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (::fstat(in.fd, &st) != 0 || !(error = notRegularFileReason(st.st_mode)).empty()) {
    if (error.empty())
      error = std::string("cannot read file: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    error = tooLarge();
    return std::nullopt;
  }
  // The size is a hint (a /proc file says 0, a file can grow): read to the
  // end, but no further than one byte past the limit.
  std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (text.size() > kMaxFileBytes) {
        error = tooLarge();
        return std::nullopt;
      }
      text.resize(std::min<size_t>(std::max<size_t>(2 * text.size(), 4096), kMaxFileBytes + 1));
    }
    ssize_t n = ::read(in.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = std::string("cannot read file: ") + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0)
      break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return addBuffer(path, std::move(text));
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
