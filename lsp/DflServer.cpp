#include "lsp/DflServer.h"

#include "lsp/BackgroundTasks.h"
#include "lsp/Compilation.h"
#include "lsp/Completion.h"
#include "lsp/Diagnostics.h"
#include "lsp/DocumentStore.h"
#include "lsp/FillIn.h"
#include "lsp/Formatting.h"
#include "lsp/Hover.h"
#include "lsp/InlayHints.h"
#include "lsp/SymbolIndex.h"
#include "support/Check.h"

#include <mutex>

namespace dfl::lsp {

// Owned by the server and by every code action's thread: a thread abandoned at
// exit keeps what it reads alive. After abandon() the gate is closed: nothing
// reaches the client (whose transport is gone) from a thread left running.
struct DflServer::Impl {
  struct Gate {
    std::mutex mutex;
    bool open = true;
  };
  /// A request's solve has the server's limit, not the CLI's default
  /// (driver::kDefaultTimeLimitSeconds), until the editor's timeLimit setting replaces it.
  static Options withRequestTimeLimit(Options o) {
    o.driver.timeLimitSeconds = o.requestTimeLimitSeconds;
    return o;
  }
  explicit Impl(const Options &o)
      : gate(std::make_shared<Gate>()),
        documents(o.driver, o.background,
                  [gate = gate, publish = o.publish](const PublishDiagnosticsParams &p) {
                    std::lock_guard<std::mutex> lock(gate->mutex);
                    if (gate->open && publish)
                      publish(p);
                  },
                  [gate = gate, report = o.internalError](const std::string &what) {
                    std::lock_guard<std::mutex> lock(gate->mutex);
                    if (gate->open && report)
                      report(what);
                  }),
        fillIn(o.makeSolver), tasks(o.background) {}
  ~Impl() { tasks.joinAll(); }   // (none left once abandoned) before the documents they read
  std::vector<CodeAction> codeActions(const std::string &uri, Range range,
                                      const std::shared_ptr<std::atomic<bool>> &cancelled);

