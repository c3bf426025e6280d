#include "lsp/BackgroundTasks.h"

namespace dfl::lsp {

void BackgroundTasks::start(std::function<void()> task) {
  if (!background_)
    return task();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = tasks_.begin(); it != tasks_.end();)
    if (*it->finished) {
      it->thread.join();
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  tasks_.push_back({std::thread([task = std::move(task), finished] {
                      task();
                      *finished = true;
                    }),
                    finished});
}

void BackgroundTasks::joinAll() {
  std::vector<Task> running;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running.swap(tasks_);
  }
  for (Task &t : running)
    t.thread.join();
}

} // namespace dfl::lsp
