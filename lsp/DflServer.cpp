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

namespace dfl::lsp {

// Destroyed in reverse: the code actions still solving are joined before the
// documents they read go away.
struct DflServer::Impl {
  explicit Impl(const Options &o)
      : documents(o.driver, o.background, o.publish), tasks(o.background) {}
  DocumentStore documents;
  FillIn fillIn;
  BackgroundTasks tasks;
};

DflServer::DflServer(Options options) : impl_(std::make_unique<Impl>(options)) {}
DflServer::~DflServer() = default;

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
  return text ? formatDocument(uri, *text) : std::nullopt;
}

CompletionList DflServer::complete(const std::string &uri, Position pos) {
  return lsp::complete(impl_->documents.current(uri).get(), pos);
}

std::vector<InlayHint> DflServer::inlayHints(const std::string &uri, Range range) {
  auto c = impl_->documents.current(uri);
  return c ? lsp::inlayHints(*c, range) : std::vector<InlayHint>{};
}

bool DflServer::configure(const ServerSettings &settings, std::string &error) {
  if (settings.solver)
    if (auto e = driver::solverNameError(*settings.solver))
      return error = *e, false;
  if (settings.objective)
    if (auto e = driver::objectiveNameError(*settings.objective))
      return error = *e, false;
  if (settings.batch && *settings.batch < 1)
    return error = "batch must be a positive integer, got " + std::to_string(*settings.batch), false;
  driver::DriverOptions o = impl_->documents.options();
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
  return true;
}

std::vector<CodeAction> DflServer::codeActions(const std::string &uri, Range range,
                                               const std::shared_ptr<std::atomic<bool>> &cancelled) {
  auto c = impl_->documents.current(uri);
  if (!c)
    return {};
  driver::DriverOptions o = impl_->documents.options();
  return impl_->fillIn.actions(quickFixes(*c, uri, range), c, uri, range, cancelled, o.solver, o.objective);
}

void DflServer::codeActionsAsync(const std::string &uri, Range range, std::shared_ptr<std::atomic<bool>> cancelled,
                                 std::function<void(const std::vector<CodeAction> &)> done) {
  impl_->tasks.start([this, uri, range, cancelled, done] {
    std::vector<CodeAction> actions;
    try {
      actions = codeActions(uri, range, cancelled);
    } catch (const std::exception &) {
      // An internal error in the solver: no action rather than a dead server.
    }
    if (!cancelled || !*cancelled)
      done(actions);
  });
}

} // namespace dfl::lsp
