#include "lsp/MessageReader.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

namespace dfl::lsp {
namespace {

constexpr size_t npos = std::string::npos;
/// Enough bytes before a line break to hold a whole `Content-Length: N` line
/// ("content-length" 14, blanks 8 + 8, ':' 1, digits 20, "\r\n" 2).
constexpr size_t kLookback = 64;

bool blank(char c) { return c == ' ' || c == '\t'; }

/// Where the `Content-Length: DIGITS` line ending `s` (which ends with a line
/// break) starts, read backwards; npos if `s` does not end with one.
size_t contentLengthLineStart(std::string_view s) {
  static constexpr std::string_view kName = "content-length";
  size_t i = s.size();
  if (i == 0 || s[i - 1] != '\n')
    return npos;
  --i;
  if (i > 0 && s[i - 1] == '\r')
    --i;
  for (int k = 0; k < 8 && i > 0 && blank(s[i - 1]); ++k)
    --i;
  size_t digits = 0;
  while (digits < 20 && i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1])))
    --i, ++digits;
  if (digits == 0)
    return npos;
  for (int k = 0; k < 8 && i > 0 && blank(s[i - 1]); ++k)
    --i;
  if (i == 0 || s[i - 1] != ':')
    return npos;
  --i;
  if (i < kName.size())
    return npos;
  i -= kName.size();
  for (size_t j = 0; j < kName.size(); ++j)
    if (std::tolower(static_cast<unsigned char>(s[i + j])) != kName[j])
      return npos;
  return i;
}

/// The first `Content-Length` line ending at a line break of `s` at or after
/// `from`; npos if none.
size_t findContentLengthLine(std::string_view s, size_t from) {
  for (size_t nl = s.find('\n', from); nl != npos; nl = s.find('\n', nl + 1)) {
    size_t start = nl + 1 > kLookback ? nl + 1 - kLookback : 0;
    if (size_t h = contentLengthLineStart(s.substr(start, nl + 1 - start)); h != npos)
      return start + h;
  }
  return npos;
}

/// RFC 7230's token: a header name.
bool isToken(std::string_view s) {
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kExtra.find(c) != npos;
  });
}

/// `s` for a message: at most 40 characters, anything unprintable as '?'.
std::string quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 40))
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return out + (s.size() > 40 ? "...'" : "'");
}

} // namespace

bool jsonDeeperThan(std::string_view text, size_t limit) {
  size_t depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if ((c == '[' || c == '{') && ++depth > limit)
      return true;
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return false;
}

size_t MessageReader::read(char *buf, size_t n) {
  if (pushbackPos_ < pushback_.size()) {
    size_t k = std::min(n, pushback_.size() - pushbackPos_);
    std::copy_n(pushback_.data() + pushbackPos_, k, buf);
    pushbackPos_ += k;
    return k;
  }
  std::streambuf *sb = in_.rdbuf();
  // What is buffered comes without blocking; only the first byte may wait.
  std::streamsize avail = sb->in_avail();
  if (avail > 0)
    return static_cast<size_t>(sb->sgetn(buf, std::min<std::streamsize>(avail, n)));
  int c = sb->sbumpc();
  if (c == std::char_traits<char>::eof())
    return 0;
  buf[0] = static_cast<char>(c);
  avail = n > 1 ? sb->in_avail() : 0;
  return 1 + (avail > 0 ? static_cast<size_t>(sb->sgetn(buf + 1, std::min<std::streamsize>(avail, n - 1))) : 0);
}

void MessageReader::unread(std::string_view bytes) {
  pushback_ = std::string(bytes) + pushback_.substr(pushbackPos_);
  pushbackPos_ = 0;
}

MessageReader::Line MessageReader::readLine(std::string &line) {
  line.clear();
  char c;
  while (read(&c, 1) == 1) {
    if (c == '\n') {
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      return Line::Ok;
    }
    if (line.size() >= kMaxHeaderLineBytes)
      return Line::TooLong;
    line += c;
  }
  return Line::End;
}

