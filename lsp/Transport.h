// JSON-RPC 2.0 over a pair of streams (stdio in `dflc lsp`), with LSP's
// `Content-Length` framing (read by MessageReader, within its limits) — the
// only code in dflc that reads or writes the protocol streams — and the table
// of method handlers.
//
// Private to lsp/ (it includes nlohmann/json): LSPServer registers typed
// handlers; params are decoded before a handler runs, so a handler never sees
// JSON. Errors: a framing error (MessageReader) or JSON nested deeper than
// kMaxJsonDepth → ParseError with id null, and the server reads on;
// malformed JSON → ParseError; a message that is not a request
// or notification → InvalidRequest; unknown method → MethodNotFound; params
// that do not decode → InvalidParams; a request before `initialize` →
// ServerNotInitialized; an exception from a handler (our bug) → InternalError,
// reported to the user as well (reportInternalError). `notify` may be called
// from any thread.
#pragma once

#include "lsp/MessageReader.h"
#include "lsp/ProtocolJson.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <istream>
#include <map>
#include <mutex>
#include <ostream>
#include <string>

namespace dfl::lsp {

/// A result as JSON; an absent optional is `null`.
template <class T> json toJson(const T &v) { return json(v); }
template <class T> json toJson(const std::optional<T> &v) { return v ? json(*v) : json(nullptr); }

template <class R> class Reply;
/// Set when the client cancels the request ($/cancelRequest).
using CancelFlag = std::shared_ptr<std::atomic<bool>>;

/// Thrown by a request handler to reply with a JSON-RPC error.
struct LspError {
  ErrorCode code;
  std::string message;
};

class Transport {
public:
  struct Options {
    /// MLIR's -lit-test: messages separated by `// -----` lines, no headers
    /// needed, other `//` lines skipped; replies pretty-printed (keys sorted).
    bool litTest = false;
    std::ostream *log = nullptr;
  };
  Transport(std::istream &in, std::ostream &out, Options options);

  template <class P, class R, class T> void method(const std::string &name, T *self, R (T::*fn)(const P &)) {
    methods_[name] = [self, fn](const json &params) -> json { return toJson((self->*fn)(params.get<P>())); };
  }
  /// A request answered later, from any thread, through `Reply`. A
  /// `$/cancelRequest` for it replies RequestCancelled at once, raises its
  /// CancelFlag and drops the late answer.
  template <class P, class R, class T>
  void asyncMethod(const std::string &name, T *self, void (T::*fn)(const P &, Reply<R>)) {
    asyncMethods_[name] = [this, self, fn](const json &params, const json &id, CancelFlag cancelled) {
      (self->*fn)(params.get<P>(), Reply<R>(this, id, std::move(cancelled)));
    };
  }
  template <class P, class T> void notification(const std::string &name, T *self, void (T::*fn)(const P &)) {
    notifications_[name] = [self, fn](const json &params) { (self->*fn)(params.get<P>()); };
  }

  /// Runs before `shutdown` is answered (the server finishes what it was asked).
  void onShutdown(std::function<void()> hook) { onShutdown_ = std::move(hook); }

  void notify(const std::string &method, const json &params);
  /// The answer to an async request; dropped if it was cancelled or answered.
  void replyLater(const json &id, const json &result);
  /// An async request's error reply (InternalError); dropped likewise.
  void replyErrorLater(const json &id, ErrorCode code, const std::string &message);
  /// Our bug, said to the user: window/showMessage (Error) and
  /// window/logMessage, and the --log file. Never a cancellation.
  void reportInternalError(const std::string &what);
  void log(const std::string &line);

  /// Reads and dispatches messages until `exit` or the end of the input, then
  /// raises the CancelFlag of every async request not yet answered (nothing
  /// answers them any more). Returns the process exit code: 0 if `shutdown`
  /// came before `exit`, else 1.
  int run();

private:
  bool readMessage(std::string &message);
  void handle(const std::string &message);
  void send(const json &message);
  void replyError(const json &id, ErrorCode code, const std::string &message);

  std::istream &in_;
  std::ostream &out_;
  Options options_;
  MessageReader reader_;
  std::mutex outMutex_;
  std::map<std::string, std::function<json(const json &)>> methods_;
  std::map<std::string, std::function<void(const json &)>> notifications_;
  std::map<std::string, std::function<void(const json &, const json &, CancelFlag)>> asyncMethods_;
  std::mutex pendingMutex_;
  std::map<std::string, CancelFlag> pending_;   // async requests not yet answered, by id
  std::function<void()> onShutdown_;
  bool initialized_ = false, shutdown_ = false, exit_ = false;
};

template <class R> class Reply {
public:
  Reply(Transport *transport, json id, CancelFlag cancelled)
      : transport_(transport), id_(std::move(id)), cancelled_(std::move(cancelled)) {}
  void operator()(const R &result) const { transport_->replyLater(id_, toJson(result)); }
  /// An internal error while answering: reported, and the request's reply is InternalError (-32603).
  void fail(const std::string &what) const {
    transport_->reportInternalError(what);
    transport_->replyErrorLater(id_, ErrorCode::InternalError, "internal error: " + what);
  }
  const CancelFlag &cancelled() const { return cancelled_; }

private:
  Transport *transport_;
  json id_;
  CancelFlag cancelled_;
};

} // namespace dfl::lsp
