#include "support/DiagnosticRenderer.h"

#include "support/Check.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

namespace dfl {
namespace {

using json = nlohmann::ordered_json;

const char *colorOf(Severity s) {
  switch (s) {
  case Severity::Error: return "\033[1;31m";
  case Severity::Warning: return "\033[1;35m";
  case Severity::Note: return "\033[1;36m";
  case Severity::Remark: return "\033[1;34m";
  }
  DFLC_UNREACHABLE("Severity " + std::to_string(static_cast<int>(s)));
}

void renderOne(std::ostream &os, const SourceManager &sm, const Diagnostic &d, bool color) {
  const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";
  bool opaque = d.range.valid() && sm.isOpaque(d.range.begin.file);
  if (opaque) {
    os << bold << sm.path(d.range.begin.file) << ": " << reset;   // a file that is not text: no line
  } else if (d.range.valid()) {
    LineCol lc = sm.lineCol(d.range.begin);
    os << bold << sm.path(d.range.begin.file) << ":" << lc.line << ":" << lc.column << ": " << reset;
  } else {
    os << bold << "dflc: " << reset;
  }
  os << (color ? colorOf(d.severity) : "") << severityName(d.severity) << ":" << reset << bold << " " << d.message;
  if (!d.code.empty())
    os << " [" << d.code << "]";
  os << reset << "\n";
  if (!d.range.valid() || opaque)
    return;
  // The source line, then a caret under the start and tildes to the end of the range (on this line).
  LineCol b = sm.lineCol(d.range.begin), e = sm.lineCol(d.range.end);
  std::string_view line = sm.lineText(d.range.begin.file, b.line);
  std::string text;
  for (char c : line)
    text += c == '\t' ? ' ' : c;
  os << text << "\n";
  unsigned endCol = e.line == b.line ? e.column : static_cast<unsigned>(line.size()) + 1;
  std::string marker(b.column > 0 ? b.column - 1 : 0, ' ');
  marker += '^';
  for (unsigned c = b.column + 1; c < endCol; ++c)
    marker += '~';
  os << (color ? "\033[1;32m" : "") << marker << reset << "\n";
  for (const FixIt &f : d.fixits)
    if (f.range.begin.file == d.range.begin.file && sm.lineCol(f.range.begin).line == b.line) {
      std::string pad(sm.lineCol(f.range.begin).column - 1, ' ');
      os << pad << f.replacement << "\n";
    }
}

// Where each rule is documented: docs/diagnostics.md has an anchor per code.
constexpr const char *kDiagnosticsPage = "https://github.com/dflc/dflc/blob/main/docs/diagnostics.md";

json position(const SourceManager &sm, SourceLoc loc) {
  LineCol lc = sm.lineCol(loc);
  return {{"line", lc.line}, {"column", lc.column}};
}

json jsonOf(const SourceManager &sm, const Diagnostic &d) {
  json j;
  j["severity"] = severityName(d.severity);
  if (!d.code.empty())
    j["code"] = d.code;
  j["message"] = d.message;
  if (d.range.valid() && sm.isOpaque(d.range.begin.file)) {
    j["file"] = sm.path(d.range.begin.file);
  } else if (d.range.valid()) {
    j["file"] = sm.path(d.range.begin.file);
    j["range"] = {{"start", position(sm, d.range.begin)}, {"end", position(sm, d.range.end)}};
  }
  if (!d.notes.empty()) {
    j["notes"] = json::array();
    for (const Diagnostic &n : d.notes)
      j["notes"].push_back(jsonOf(sm, n));
  }
  if (!d.fixits.empty()) {
    j["fixits"] = json::array();
    for (const FixIt &f : d.fixits)
      j["fixits"].push_back({{"range", {{"start", position(sm, f.range.begin)}, {"end", position(sm, f.range.end)}}},
                             {"replacement", f.replacement}});
  }
  return j;
}

/// SARIF columns (run.columnKind "unicodeCodePoints") count code points, ours
/// count bytes: the code points before `loc` on its line, plus one.
unsigned codePointColumn(const SourceManager &sm, SourceLoc loc) {
  LineCol lc = sm.lineCol(loc);
  std::string_view line = sm.lineText(loc.file, lc.line);
  unsigned column = 1;
  for (size_t i = 0; i + 1 < lc.column && i < line.size(); ++i)
    column += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
  return column + (lc.column - 1 > line.size() ? lc.column - 1 - static_cast<unsigned>(line.size()) : 0);
}

json sarifRegion(const SourceManager &sm, SourceRange r) {
  return {{"startLine", sm.lineCol(r.begin).line},
          {"startColumn", codePointColumn(sm, r.begin)},
          {"endLine", sm.lineCol(r.end).line},
          {"endColumn", codePointColumn(sm, r.end)}};
}

json sarifLocation(const SourceManager &sm, SourceRange r, const std::string *message = nullptr) {
  json loc = {{"physicalLocation",
               {{"artifactLocation", {{"uri", fileUri(sm.path(r.begin.file))}}}, {"region", sarifRegion(sm, r)}}}};
  if (message)
    loc["message"] = {{"text", *message}};
  return loc;
}

const char *sarifLevel(Severity s) {
  return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "note";
}

/// FNV-1a, 64 bit: the same fingerprint from every build of dflc (std::hash
/// may differ between standard libraries and versions).
uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// Pretty-printed, with any byte that is not UTF-8 (a file name can hold one)
/// replaced by U+FFFD: nlohmann::json throws on invalid UTF-8.
std::string dump(const json &j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

} // namespace

/// A URI reference for a path (RFC 3986): absolute paths become file:// URIs,
/// relative ones stay relative; bytes outside the unreserved set and `/` are %XX.
std::string fileUri(const std::string &path) {
  std::string out = !path.empty() && path[0] == '/' ? "file://" : "";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

void renderText(std::ostream &os, const SourceManager &sm, const std::vector<Diagnostic> &diags, bool color) {
  for (const Diagnostic &d : diags) {
    renderOne(os, sm, d, color);
    for (const Diagnostic &n : d.notes)
      renderOne(os, sm, n, color);
  }
}

std::string renderJson(const SourceManager &sm, const std::vector<Diagnostic> &diags) {
  json arr = json::array();
  for (const Diagnostic &d : diags)
    arr.push_back(jsonOf(sm, d));
  return dump(json{{"diagnostics", arr}});
}

std::string renderSarif(const SourceManager &sm, const std::vector<Diagnostic> &diags) {
  json rules = json::array();
  std::map<std::string, size_t> ruleIndex;
  for (diag::ID id : allDiagnostics()) {
    const DiagInfo &info = diagInfo(id);
    if (info.severity == Severity::Note)
      continue;
    ruleIndex[info.code] = rules.size();
    rules.push_back({{"id", info.code},
                     {"name", info.name},
                     {"shortDescription", {{"text", info.format}}},
                     {"helpUri", std::string(kDiagnosticsPage) + "#" + info.code},
                     {"defaultConfiguration", {{"level", sarifLevel(info.severity)}}}});
  }
  json results = json::array();
  for (const Diagnostic &d : diags) {
    json r;
    if (auto it = ruleIndex.find(d.code); it != ruleIndex.end()) {
      r["ruleId"] = d.code;
      r["ruleIndex"] = it->second;
    }
    r["level"] = sarifLevel(d.severity);
    r["message"] = {{"text", d.message}};
    if (d.range.valid()) {
      r["locations"] = json::array({sarifLocation(sm, d.range)});
      // Stable across runs and unaffected by unrelated edits elsewhere in the file.
      std::string key = d.code + "|" + sm.path(d.range.begin.file) + "|" + std::string(sm.textOf(d.range)) + "|" +
                        d.message;
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
      r["partialFingerprints"] = {{"dflcDiagnostic/v1", hex}};
    }
    if (!d.notes.empty()) {
      json related = json::array();
      for (const Diagnostic &n : d.notes)
        if (n.range.valid())
          related.push_back(sarifLocation(sm, n.range, &n.message));
      r["relatedLocations"] = related;
    }
    // SARIF 2.1.0 §3.55: a fix is a set of artifact changes, each replacing regions.
    for (const FixIt &f : d.fixits)
      r["fixes"].push_back(
          {{"description", {{"text", "Replace '" + std::string(sm.textOf(f.range)) + "' with '" + f.replacement + "'"}}},
           {"artifactChanges",
            json::array({{{"artifactLocation", {{"uri", fileUri(sm.path(f.range.begin.file))}}},
                          {"replacements",
                           json::array({{{"deletedRegion", sarifRegion(sm, f.range)},
                                         {"insertedContent", {{"text", f.replacement}}}}})}}})}});
    results.push_back(r);
  }
  json sarif = {{"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"},
                {"version", "2.1.0"},
                {"runs",
                 json::array({{{"tool",
                                {{"driver",
                                  {{"name", "dflc"},
                                   {"informationUri", "https://github.com/dflc/dflc"},
                                   {"rules", rules}}}}},
                               {"columnKind", "unicodeCodePoints"},
                               {"results", results}}})}};
  return dump(sarif);
}

std::string summaryLine(const std::vector<Diagnostic> &diags) {
  size_t errors = std::count_if(diags.begin(), diags.end(), [](auto &d) { return d.severity == Severity::Error; });
  size_t warnings =
      std::count_if(diags.begin(), diags.end(), [](auto &d) { return d.severity == Severity::Warning; });
  auto plural = [](size_t n, const char *w) { return std::to_string(n) + " " + w + (n == 1 ? "" : "s"); };
  if (!errors && !warnings)
    return "";
  std::string s;
  if (errors)
    s += plural(errors, "error");
  if (warnings)
    s += (errors ? " and " : "") + plural(warnings, "warning");
  return s + " generated.";
}

} // namespace dfl
