// The language logic of `dflc lsp`, apart from the protocol (MLIR's MLIRServer
// split): open documents, their diagnostics, hover, navigation, outline,
// formatting, completion, inlay hints and code actions. No JSON here:
// LSPServer converts. This class coordinates; each feature is a file pair of
// its own (DocumentStore, Compilation, Positions, Diagnostics, SymbolIndex,
// Hover, Completion, InlayHints, Formatting, FillIn, BackgroundTasks).
//
// A document is checked exactly as `dflc check` checks a file — the same
// loader (open documents are read from memory, taking precedence over the
// disk), the same front end and the same checkSchedules — and its diagnostics
// go to the `publish` callback. With `background` (the default) checks run on
// a worker thread: edits return at once, a burst of edits coalesces into one
// check of the latest text, and a result is published only if its document has
// not changed since. Editing a file re-checks every open document importing it.
#pragma once

#include "lsp/Positions.h"   // uriToPath, pathToUri
#include "lsp/Protocol.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dfl::lsp {

class DflServer {
public:
  struct Options {
    std::vector<std::string> includes;   // -I dirs (the stdlib root is always searched last)
    bool background = true;
    std::function<void(const PublishDiagnosticsParams &)> publish;
  };
  explicit DflServer(Options options);
  ~DflServer();

  void addDocument(const std::string &uri, const std::string &text, int64_t version);
  void updateDocument(const std::string &uri, const std::vector<TextDocumentContentChangeEvent> &changes,
                      int64_t version);
  void removeDocument(const std::string &uri);
  /// A file changed on disk (saved, or changed outside the editor): re-check what depends on it.
  void fileChanged(const std::string &uri);

  std::optional<Hover> findHover(const std::string &uri, Position pos);
  std::vector<Location> findDefinition(const std::string &uri, Position pos);
  std::vector<Location> findReferences(const std::string &uri, Position pos, bool includeDeclaration);
  std::vector<DocumentSymbol> findDocumentSymbols(const std::string &uri);
  /// The edits that make the document canonical (`dflc fmt`); nullopt if it does not parse.
  std::optional<std::vector<TextEdit>> format(const std::string &uri);
  CompletionList complete(const std::string &uri, Position pos);
  std::vector<InlayHint> inlayHints(const std::string &uri, Range range);
  /// The quick fixes of the diagnostics on the lines of `range`, and "Fill in
  /// missing directives" for each valid, incomplete schedule of the document
  /// overlapping `range`: the level blocks, layer blocks and segments of the
  /// solver's complete schedule that were not written are inserted among those
  /// that were (which stay as written, comments too; see FillIn.h).
  /// `cancelled` (may be null) stops the solver between layers: the result is then empty.
  std::vector<CodeAction> codeActions(const std::string &uri, Range range,
                                      const std::shared_ptr<std::atomic<bool>> &cancelled = nullptr);
  /// codeActions off the caller's thread (with `background`; else inline); `done`
  /// gets the actions unless the request was cancelled first.
  void codeActionsAsync(const std::string &uri, Range range, std::shared_ptr<std::atomic<bool>> cancelled,
                        std::function<void(const std::vector<CodeAction> &)> done);
  /// The solver and objective the code action uses; false (nothing changed)
  /// with `error` set if a name is unknown.
  bool configure(const std::optional<std::string> &solver, const std::optional<std::string> &objective,
                 std::string &error);

  /// Blocks until every scheduled check has been published and every async
  /// code action answered (tests, shutdown).
  void waitIdle();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace dfl::lsp
