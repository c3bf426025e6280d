// The language logic of `dflc lsp`, apart from the protocol (MLIR's MLIRServer
// split): open documents, their diagnostics, hover, navigation, outline,
// formatting, completion, inlay hints and code actions. No JSON here:
// LSPServer converts. This class coordinates; each feature is a file pair of
// its own (DocumentStore, Compilation, Positions, Diagnostics, SymbolIndex,
// Hover, Completion, InlayHints, Formatting, FillIn, BackgroundTasks).
//
// A document is checked exactly as `dflc check` checks a file — by the same
// driver (driver/Compilation.h) with the same options (open documents are
// read from memory, taking precedence over the disk) — and its diagnostics
// go to the `publish` callback. With `background` (the default) checks run on
// a worker thread: edits return at once, a burst of edits coalesces into one
// check of the latest text, and a result is published only if its document has
// not changed since. Editing a file re-checks every open document importing it.
#pragma once

#include "driver/DriverOptions.h"
#include "lsp/FillIn.h"      // SolverFactory
#include "lsp/Positions.h"   // uriToPath, pathToUri
#include "lsp/Protocol.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dfl::lsp {

/// Seconds a solve started by a request may take by default (docs/lsp.md, "Limits").
inline constexpr double kDefaultRequestTimeLimitSeconds = 10;

class DflServer {
public:
  struct Options {
    /// includes, train, errorLimit, solver and objective are used; files and
    /// openBuffers are the server's; E0820 is off (an editor opens network files).
    driver::DriverOptions driver;
    bool background = true;
    std::function<void(const PublishDiagnosticsParams &)> publish;
    /// The time limit of a solve a request starts (the code action): the best
    /// schedule found by then (docs/lsp.md, "Limits").
    double requestTimeLimitSeconds = kDefaultRequestTimeLimitSeconds;
    /// Our bug in a check (off any request): said to the user (LSPServer:
    /// window/showMessage and the log) besides the diagnostic saying so.
    std::function<void(const std::string &)> internalError = nullptr;
    /// The code action's solver by name (null: scheduler/kapla/Solver.h's makeSolver; tests: one that fails).
    SolverFactory makeSolver = nullptr;
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
  /// gets the actions unless the request was cancelled first; `failed` gets an
  /// internal error (an exception: our bug, never reported as a cancellation).
  void codeActionsAsync(const std::string &uri, Range range, std::shared_ptr<std::atomic<bool>> cancelled,
                        std::function<void(const std::vector<CodeAction> &)> done,
                        std::function<void(const std::string &)> failed);
  /// Applies the editor's settings, validated (from_json leaves out a wrong
  /// field): the solver, objective and time limit the code action uses,
  /// training, the batch and the include roots (these re-check every open document).
  void configure(const ServerSettings &settings);

  /// Blocks until every scheduled check has been published and every async
  /// code action answered (tests).
  void waitIdle();
  /// `shutdown`: waitIdle, but for the code actions at most `timeout`.
  void finish(std::chrono::milliseconds timeout);
  /// `exit`: nothing more is published or answered; solves still running are
  /// told to stop and left to end on their own (never waited for).
  void abandon();
  /// Solves the code actions started (tests: identical requests coalesce).
  int64_t solvesStarted() const;

private:
  struct Impl;
  // Shared with the code actions' threads, which abandon() leaves running.
  std::shared_ptr<Impl> impl_;
};

} // namespace dfl::lsp
