#include "lsp/Transport.h"

#include <chrono>
#include <ctime>
#include <iomanip>

namespace dfl::lsp {

Transport::Transport(std::istream &in, std::ostream &out, Options options)
    : in_(in), out_(out), options_(options), reader_(in) {
  // std::cin is tied to std::cout: every read would flush the output from this
  // thread, outside outMutex_, racing the worker's publishDiagnostics.
  in_.tie(nullptr);
}

void Transport::log(const std::string &line) {
  if (!options_.log)
    return;
  std::lock_guard<std::mutex> lock(outMutex_);
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  *options_.log << std::put_time(&tm, "%H:%M:%S") << "." << std::setw(3) << std::setfill('0') << ms << " " << line
                << std::endl;
}

bool Transport::readMessage(std::string &message) {
  message.clear();
  if (!options_.litTest) {
    // Framing errors are answered (JSON-RPC: ParseError, id null) and skipped.
    while (true) {
      MessageReader::Result r = reader_.next();
      if (r.kind == MessageReader::Kind::Message)
        return message = std::move(r.body), true;
      if (r.kind == MessageReader::Kind::End)
        return false;
      log("framing error: " + r.error);
      replyError(nullptr, ErrorCode::ParseError, "malformed message: " + r.error);
    }
  }
  // A message is every non-comment line up to a `// -----` line or the end.
  std::string line;
  bool any = false;
  while (std::getline(in_, line)) {
    if (line.rfind("//", 0) == 0) {
      if (line.rfind("// -----", 0) == 0 && any)
        return true;
      continue;
    }
    message += line + "\n";
    any |= line.find_first_not_of(" \t\r") != std::string::npos;
  }
  return any;
}

void Transport::send(const json &message) {
  std::string body = options_.litTest ? message.dump(2) : message.dump();
  {
    std::lock_guard<std::mutex> lock(outMutex_);
    out_ << "Content-Length: " << body.size() << "\r\n\r\n" << body;
    if (options_.litTest)
      out_ << "\n";
    out_.flush();
  }
  log("--> " + message.dump());
}

void Transport::notify(const std::string &method, const json &params) {
  send({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
}

void Transport::replyLater(const json &id, const json &result) {
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    if (!pending_.erase(id.dump()))
      return;
  }
  send({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

void Transport::replyErrorLater(const json &id, ErrorCode code, const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    if (!pending_.erase(id.dump()))
      return;
  }
  replyError(id, code, message);
}

void Transport::reportInternalError(const std::string &what) {
  std::string message = "dflc: internal error: " + what + " (please report it)";
  log(message);
  notify("window/showMessage", ShowMessageParams{MessageType::Error, message});
  notify("window/logMessage", ShowMessageParams{MessageType::Error, message});
}

void Transport::replyError(const json &id, ErrorCode code, const std::string &message) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", static_cast<int>(code)}, {"message", message}}}});
}

void Transport::handle(const std::string &text) {
  log("<-- " + text);
  // Checked before parsing: the parsed value's copies and destructor recurse.
  if (jsonDeeperThan(text, kMaxJsonDepth))
    return replyError(nullptr, ErrorCode::ParseError,
                      "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  json message = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded())
    return replyError(nullptr, ErrorCode::ParseError, "malformed JSON");
  if (!message.is_object() || !message.contains("method") || !message["method"].is_string()) {
    json id = message.is_object() && message.contains("id") ? message["id"] : json(nullptr);
    if (message.is_object() && (message.contains("result") || message.contains("error")))
      return;   // a reply to a request of ours: we send none, so nothing waits for it
    return replyError(id, ErrorCode::InvalidRequest, "not a JSON-RPC request or notification");
  }
  std::string method = message["method"];
  json params = message.contains("params") ? message["params"] : json::object();
  bool isRequest = message.contains("id");
  json id = isRequest ? message["id"] : json(nullptr);
  if (isRequest && !id.is_string() && !id.is_number_integer())
    return replyError(nullptr, ErrorCode::InvalidRequest, "a request id is a string or an integer");

  if (!isRequest) {
    if (method == "exit") {
      exit_ = true;
      return;
    }
    if (method == "initialized")
      return;
    if (method == "$/cancelRequest" && params.is_object() && params.contains("id")) {
      json cancelled = params["id"];
      CancelFlag flag;
      {
        std::lock_guard<std::mutex> lock(pendingMutex_);
        if (auto it = pending_.find(cancelled.dump()); it != pending_.end()) {
          flag = it->second;
          pending_.erase(it);
        }
      }
      // Requests answered in order on this loop are long answered; only async ones can be cancelled.
      if (flag) {
        *flag = true;
        replyError(cancelled, ErrorCode::RequestCancelled, "request cancelled");
      }
      return;
    }
    auto it = notifications_.find(method);
    // Unknown notifications are dropped, as the protocol asks (including `$/` ones).
    if (it == notifications_.end() || !initialized_ || shutdown_)
      return;
    try {
      it->second(params);
    } catch (const json::exception &e) {
      log(std::string("invalid params for ") + method + ": " + e.what());
    } catch (const std::exception &e) {
      // A notification has no reply to carry the error; the server goes on.
      reportInternalError(method + ": " + e.what());
    } catch (...) {
      reportInternalError(method + ": an exception that is not a std::exception");
    }
    return;
  }

  if (method != "initialize" && !initialized_)
    return replyError(id, ErrorCode::ServerNotInitialized, "'" + method + "' before 'initialize'");
  if (method == "initialize" && initialized_)
    return replyError(id, ErrorCode::InvalidRequest, "'initialize' was already received");
  if (shutdown_)
    return replyError(id, ErrorCode::InvalidRequest, "'" + method + "' after 'shutdown'");
  if (method == "shutdown") {
    shutdown_ = true;
    if (onShutdown_)
      onShutdown_();
    return send({{"jsonrpc", "2.0"}, {"id", id}, {"result", nullptr}});
  }
  if (auto async = asyncMethods_.find(method); async != asyncMethods_.end()) {
    auto flag = std::make_shared<std::atomic<bool>>(false);
    {
      std::lock_guard<std::mutex> lock(pendingMutex_);
      pending_[id.dump()] = flag;
    }
    std::string error;
    ErrorCode code = ErrorCode::InternalError;
    try {
      async->second(params, id, flag);
      return;
    } catch (const json::exception &e) {
      code = ErrorCode::InvalidParams;
      error = std::string("invalid params for ") + method + ": " + e.what();
    } catch (const std::exception &e) {
      error = method + ": " + e.what();
    } catch (...) {
      error = method + ": an exception that is not a std::exception";
    }
    if (code == ErrorCode::InternalError) {
      reportInternalError(error);
      error = "internal error: " + error;
    }
    {
      std::lock_guard<std::mutex> lock(pendingMutex_);
      if (!pending_.erase(id.dump()))
        return;   // answered before it threw
    }
    return replyError(id, code, error);
  }
  auto it = methods_.find(method);
  if (it == methods_.end())
    return replyError(id, ErrorCode::MethodNotFound, "method not found: " + method);
  json result;
  try {
    result = it->second(params);
  } catch (const json::exception &e) {
    return replyError(id, ErrorCode::InvalidParams, std::string("invalid params for ") + method + ": " + e.what());
  } catch (const LspError &e) {
    return replyError(id, e.code, e.message);
  } catch (const std::exception &e) {
    reportInternalError(method + ": " + e.what());
    return replyError(id, ErrorCode::InternalError, "internal error: " + method + ": " + e.what());
  } catch (...) {
    reportInternalError(method + ": an exception that is not a std::exception");
    return replyError(id, ErrorCode::InternalError, "internal error: " + method);
  }
  if (method == "initialize")
    initialized_ = true;
  send({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

int Transport::run() {
  std::string message;
  while (!exit_ && readMessage(message))
    handle(message);
  std::lock_guard<std::mutex> lock(pendingMutex_);
  for (auto &[id, flag] : pending_)
    *flag = true;
  pending_.clear();
  return shutdown_ ? 0 : 1;
}

} // namespace dfl::lsp
