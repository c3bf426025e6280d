#include "lsp/LSPServer.h"

#include "lsp/DflServer.h"
#include "lsp/Transport.h"

namespace dfl::lsp {
namespace {

class LSPServer {
public:
  LSPServer(Transport &transport, const LspOptions &options)
      : transport_(transport), version_(options.version),
        server_({options.driver, !options.litTest,
                 [this](const PublishDiagnosticsParams &p) { transport_.notify("textDocument/publishDiagnostics", p); },
                 options.requestTimeLimitSeconds,
                 [this](const std::string &what) { transport_.reportInternalError(what); }}) {
    // `shutdown` answers once the diagnostics are published and the code
    // actions answered (each solve is bounded by the request time limit).
    transport_.onShutdown([this, limit = options.requestTimeLimitSeconds] {
      server_.finish(std::chrono::milliseconds(static_cast<int64_t>(limit * 1000) + 5000));
    });
    transport_.method("initialize", this, &LSPServer::onInitialize);
    transport_.notification("textDocument/didOpen", this, &LSPServer::onDidOpen);
    transport_.notification("textDocument/didChange", this, &LSPServer::onDidChange);
    transport_.notification("textDocument/didSave", this, &LSPServer::onDidSave);
    transport_.notification("textDocument/didClose", this, &LSPServer::onDidClose);
    transport_.notification("workspace/didChangeWatchedFiles", this, &LSPServer::onDidChangeWatchedFiles);
    transport_.method("textDocument/hover", this, &LSPServer::onHover);
    transport_.method("textDocument/definition", this, &LSPServer::onDefinition);
    transport_.method("textDocument/references", this, &LSPServer::onReferences);
    transport_.method("textDocument/documentSymbol", this, &LSPServer::onDocumentSymbol);
    transport_.method("textDocument/formatting", this, &LSPServer::onFormatting);
    transport_.method("textDocument/completion", this, &LSPServer::onCompletion);
    transport_.method("textDocument/inlayHint", this, &LSPServer::onInlayHint);
    transport_.asyncMethod("textDocument/codeAction", this, &LSPServer::onCodeAction);
    transport_.notification("workspace/didChangeConfiguration", this, &LSPServer::onDidChangeConfiguration);
  }
  // `exit` (or the end of the input): nothing more is published, and a solve
  // still running is stopped and left to end on its own, never waited for.
  ~LSPServer() { server_.abandon(); }

private:
  InitializeResult onInitialize(const InitializeParams &p) {
    configure(p.initializationOptions);
    return {"dflc", version_};
  }
  void onDidOpen(const DidOpenTextDocumentParams &p) {
    server_.addDocument(p.textDocument.uri, p.textDocument.text, p.textDocument.version);
  }
  void onDidChange(const DidChangeTextDocumentParams &p) {
    server_.updateDocument(p.textDocument.uri, p.contentChanges, p.textDocument.version);
  }
  void onDidSave(const DidSaveTextDocumentParams &p) { server_.fileChanged(p.textDocument.uri); }
  void onDidClose(const DidCloseTextDocumentParams &p) { server_.removeDocument(p.textDocument.uri); }
  void onDidChangeWatchedFiles(const DidChangeWatchedFilesParams &p) {
    for (const FileEvent &e : p.changes)
      server_.fileChanged(e.uri);
  }
  std::optional<Hover> onHover(const TextDocumentPositionParams &p) {
    return server_.findHover(p.textDocument.uri, p.position);
  }
  std::vector<Location> onDefinition(const TextDocumentPositionParams &p) {
    return server_.findDefinition(p.textDocument.uri, p.position);
  }
  std::vector<Location> onReferences(const ReferenceParams &p) {
    return server_.findReferences(p.textDocument.uri, p.position, p.includeDeclaration);
  }
  std::vector<DocumentSymbol> onDocumentSymbol(const DocumentParams &p) {
    return server_.findDocumentSymbols(p.textDocument.uri);
  }
  std::optional<std::vector<TextEdit>> onFormatting(const DocumentParams &p) {
    return server_.format(p.textDocument.uri);
  }
  CompletionList onCompletion(const TextDocumentPositionParams &p) {
    return server_.complete(p.textDocument.uri, p.position);
  }
  std::vector<InlayHint> onInlayHint(const InlayHintParams &p) {
    return server_.inlayHints(p.textDocument.uri, p.range);
  }
  // The solver runs off this loop; $/cancelRequest stops it (Transport).
  // An internal error is InternalError (-32603), reported, never a cancellation.
  void onCodeAction(const CodeActionParams &p, Reply<std::vector<CodeAction>> reply) {
    server_.codeActionsAsync(p.textDocument.uri, p.range, reply.cancelled(), reply,
                             [reply](const std::string &what) { reply.fail(what); });
  }
  void onDidChangeConfiguration(const DidChangeConfigurationParams &p) { configure(p.settings); }
  /// `initialize` and didChangeConfiguration alike: each wrong field (left out
  /// by the settings reader) is reported and ignored, the rest applies.
  void configure(const ServerSettings &settings) {
    for (const std::string &error : settings.errors) {
      transport_.log("settings: " + error);
      transport_.notify("window/showMessage", ShowMessageParams{MessageType::Error, "dflc: " + error});
      transport_.notify("window/logMessage", ShowMessageParams{MessageType::Error, "dflc: " + error});
    }
    server_.configure(settings);
  }

  Transport &transport_;
  std::string version_;
  DflServer server_;
};

} // namespace

int runLanguageServer(std::istream &in, std::ostream &out, const LspOptions &options) {
  try {
    Transport transport(in, out, {options.litTest, options.log});
    LSPServer server(transport, options);
    return transport.run();
  } catch (const std::exception &e) {
    if (options.log)
      *options.log << "dflc lsp: internal error: " << e.what() << std::endl;
    return 3;
  }
}

} // namespace dfl::lsp
