// Requests answered off the main loop (the code actions, whose solver may run
// for seconds): one thread each, joined once finished (at the next start) or
// all at once (joinAll, waitFinished), or abandoned (exit: the threads still
// running are detached, so `exit` never waits behind a solve; what they use
// must outlive them, see DflServer.cpp). Without `background` a task runs on
// the caller's thread before start returns.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dfl::lsp {

class BackgroundTasks {
public:
  explicit BackgroundTasks(bool background) : background_(background) {}
  ~BackgroundTasks() { joinAll(); }
  BackgroundTasks(const BackgroundTasks &) = delete;
  BackgroundTasks &operator=(const BackgroundTasks &) = delete;

  /// Runs `task` (nothing once abandoned).
  void start(std::function<void()> task);
  /// Blocks until every task started so far has finished.
  void joinAll();
  /// Blocks until every task started so far has finished or `timeout` passed;
  /// true if they all finished.
  bool waitFinished(std::chrono::milliseconds timeout);
  /// Joins the finished tasks and detaches the others; start does nothing after.
  void abandon();

private:
  struct Task {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  bool background_;
  bool abandoned_ = false;
  // Shared with the threads: a detached one may finish after this object is gone.
  struct Shared {
    std::mutex mutex;   // guards tasks_ too
    std::condition_variable finished;
  };
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::vector<Task> tasks_;
};

} // namespace dfl::lsp