  std::shared_ptr<Gate> gate;
  DocumentStore documents;
  FillIn fillIn;
  BackgroundTasks tasks;
};

DflServer::DflServer(Options options)
    : impl_(std::make_shared<Impl>(Impl::withRequestTimeLimit(std::move(options)))) {}
// A task still holding impl_ must not drop the last reference: its thread would join itself.
DflServer::~DflServer() { impl_->tasks.joinAll(); }

void DflServer::addDocument(const std::string &uri, const std::string &text, int64_t version) {
  impl_->documents.add(uri, text, version);
}

void DflServer::updateDocument(const std::string &uri, const std::vector<TextDocumentContentChangeEvent> &changes,
                               int64_t version) {
  impl_->documents.update(uri, changes, version);
}

void DflServer::removeDocument(const std::string &uri) { impl_->documents.remove(uri); }

void DflServer::fileChanged(const std::string &uri) { impl_->documents.changed(uriToPath(uri)); }

void DflServer::waitIdle() {
  impl_->tasks.joinAll();
  impl_->documents.waitIdle();
}

void DflServer::finish(std::chrono::milliseconds timeout) {
  impl_->documents.waitIdle();
  impl_->tasks.waitFinished(timeout);
}

void DflServer::abandon() {
  {
    std::lock_guard<std::mutex> lock(impl_->gate->mutex);
    impl_->gate->open = false;
  }
  impl_->fillIn.stopAll();
  impl_->documents.stop();
  impl_->tasks.abandon();
}

int64_t DflServer::solvesStarted() const { return impl_->fillIn.solvesStarted(); }

std::optional<Hover> DflServer::findHover(const std::string &uri, Position pos) {
  auto c = impl_->documents.current(uri);
  return c ? lsp::findHover(*c, pos) : std::nullopt;
}

std::vector<Location> DflServer::findDefinition(const std::string &uri, Position pos) {
  auto c = impl_->documents.current(uri);
  if (!c)
    return {};
  return findOccurrences(*c, pos, impl_->documents.allLatest(), [](const Occurrence &x) { return x.isDefinition; });
}

std::vector<Location> DflServer::findReferences(const std::string &uri, Position pos, bool includeDeclaration) {
  auto c = impl_->documents.current(uri);
  if (!c)
    return {};
  return findOccurrences(*c, pos, impl_->documents.allLatest(),
                         [&](const Occurrence &x) { return includeDeclaration || !x.isDefinition; });
}

std::vector<DocumentSymbol> DflServer::findDocumentSymbols(const std::string &uri) {
  auto c = impl_->documents.current(uri);
  return c ? documentSymbols(*c) : std::vector<DocumentSymbol>{};
}

std::optional<std::vector<TextEdit>> DflServer::format(const std::string &uri) {
  auto text = impl_->documents.text(uri);
  if (!text || text->size() > DocumentStore::kMaxDocumentBytes)
    return std::nullopt;   // not parsed above the limit: no edit
  return formatDocument(uri, *text);
}

CompletionList DflServer::complete(const std::string &uri, Position pos) {
  return lsp::complete(impl_->documents.current(uri).get(), pos);
}

std::vector<InlayHint> DflServer::inlayHints(const std::string &uri, Range range) {
  auto c = impl_->documents.current(uri);
  return c ? lsp::inlayHints(*c, range) : std::vector<InlayHint>{};
}

void DflServer::configure(const ServerSettings &settings) {
  // The settings reader (from_json, Protocol.cpp) left out every wrong field.
  DFLC_CHECK(!settings.solver || !driver::solverNameError(*settings.solver)) << "an unvalidated solver";
  DFLC_CHECK(!settings.objective || !driver::objectiveNameError(*settings.objective)) << "an unvalidated objective";
  DFLC_CHECK(!settings.batch || *settings.batch >= 1) << "an unvalidated batch";
  driver::DriverOptions o = impl_->documents.options();
  if (settings.timeLimit)
    o.timeLimitSeconds = settings.timeLimit;
  o.solver = settings.solver.value_or(o.solver);
  o.objective = settings.objective.value_or(o.objective);
  bool recheck = false;
  if (settings.train && *settings.train != o.train)
    o.train = *settings.train, recheck = true;
  if (settings.includePaths && *settings.includePaths != o.includes)
    o.includes = *settings.includePaths, recheck = true;
  if (settings.batch && settings.batch != o.batch)
    o.batch = settings.batch, recheck = true;
  // Training, the batch and the include roots change what a check reports: every open
  // document is checked again. The solver and objective only change the code action.
  impl_->documents.setOptions(std::move(o), recheck);
}

std::vector<CodeAction> DflServer::Impl::codeActions(const std::string &uri, Range range,
                                                     const std::shared_ptr<std::atomic<bool>> &cancelled) {
  auto c = documents.current(uri);
  if (!c)
    return {};
  driver::DriverOptions o = documents.options();
  // The editor's timeLimit setting, else the server's default (withRequestTimeLimit).
  DFLC_CHECK(o.timeLimitSeconds) << "a language-server solve without a time limit";
  return fillIn.actions(quickFixes(*c, uri, range), c, uri, range, cancelled, o.solver, o.objective,
                        *o.timeLimitSeconds);
}

std::vector<CodeAction> DflServer::codeActions(const std::string &uri, Range range,
                                               const std::shared_ptr<std::atomic<bool>> &cancelled) {
  return impl_->codeActions(uri, range, cancelled);
}

void DflServer::codeActionsAsync(const std::string &uri, Range range, std::shared_ptr<std::atomic<bool>> cancelled,
                                 std::function<void(const std::vector<CodeAction> &)> done,
                                 std::function<void(const std::string &)> failed) {
  impl_->tasks.start([impl = impl_, uri, range, cancelled, done, failed] {
    std::vector<CodeAction> actions;
    std::optional<std::string> error;
    try {
      actions = impl->codeActions(uri, range, cancelled);
    } catch (const std::exception &e) {
      error = std::string("textDocument/codeAction: ") + e.what();
    } catch (...) {
      error = "textDocument/codeAction: an exception that is not a std::exception";
    }
    std::lock_guard<std::mutex> lock(impl->gate->mutex);
    if (!impl->gate->open)
      return;
    // Our bug is reported even if the request was cancelled meanwhile: it is not a cancellation.
    if (error)
      failed(*error);
    else if (!cancelled || !*cancelled)
      done(actions);
  });
}

} // namespace dfl::lsp
