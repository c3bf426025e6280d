// The JSON forms of the LSP structs (Protocol.h), defined in Protocol.cpp.
// Private to lsp/: included by Transport.h (hence LSPServer) and Protocol.cpp.
#pragma once

#include "lsp/Protocol.h"

#include <nlohmann/json_fwd.hpp>

namespace dfl::lsp {

using json = nlohmann::json;

void from_json(const json &j, Position &v);
void from_json(const json &j, Range &v);
void from_json(const json &j, TextDocumentIdentifier &v);
void from_json(const json &j, VersionedTextDocumentIdentifier &v);
void from_json(const json &j, TextDocumentItem &v);
void from_json(const json &j, TextDocumentContentChangeEvent &v);
void from_json(const json &j, InitializeParams &v);
void from_json(const json &j, DidOpenTextDocumentParams &v);
void from_json(const json &j, DidChangeTextDocumentParams &v);
void from_json(const json &j, DidSaveTextDocumentParams &v);
void from_json(const json &j, DidCloseTextDocumentParams &v);
void from_json(const json &j, FileEvent &v);
void from_json(const json &j, DidChangeWatchedFilesParams &v);
void from_json(const json &j, TextDocumentPositionParams &v);
void from_json(const json &j, ReferenceParams &v);
void from_json(const json &j, DocumentParams &v);
void from_json(const json &j, InlayHintParams &v);
void from_json(const json &j, CodeActionParams &v);
void from_json(const json &j, ServerSettings &v);
void from_json(const json &j, DidChangeConfigurationParams &v);
void from_json(const json &j, NoParams &v);

void to_json(json &j, const Position &v);
void to_json(json &j, const Range &v);
void to_json(json &j, const Location &v);
void to_json(json &j, const Diagnostic &v);
void to_json(json &j, const PublishDiagnosticsParams &v);
void to_json(json &j, const Hover &v);
void to_json(json &j, const DocumentSymbol &v);
void to_json(json &j, const TextEdit &v);
void to_json(json &j, const CompletionItem &v);
void to_json(json &j, const CompletionList &v);
void to_json(json &j, const InlayHint &v);
void to_json(json &j, const CodeAction &v);
void to_json(json &j, const ShowMessageParams &v);
void to_json(json &j, const InitializeResult &v);

} // namespace dfl::lsp
