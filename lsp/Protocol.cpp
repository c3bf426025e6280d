#include "lsp/ProtocolJson.h"

#include "driver/DriverOptions.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace dfl::lsp {

// Missing required fields throw (json::at), which the transport turns into InvalidParams.
void from_json(const json &j, Position &v) {
  j.at("line").get_to(v.line);
  j.at("character").get_to(v.character);
}
void from_json(const json &j, Range &v) {
  j.at("start").get_to(v.start);
  j.at("end").get_to(v.end);
}
void from_json(const json &j, TextDocumentIdentifier &v) { j.at("uri").get_to(v.uri); }
void from_json(const json &j, VersionedTextDocumentIdentifier &v) {
  j.at("uri").get_to(v.uri);
  if (j.contains("version") && j["version"].is_number_integer())
    j["version"].get_to(v.version);
}
void from_json(const json &j, TextDocumentItem &v) {
  j.at("uri").get_to(v.uri);
  v.languageId = j.value("languageId", "");
  v.version = j.value("version", int64_t{0});
  j.at("text").get_to(v.text);
}
void from_json(const json &j, TextDocumentContentChangeEvent &v) {
  if (j.contains("range"))
    v.range = j["range"].get<Range>();
  j.at("text").get_to(v.text);
}
namespace {

/// A setting's value as the messages quote it: its JSON, cut short.
std::string quoted(const json &j) {
  constexpr size_t kShown = 60;
  std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > kShown ? text.substr(0, kShown) + "..." : text;
}

/// One field of the settings: `read` gives its value or an error saying what it must be.
template <class T, class Read>
void readSetting(const json &j, const char *name, std::optional<T> &field, std::vector<std::string> &errors,
                 Read read) {
  if (!j.contains(name) || j[name].is_null())
    return;   // absent: keeps its value
  std::string must;
  if (std::optional<T> value = read(j[name], must))
    field = std::move(value);
  else   // `must` says what it must be, or (a name) what is wrong with it
    errors.push_back("setting '" + std::string(name) + "': " + must +
                     (must.rfind("must", 0) == 0 ? ", got " + quoted(j[name]) : "") + "; ignored");
}

/// A solver's or objective's name (`what`); a long one is not echoed whole.
std::optional<std::string> nameOf(const json &j, std::string &must, const char *what,
                                  std::optional<std::string> (*nameError)(const std::string &)) {
  if (!j.is_string() || j.get_ref<const std::string &>().size() > 64)
    return must = std::string("must be ") + what, std::nullopt;
  if (auto e = nameError(j.get<std::string>()))
    return must = *e, std::nullopt;
  return j.get<std::string>();
}

} // namespace

// The one validator of the editor's settings, for initializationOptions and
// didChangeConfiguration alike: never throws; a wrong field is left absent
// and explained in `errors` (docs/lsp.md, "Configuration").
void from_json(const json &j, ServerSettings &v) {
  if (!j.is_object())
    return;   // null, or settings of another shape: nothing for dflc
  auto &errors = v.errors;
  readSetting(j, "solver", v.solver, errors,
              [](const json &x, std::string &must) { return nameOf(x, must, "a solver's name", driver::solverNameError); });
  readSetting(j, "objective", v.objective, errors,
              [](const json &x, std::string &must) { return nameOf(x, must, "an objective's name", driver::objectiveNameError); });
  readSetting(j, "train", v.train, errors, [](const json &x, std::string &must) -> std::optional<bool> {
    if (!x.is_boolean())
      return must = "must be true or false", std::nullopt;
    return x.get<bool>();
  });
  // An integer from 1 to 2^63 - 1, as `--batch` (driver::parseBatch): not 1.5, not 2^63.
  readSetting(j, "batch", v.batch, errors, [](const json &x, std::string &must) -> std::optional<int64_t> {
    must = "must be an integer from 1 to 2^63 - 1";
    if (x.is_number_unsigned())
      return x.get<uint64_t>() >= 1 && x.get<uint64_t>() <= uint64_t(INT64_MAX) ? std::optional(x.get<int64_t>())
                                                                                : std::nullopt;
    if (x.is_number_integer() && x.get<int64_t>() >= 1)
      return x.get<int64_t>();
    return std::nullopt;
  });
  readSetting(j, "includePaths", v.includePaths, errors,
              [](const json &x, std::string &must) -> std::optional<std::vector<std::string>> {
                must = "must be an array of directory names (strings)";
                if (!x.is_array())
                  return std::nullopt;
                std::vector<std::string> dirs;
                for (const json &d : x) {
                  if (!d.is_string() || d.get<std::string>().find('\0') != std::string::npos)
                    return std::nullopt;
                  dirs.push_back(d.get<std::string>());
                }
                return dirs;
              });
  readSetting(j, "timeLimit", v.timeLimit, errors, [](const json &x, std::string &must) -> std::optional<double> {
    must = "must be a number of seconds above 0 and at most 1e6";
    if (!x.is_number() || !(x.get<double>() > 0 && x.get<double>() <= 1e6))
      return std::nullopt;
    return x.get<double>();
  });
}
void from_json(const json &j, InitializeParams &v) {
  if (!j.is_object())
    throw json::type_error::create(302, "initialize params must be an object", &j);
  if (j.contains("rootUri") && j["rootUri"].is_string())
    v.rootUri = j["rootUri"].get<std::string>();
  if (j.contains("initializationOptions"))
    j["initializationOptions"].get_to(v.initializationOptions);
}
void from_json(const json &j, DidOpenTextDocumentParams &v) { j.at("textDocument").get_to(v.textDocument); }
void from_json(const json &j, DidChangeTextDocumentParams &v) {
  j.at("textDocument").get_to(v.textDocument);
  j.at("contentChanges").get_to(v.contentChanges);
}
void from_json(const json &j, DidSaveTextDocumentParams &v) { j.at("textDocument").get_to(v.textDocument); }
void from_json(const json &j, DidCloseTextDocumentParams &v) { j.at("textDocument").get_to(v.textDocument); }
void from_json(const json &j, FileEvent &v) {
  j.at("uri").get_to(v.uri);
  j.at("type").get_to(v.type);
}
void from_json(const json &j, DidChangeWatchedFilesParams &v) { j.at("changes").get_to(v.changes); }
void from_json(const json &j, TextDocumentPositionParams &v) {
  j.at("textDocument").get_to(v.textDocument);
  j.at("position").get_to(v.position);
}
void from_json(const json &j, ReferenceParams &v) {
  j.at("textDocument").get_to(v.textDocument);
  j.at("position").get_to(v.position);
  if (j.contains("context"))
    v.includeDeclaration = j["context"].value("includeDeclaration", false);
}
void from_json(const json &j, DocumentParams &v) { j.at("textDocument").get_to(v.textDocument); }
void from_json(const json &j, InlayHintParams &v) {
  j.at("textDocument").get_to(v.textDocument);
  j.at("range").get_to(v.range);
}
void from_json(const json &j, CodeActionParams &v) {
  j.at("textDocument").get_to(v.textDocument);
  j.at("range").get_to(v.range);
}
void from_json(const json &j, DidChangeConfigurationParams &v) {
  const json &settings = j.at("settings");
  const json &dfl = settings.is_object() && settings.contains("dfl") ? settings["dfl"] : settings;
  dfl.get_to(v.settings);
}
void from_json(const json &, NoParams &) {}

