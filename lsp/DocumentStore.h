// The open documents, their versions and the checks that keep their
// diagnostics current. With `background` checks run on a worker thread: an
// edit returns at once, a burst of edits coalesces into one check of the
// latest text (the pending set holds each document once), and a result is
// published only if its document has not changed since (each text has a
// generation). Editing a file re-checks every open document that read it.
// Without `background` (tests, `--lit-test`) every check runs on the caller's
// thread before the edit returns.
#pragma once

#include "lsp/Protocol.h"

#include "driver/DriverOptions.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dfl::lsp {

struct Compilation;

class DocumentStore {
public:
  /// A document larger than this is not checked (docs/lsp.md, "Limits"): it
  /// gets one diagnostic saying so, and the queries answer as for a document
  /// that does not parse.
  static constexpr size_t kMaxDocumentBytes = size_t(1) << 20;

  /// `options`: how every document is checked (the driver's; files and open
  /// buffers are set per check).
  /// `internalError` (may be null): our bug in a check, said besides the diagnostic.
  DocumentStore(driver::DriverOptions options, bool background,
                std::function<void(const PublishDiagnosticsParams &)> publish,
                std::function<void(const std::string &)> internalError = nullptr);
  ~DocumentStore();
  DocumentStore(const DocumentStore &) = delete;
  DocumentStore &operator=(const DocumentStore &) = delete;

  void add(const std::string &uri, const std::string &text, int64_t version);
  void update(const std::string &uri, const std::vector<TextDocumentContentChangeEvent> &changes, int64_t version);
  void remove(const std::string &uri);
  /// The file at `path` changed (edited, saved, or changed on disk): re-check it and what read it.
  void changed(const std::string &path);

  /// The document's current text; nullopt if it is not open.
  std::optional<std::string> text(const std::string &uri);
  /// The compilation of the document's current text (checked now if the last
  /// check is stale); null if it is not open.
  std::shared_ptr<const Compilation> current(const std::string &uri);
  /// The last compilation of every open document that has one.
  std::vector<std::shared_ptr<const Compilation>> allLatest();

  /// The driver options the checks use.
  driver::DriverOptions options();
  /// Replaces them; if `recheck`, every open document is checked again (its
  /// last result is stale).
  void setOptions(driver::DriverOptions options, bool recheck);

  /// Blocks until every scheduled check has been published.
  void waitIdle();
  /// Exit: the worker checks nothing more after the check it is running.
  void stop();

private:
  struct Document {
    std::string path, text;
    int64_t version = 0;
    uint64_t generation = 0;
    std::shared_ptr<const Compilation> last;
  };

  std::map<std::string, std::string> openBuffers() const;
  void scheduleDependents(const std::string &path);
  bool checkOne(std::unique_lock<std::mutex> &lock);
  void drain();
  void run();

  driver::DriverOptions options_;
  bool background_;
  std::function<void(const PublishDiagnosticsParams &)> publish_;
  std::function<void(const std::string &)> internalError_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::map<std::string, Document> docs_;   // by URI
  std::set<std::string> pending_;          // URIs to check; a set, so bursts coalesce
  uint64_t nextGeneration_ = 1;
  bool busy_ = false, stopping_ = false;
  std::thread worker_;
};

} // namespace dfl::lsp