bool MessageReader::consume(uint64_t length, std::string *keep, bool &ranIntoHeader) {
  std::string window;   // the last bytes, when they are not kept
  std::string &s = keep ? *keep : window;
  char buf[1 << 16];
  for (uint64_t left = length; left > 0;) {
    size_t n = read(buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, left)));
    if (n == 0)
      return false;
    left -= n;
    size_t from = s.size();
    s.append(buf, n);
    if (size_t h = findContentLengthLine(s, from); h != npos) {
      unread(std::string_view(s).substr(h));
      s.resize(h);
      ranIntoHeader = true;
      return true;
    }
    if (!keep && window.size() > kLookback)
      window.erase(0, window.size() - kLookback);
  }
  return true;
}

bool MessageReader::resynchronize() {
  std::string window;
  char buf[4096];
  while (size_t n = read(buf, sizeof buf)) {
    size_t from = window.size();
    window.append(buf, n);
    if (size_t h = findContentLengthLine(window, from); h != npos) {
      unread(std::string_view(window).substr(h));
      return true;
    }
    if (window.size() > kLookback)
      window.erase(0, window.size() - kLookback);
  }
  return false;
}

MessageReader::Result MessageReader::fail(std::string error, bool resync) {
  resync_ = resync;
  return {Kind::Error, "", std::move(error)};
}

MessageReader::Result MessageReader::next() {
  if (resync_) {
    resync_ = false;
    if (!resynchronize())
      return {Kind::End, "", ""};
  }
  if (skip_) {
    // Never allocated: read and dropped in bounded chunks (or up to the next header).
    bool ranIntoHeader = false;
    uint64_t length = std::exchange(skip_, 0);
    if (!consume(length, nullptr, ranIntoHeader))
      return {Kind::End, "", ""};
  }
  std::optional<uint64_t> length;
  size_t lines = 0;
  std::string line;
  while (true) {
    Line got = readLine(line);
    if (got == Line::End)
      return {Kind::End, "", ""};
    if (got == Line::TooLong)
      return fail("a header line longer than " + std::to_string(kMaxHeaderLineBytes) + " bytes");
    if (line.empty()) {
      if (lines == 0)
        continue;   // a stray blank line between messages
      break;
    }
    if (++lines > kMaxHeaderLines)
      return fail("more than " + std::to_string(kMaxHeaderLines) + " header lines");
    if (size_t h = contentLengthLineStart(line + "\n"); h != npos && h > 0) {
      unread(line.substr(h) + "\r\n");   // the header is kept: no resynchronizing
      return fail(std::to_string(h) + " bytes that are not a header before 'Content-Length'", false);
    }
    size_t colon = line.find(':');
    if (colon == npos || !isToken(std::string_view(line).substr(0, colon)))
      return fail("a malformed header line " + quoted(line));
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name != "content-length")
      continue;   // Content-Type and the like: only the length matters
    std::string_view value = std::string_view(line).substr(colon + 1);
    while (!value.empty() && blank(value.front()))
      value.remove_prefix(1);
    while (!value.empty() && blank(value.back()))
      value.remove_suffix(1);
    if (value.empty() || value.size() > 19 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return fail("an invalid Content-Length " + quoted(value) + " (expected a non-negative decimal integer)");
    length = std::stoull(std::string(value));
  }
  if (!length)
    return fail("a header block without Content-Length");
  bool ranIntoHeader = false;
  if (*length > maxMessageBytes_) {
    skip_ = *length;   // dropped by the next call, once this error has been answered
    return fail("a message of " + std::to_string(*length) + " bytes, above the limit of " +
                    std::to_string(maxMessageBytes_) + ": skipped",
                false);
  }
  Result r{Kind::Message, "", ""};
  r.body.reserve(static_cast<size_t>(std::min<uint64_t>(*length, 1 << 20)));
  if (!consume(*length, &r.body, ranIntoHeader))
    return {Kind::End, "", ""};   // the input ended inside the body: nothing to answer
  if (ranIntoHeader)
    return fail("Content-Length " + std::to_string(*length) + " is longer than the message: a header follows after " +
                    std::to_string(r.body.size()) + " bytes",
                false);
  return r;
}

} // namespace dfl::lsp
