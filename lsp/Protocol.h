// The Language Server Protocol 3.17 structures dflc speaks, as plain structs.
// Their JSON forms (to_json/from_json) are declared in ProtocolJson.h, which
// only Transport, LSPServer and Protocol.cpp include: DflServer and its users
// work on these structs and never see JSON.
// Positions are 0-based; `character` counts UTF-16 code units (LSP's default).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dfl::lsp {

// JSON-RPC and LSP error codes.
enum class ErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerNotInitialized = -32002,
  RequestCancelled = -32800,
};

struct Position {
  int line = 0, character = 0;
  friend bool operator==(const Position &, const Position &) = default;
};
struct Range {
  Position start, end;
  friend bool operator==(const Range &, const Range &) = default;
};
struct Location {
  std::string uri;
  Range range;
};

struct TextDocumentIdentifier {
  std::string uri;
};
struct VersionedTextDocumentIdentifier {
  std::string uri;
  int64_t version = 0;
};
struct TextDocumentItem {
  std::string uri, languageId;
  int64_t version = 0;
  std::string text;
};
struct TextDocumentContentChangeEvent {
  std::optional<Range> range;   // absent: the whole document
  std::string text;
};

/// The settings of `dflc lsp` an editor gives (docs/lsp.md, "Configuration"):
/// in `initializationOptions`, and in `settings.dfl` (or `settings`) of
/// workspace/didChangeConfiguration. An absent (or null) field keeps its value.
/// Both are read by one validator (from_json, Protocol.cpp): a field of the
/// wrong type, out of its range or naming no solver or objective is left
/// absent and explained in `errors`; the others apply.
struct ServerSettings {
  std::optional<std::string> solver, objective;        // the code action's; known names
  std::optional<bool> train;                           // check as `dflc check --train`
  std::optional<std::vector<std::string>> includePaths;   // -I dirs (replace the command line's)
  std::optional<int64_t> batch;                        // check as `dflc check --batch N`: 1 to 2^63 - 1
  std::optional<double> timeLimit;                     // seconds a request's solve may take: (0, 1e6]
  std::vector<std::string> errors = {};                // one per field left out
};
struct InitializeParams {
  std::optional<std::string> rootUri;
  ServerSettings initializationOptions;
};
struct DidOpenTextDocumentParams {
  TextDocumentItem textDocument;
};
struct DidChangeTextDocumentParams {
  VersionedTextDocumentIdentifier textDocument;
  std::vector<TextDocumentContentChangeEvent> contentChanges;
};
struct DidSaveTextDocumentParams {
  TextDocumentIdentifier textDocument;
};
struct DidCloseTextDocumentParams {
  TextDocumentIdentifier textDocument;
};
struct FileEvent {
  std::string uri;
  int type = 0;
};
struct DidChangeWatchedFilesParams {
  std::vector<FileEvent> changes;
};
struct TextDocumentPositionParams {
  TextDocumentIdentifier textDocument;
  Position position;
};
struct ReferenceParams {
  TextDocumentIdentifier textDocument;
  Position position;
  bool includeDeclaration = false;
};
struct DocumentParams {   // documentSymbol, formatting (options unused: the canonical form is fixed)
  TextDocumentIdentifier textDocument;
};
struct InlayHintParams {
  TextDocumentIdentifier textDocument;
  Range range;
};
struct CodeActionParams {
  TextDocumentIdentifier textDocument;
  Range range;
};
/// workspace/didChangeConfiguration: `settings.dfl` (or `settings`).
struct DidChangeConfigurationParams {
  ServerSettings settings;
};
struct NoParams {};

enum class DiagnosticSeverity { Error = 1, Warning = 2, Information = 3, Hint = 4 };
struct DiagnosticRelatedInformation {
  Location location;
  std::string message;
};
struct Diagnostic {
  Range range;
  DiagnosticSeverity severity = DiagnosticSeverity::Error;
  std::string code;   // E0412
  std::string source = "dflc";
  std::string message;
  std::vector<DiagnosticRelatedInformation> relatedInformation;
};
struct PublishDiagnosticsParams {
  std::string uri;
  std::optional<int64_t> version;
  std::vector<Diagnostic> diagnostics;
};

struct Hover {
  std::string markdown;
  std::optional<Range> range;
};

enum class SymbolKind { Module = 2, Namespace = 3, Class = 5, Field = 8, Function = 12, Variable = 13, Struct = 23 };
struct DocumentSymbol {
  std::string name, detail;
  SymbolKind kind = SymbolKind::Variable;
  Range range, selectionRange;
  std::vector<DocumentSymbol> children;
};

struct TextEdit {
  Range range;
  std::string newText;
  friend bool operator==(const TextEdit &, const TextEdit &) = default;
};

enum class CompletionItemKind { Function = 3, Field = 5, Variable = 6, Module = 9, Property = 10, Keyword = 14 };
struct CompletionItem {
  std::string label, detail;
  CompletionItemKind kind = CompletionItemKind::Keyword;
};
struct CompletionList {
  bool isIncomplete = false;
  std::vector<CompletionItem> items;
};

struct InlayHint {
  Position position;
  std::string label;
  bool paddingLeft = true;
};

/// A code action whose edit changes one document.
struct CodeAction {
  std::string title, kind;
  std::string uri;
  std::vector<TextEdit> edits;
  std::optional<std::string> disabledReason;   // shown instead of applying
  bool preferred = false;                      // a quick fix the editor may apply on its own ("fix all")
};

enum class MessageType { Error = 1, Warning = 2, Info = 3, Log = 4 };
/// window/showMessage and window/logMessage.
struct ShowMessageParams {
  MessageType type = MessageType::Info;
  std::string message;
};

/// What `initialize` advertises: exactly the methods LSPServer registers.
struct InitializeResult {
  std::string serverName, serverVersion;
};

} // namespace dfl::lsp
