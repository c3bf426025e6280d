#include "sweep/SweepJson.h"

#include <algorithm>
#include <cstring>

namespace dfl::sweep {
namespace {

/// Walks a text nlohmann accepted, recording each value's range; keys are
/// decoded as JSON decodes them ("hardw\u0061re" is "hardware").
class Locator {
public:
  Locator(const std::string &text, std::map<std::string, std::pair<uint32_t, uint32_t>> &ranges)
      : t_(text), ranges_(ranges) {
    if (t_.compare(0, 3, "\xEF\xBB\xBF") == 0)   // a UTF-8 BOM, which nlohmann skips too
      i_ = 3;
    value("");
  }
  std::optional<std::pair<std::string, uint32_t>> duplicate;   // the first repeated key: its pointer and offset

private:
  void space() {
    while (i_ < t_.size() && t_[i_] && std::strchr(" \t\r\n", t_[i_]))
      ++i_;
  }
  static void utf8(uint32_t c, std::string &out) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  uint32_t hex4() {
    uint32_t v = static_cast<uint32_t>(std::stoul(t_.substr(i_, 4), nullptr, 16));
    i_ += 4;
    return v;
  }
  std::string string() {   // at '"'; the string's value
    std::string out;
    ++i_;
    while (i_ < t_.size() && t_[i_] != '"') {
      if (t_[i_] != '\\') {
        out += t_[i_++];
        continue;
      }
      char e = t_[++i_];
      ++i_;
      if (e != 'u') {
        const char *from = "bfnrt", *to = "\b\f\n\r\t";
        const char *k = std::strchr(from, e);
        out += k && e ? to[k - from] : e;   // \" \\ \/ stand for themselves
        continue;
      }
      uint32_t c = hex4();
      if (c >= 0xD800 && c < 0xDC00 && t_.compare(i_, 2, "\\u") == 0) {   // a surrogate pair
        i_ += 2;
        c = 0x10000 + ((c - 0xD800) << 10) + (hex4() - 0xDC00);
      }
      utf8(c, out);
    }
    ++i_;
    return out;
  }
  void value(const std::string &pointer) {
    space();
    auto begin = static_cast<uint32_t>(i_);
    if (t_[i_] == '{' || t_[i_] == '[') {
      bool object = t_[i_++] == '{';
      for (size_t n = 0;; ++n) {
        space();
        if (t_[i_] == '}' || t_[i_] == ']')
          break;
        std::string key = "/" + std::to_string(n);
        if (object) {
          auto at = static_cast<uint32_t>(i_);
          key = LocatedJson::key(string());
          if (ranges_.count(pointer + key) && !duplicate)
            duplicate = {{pointer + key, at}};
          space();
          ++i_;   // ':'
        }
        value(pointer + key);
        space();
        if (t_[i_] == ',')
          ++i_;
      }
      ++i_;
    } else if (t_[i_] == '"') {
      string();
    } else {
      while (i_ < t_.size() && !std::strchr(",]} \t\r\n", t_[i_]))
        ++i_;
    }
    ranges_[pointer] = {begin, static_cast<uint32_t>(i_)};
  }
  const std::string &t_;
  std::map<std::string, std::pair<uint32_t, uint32_t>> &ranges_;
  size_t i_ = 0;
};

/// The offset of the first bracket nested deeper than kMaxJsonDepth, if any.
std::optional<size_t> tooDeep(const std::string &t) {
  size_t depth = 0;
  bool inString = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth)
        return i;
    } else if ((c == '}' || c == ']') && depth) {
      --depth;
    }
  }
  return std::nullopt;
}

} // namespace

SourceRange LocatedJson::at(const std::string &pointer) const {
  for (std::string p = pointer;; p = p.substr(0, p.rfind('/'))) {
    if (auto it = ranges.find(p); it != ranges.end())
      return {{file, it->second.first}, {file, it->second.second}};
    if (p.empty())
      return {{file, 0}, {file, 0}};
  }
}

std::string LocatedJson::key(const std::string &key) {
  std::string out = "/";
  for (char c : key)
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

std::optional<LocatedJson> parseLocated(uint32_t file, const SourceManager &sm, DiagnosticsEngine &diags,
                                        diag::ID notJson, diag::ID invalid) {
  const std::string &text = sm.text(file);
  auto report = [&](size_t offset, diag::ID id, const std::string &why) {
    auto at = static_cast<uint32_t>(std::min(offset, text.size()));
    diags.report({{file, at}, {file, at}}, id) << why;
    return std::nullopt;
  };
  if (auto deep = tooDeep(text))
    return report(*deep, invalid, "JSON nested more than " + std::to_string(kMaxJsonDepth) + " deep");
  LocatedJson j;
  j.file = file;
  try {
    j.value = Json::parse(text);
  } catch (const Json::parse_error &e) {
    std::string what = e.what();
    // After nlohmann's "[json.exception...] parse error at line L, column C: ".
    what = what.substr(what.find(": ", what.find("parse error")) + 2);
    return report(e.byte ? e.byte - 1 : 0, notJson, what);
  }
  Locator locator(text, j.ranges);
  if (locator.duplicate) {
    auto [pointer, offset] = *locator.duplicate;
    std::string key = pointer.substr(pointer.rfind('/') + 1);
    return report(offset, invalid, "key \"" + key + "\" is given twice in one object");
  }
  return j;
}

} // namespace dfl::sweep
