// Requests answered off the main loop (the code actions, whose solver may run
// for seconds): one thread each, joined once finished (at the next start) or
// all at once (waitIdle, shutdown). Without `background` a task runs on the
// caller's thread before start returns.
#pragma once

#include <atomic>
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

  void start(std::function<void()> task);
  /// Blocks until every task started so far has finished.
  void joinAll();

private:
  struct Task {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  bool background_;
  std::mutex mutex_;
  std::vector<Task> tasks_;
};

} // namespace dfl::lsp