void to_json(json &j, const Position &v) { j = {{"line", v.line}, {"character", v.character}}; }
void to_json(json &j, const Range &v) { j = {{"start", v.start}, {"end", v.end}}; }
void to_json(json &j, const Location &v) { j = {{"uri", v.uri}, {"range", v.range}}; }
void to_json(json &j, const Diagnostic &v) {
  j = {{"range", v.range}, {"severity", static_cast<int>(v.severity)}, {"source", v.source}, {"message", v.message}};
  if (!v.code.empty())
    j["code"] = v.code;
  if (!v.relatedInformation.empty()) {
    json rel = json::array();
    for (const DiagnosticRelatedInformation &r : v.relatedInformation)
      rel.push_back({{"location", r.location}, {"message", r.message}});
    j["relatedInformation"] = rel;
  }
}
void to_json(json &j, const PublishDiagnosticsParams &v) {
  j = {{"uri", v.uri}, {"diagnostics", v.diagnostics}};
  if (v.version)
    j["version"] = *v.version;
}
void to_json(json &j, const Hover &v) {
  j = {{"contents", {{"kind", "markdown"}, {"value", v.markdown}}}};
  if (v.range)
    j["range"] = *v.range;
}
void to_json(json &j, const DocumentSymbol &v) {
  j = {{"name", v.name}, {"kind", static_cast<int>(v.kind)}, {"range", v.range}, {"selectionRange", v.selectionRange}};
  if (!v.detail.empty())
    j["detail"] = v.detail;
  if (!v.children.empty())
    j["children"] = v.children;
}
void to_json(json &j, const TextEdit &v) { j = {{"range", v.range}, {"newText", v.newText}}; }
void to_json(json &j, const CompletionItem &v) {
  j = {{"label", v.label}, {"kind", static_cast<int>(v.kind)}};
  if (!v.detail.empty())
    j["detail"] = v.detail;
}
void to_json(json &j, const CompletionList &v) { j = {{"isIncomplete", v.isIncomplete}, {"items", v.items}}; }
void to_json(json &j, const InlayHint &v) {
  j = {{"position", v.position}, {"label", v.label}, {"paddingLeft", v.paddingLeft}};
}
void to_json(json &j, const CodeAction &v) {
  j = {{"title", v.title}, {"kind", v.kind}};
  if (v.disabledReason)
    j["disabled"] = {{"reason", *v.disabledReason}};
  else
    j["edit"] = {{"changes", {{v.uri, v.edits}}}};
  if (v.preferred)
    j["isPreferred"] = true;
}
void to_json(json &j, const ShowMessageParams &v) {
  j = {{"type", static_cast<int>(v.type)}, {"message", v.message}};
}
void to_json(json &j, const InitializeResult &v) {
  // Exactly the methods LSPServer registers; keep the two in step.
  j = {{"serverInfo", {{"name", v.serverName}, {"version", v.serverVersion}}},
       {"capabilities",
        {{"positionEncoding", "utf-16"},
         {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
         {"hoverProvider", true},
         {"definitionProvider", true},
         {"referencesProvider", true},
         {"documentSymbolProvider", true},
         {"documentFormattingProvider", true},
         {"completionProvider", {{"triggerCharacters", json::array()}}},
         {"inlayHintProvider", true},
         {"codeActionProvider", {{"codeActionKinds", {"quickfix", "refactor.rewrite"}}}}}}};
}

} // namespace dfl::lsp
