#include "lsp/DocumentStore.h"

#include "lsp/Compilation.h"
#include "lsp/Diagnostics.h"
#include "lsp/Positions.h"

#include <algorithm>

namespace dfl::lsp {

DocumentStore::DocumentStore(driver::DriverOptions options, bool background,
                             std::function<void(const PublishDiagnosticsParams &)> publish,
                             std::function<void(const std::string &)> internalError)
    : options_(std::move(options)), background_(background), publish_(std::move(publish)),
      internalError_(std::move(internalError)) {
  if (background_)
    worker_ = std::thread([this] { run(); });
}

DocumentStore::~DocumentStore() {
  stop();
  if (worker_.joinable())
    worker_.join();
}

void DocumentStore::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    pending_.clear();
  }
  wake_.notify_all();
  idle_.notify_all();
}

namespace {

/// The one diagnostic of a document above kMaxDocumentBytes.
Diagnostic tooLarge(size_t bytes) {
  Diagnostic d;
  d.severity = DiagnosticSeverity::Warning;
  d.message = "this document is " + std::to_string(bytes) + " bytes, above the language server's limit of " +
              std::to_string(DocumentStore::kMaxDocumentBytes) +
              ": it is not checked, and hover, symbols, formatting and code actions are off "
              "(`dflc check` checks it)";
  return d;
}

const std::vector<dfl::Diagnostic> &diagnosticsOf(const Compilation *c) {
  static const std::vector<dfl::Diagnostic> none;
  return c ? c->diags.diagnostics() : none;
}

} // namespace

std::map<std::string, std::string> DocumentStore::openBuffers() const {
  std::map<std::string, std::string> open;
  for (const auto &[uri, d] : docs_)
    open[canonicalPath(d.path)] = d.text;
  return open;
}

/// Queues `uri` (if open) and every open document that read `path`. Caller holds the lock.
void DocumentStore::scheduleDependents(const std::string &path) {
  std::string key = canonicalPath(path);
  for (auto &[uri, d] : docs_)
    if (canonicalPath(d.path) == key || (d.last && d.last->deps.count(key)))
      pending_.insert(uri);
}

void DocumentStore::changed(const std::string &path) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    scheduleDependents(path);
  }
  if (background_)
    wake_.notify_all();
  else
    drain();
}

/// Checks one pending document; false if none was pending.
bool DocumentStore::checkOne(std::unique_lock<std::mutex> &lock) {
  if (pending_.empty())
    return false;
  std::string uri = *pending_.begin();
  pending_.erase(pending_.begin());
  auto it = docs_.find(uri);
  if (it == docs_.end())
    return true;
  std::string path = it->second.path, text = it->second.text;
  uint64_t generation = it->second.generation;
  int64_t version = it->second.version;
  auto open = openBuffers();
  driver::DriverOptions options = options_;
  busy_ = true;
  lock.unlock();
  std::shared_ptr<Compilation> c;
  PublishDiagnosticsParams params{uri, version, {}};
  std::optional<std::string> internal;
  try {
    if (text.size() > kMaxDocumentBytes)
      params.diagnostics = {tooLarge(text.size())};
    else
      c = compile(path, text, open, options, generation);
    for (const dfl::Diagnostic &d : diagnosticsOf(c.get()))
      params.diagnostics.push_back(toLspDiagnostic(*c, d));
  } catch (const std::exception &e) {
    internal = e.what();
  } catch (...) {
    internal = "an exception that is not a std::exception";
  }
  if (internal) {
    Diagnostic d;
    d.message = "internal compiler error: " + *internal;
    params.diagnostics = {d};
    if (internalError_)
      internalError_("checking " + path + ": " + *internal);
  }
  lock.lock();
  it = docs_.find(uri);
  // A document edited (or closed) meanwhile is already queued again: drop this stale result.
  if (it != docs_.end() && it->second.generation == generation) {
    if (c)
      it->second.last = c;
    lock.unlock();
    if (publish_)
      publish_(params);
    lock.lock();
  }
  busy_ = false;   // only now: waitIdle promises the result is published
  return true;
}

void DocumentStore::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (checkOne(lock)) {
  }
  idle_.notify_all();
}

void DocumentStore::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
    if (stopping_)
      return;
    while (!stopping_ && checkOne(lock)) {
    }
    if (pending_.empty())
      idle_.notify_all();
  }
}

driver::DriverOptions DocumentStore::options() {
  std::lock_guard<std::mutex> lock(mutex_);
  return options_;
}

void DocumentStore::setOptions(driver::DriverOptions options, bool recheck) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    options_ = std::move(options);
    if (!recheck)
      return;
    for (auto &[uri, d] : docs_) {
      d.generation = nextGeneration_++;
      pending_.insert(uri);
    }
  }
  if (background_)
    wake_.notify_all();
  else
    drain();
}

std::shared_ptr<const Compilation> DocumentStore::current(const std::string &uri) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = docs_.find(uri);
  if (it == docs_.end())
    return nullptr;
  if (it->second.last && it->second.last->generation == it->second.generation)
    return it->second.last;
  if (it->second.text.size() > kMaxDocumentBytes)
    return nullptr;   // not checked: the queries answer at once, with nothing
  std::string path = it->second.path, text = it->second.text;
  uint64_t generation = it->second.generation;
  auto open = openBuffers();
  driver::DriverOptions options = options_;
  lock.unlock();
  return compile(path, text, open, options, generation);
}

std::vector<std::shared_ptr<const Compilation>> DocumentStore::allLatest() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<const Compilation>> out;
  for (const auto &[uri, d] : docs_)
    if (d.last)
      out.push_back(d.last);
  return out;
}

std::optional<std::string> DocumentStore::text(const std::string &uri) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = docs_.find(uri);
  if (it == docs_.end())
    return std::nullopt;
  return it->second.text;
}

void DocumentStore::add(const std::string &uri, const std::string &text, int64_t version) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Document &d = docs_[uri];
    d.path = path = uriToPath(uri);
    d.text = text;
    d.version = version;
    d.generation = nextGeneration_++;
  }
  changed(path);
}

void DocumentStore::update(const std::string &uri, const std::vector<TextDocumentContentChangeEvent> &changes,
                           int64_t version) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = docs_.find(uri);
    if (it == docs_.end())
      return;
    Document &d = it->second;
    for (const TextDocumentContentChangeEvent &c : changes) {
      if (!c.range) {
        d.text = c.text;
        continue;
      }
      size_t b = offsetAt(d.text, c.range->start), e = std::max(b, offsetAt(d.text, c.range->end));
      d.text.replace(b, e - b, c.text);
    }
    d.version = version;
    d.generation = nextGeneration_++;
    path = d.path;
  }
  changed(path);
}

void DocumentStore::remove(const std::string &uri) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = docs_.find(uri);
    if (it == docs_.end())
      return;
    path = it->second.path;
    docs_.erase(it);
    pending_.erase(uri);
  }
  if (publish_)
    publish_({uri, std::nullopt, {}});   // a closed document shows no problems
  changed(path);                         // its importers now read the disk
}

void DocumentStore::waitIdle() {
  if (!background_)
    return drain();
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return stopping_ || (pending_.empty() && !busy_); });
}

} // namespace dfl::lsp
